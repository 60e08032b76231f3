/**
 * Liveness, readiness and graceful drain of one HTTP server of the layer (the gateway, a subgraph
 * server), so that every process answers the same way to an orchestrator (compose, Kubernetes):
 *
 * - `/healthz` (liveness): 200 while the process runs its event loop; never checks anything else
 *   (a Redis outage must not get every replica restarted).
 * - `/readyz` (readiness): 200 with each check's outcome when every check passes (subgraphs
 *   reachable, Redis answering PING when configured), else 503 with the same details; 503 at once
 *   while draining.
 * - `drain`: on SIGTERM, stop accepting connections, answer `/readyz` 503, let in-flight requests
 *   finish, close every graphql-ws socket with 1001 "Going away" and end every SSE stream, WITHOUT
 *   `complete`: standard clients (graphql-ws with retries, EventSource, graphql-sse) reconnect on a
 *   close, to another replica, and resubscribe (getting the latest state first), whereas `complete`
 *   would end the subscription for good. All within a timeout after which whatever is left is cut.
 */
import type { Server, ServerResponse } from 'node:http';
import { request } from 'undici';
import type { WebSocket } from 'ws';
import { closeRedis, connectRedis } from './redis.ts';
import { log } from './log.ts';
import { SETTINGS_SCHEMA, settingsOf, type SettingsSource } from './settings.ts';

/** One condition of readiness; `check` throws (or rejects) when it does not hold. */
export interface ReadinessCheck {
  name: string;
  check(signal: AbortSignal): Promise<void>;
  /** Releases what the check holds (a connection). */
  close?(): Promise<void>;
}

/** How long one readiness check may take before it counts as failed. */
export const READINESS_CHECK_TIMEOUT_MS = 2_000;

/**
 * Default bound of a graceful shutdown (`SHUTDOWN_TIMEOUT_MS`): above the layer's longest wait in a
 * request (a download's 60 s upstream timeout; a slow purchase's 20 s POST, a callback's 30 s wait),
 * so that a request the layer still answers is not cut by the drain.
 */
export const DEFAULT_SHUTDOWN_TIMEOUT_MS: number = SETTINGS_SCHEMA.SHUTDOWN_TIMEOUT_MS.default;

/** `SHUTDOWN_TIMEOUT_MS` of the settings (`DEFAULT_SHUTDOWN_TIMEOUT_MS` is its default in `platform/settings.ts`). */
export function shutdownTimeoutFromEnv(env: SettingsSource): number {
  return settingsOf(env).SHUTDOWN_TIMEOUT_MS;
}

/** Ready when `url` answers 2xx (a subgraph server's `/healthz`). */
export function httpCheck(name: string, url: string): ReadinessCheck {
  return {
    name,
    async check(signal) {
      const res = await request(url, { signal, headersTimeout: READINESS_CHECK_TIMEOUT_MS, bodyTimeout: READINESS_CHECK_TIMEOUT_MS });
      await res.body.dump();
      if (res.statusCode < 200 || res.statusCode >= 300) throw new Error(`answered ${res.statusCode}`);
    },
  };
}

/** Ready when Redis at `url` answers PING (its own connection, opened at once, closed with `close`). */
export function redisCheck(url: string): ReadinessCheck {
  // Reconnection problems are what this check reports; no log line of its own.
  const redis = connectRedis(url, { name: 'readyz', maxRetriesPerRequest: 1, commandTimeoutMs: READINESS_CHECK_TIMEOUT_MS, log: () => undefined });
  return {
    name: 'redis',
    async check() {
      const pong: string = await redis.ping();
      if (pong !== 'PONG') throw new Error(`answered ${pong}`);
    },
    close: () => closeRedis(redis),
  };
}

/** A short reason that names no address, user or password (the error's code when it has one). */
function reasonOf(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'string') return code;
  const cause = (err as { cause?: { code?: unknown } } | null)?.cause?.code;
  if (typeof cause === 'string') return cause;
  const message = err instanceof Error ? err.message : String(err);
  return /^answered \w+$|timed? ?out|aborted/i.test(message) ? message : 'unreachable';
}

/** Runs every check in parallel, each bounded by `READINESS_CHECK_TIMEOUT_MS`. */
export async function readiness(checks: readonly ReadinessCheck[]): Promise<{ ready: boolean; checks: Record<string, string> }> {
  const outcomes = await Promise.all(
    checks.map(async (c): Promise<[string, string]> => {
      const signal = AbortSignal.timeout(READINESS_CHECK_TIMEOUT_MS);
      try {
        await Promise.race([c.check(signal), new Promise<never>((_, reject) => signal.addEventListener('abort', () => reject(new Error('timed out')), { once: true }))]);
        return [c.name, 'ok'];
      } catch (err) {
        return [c.name, reasonOf(err)];
      }
    }),
  );
  return { ready: outcomes.every(([, o]) => o === 'ok'), checks: Object.fromEntries(outcomes) };
}

/** What `drain` needs of a graphql-ws connection's context (`useServer` over `ws`). */
interface WsContext {
  readonly extra: { readonly socket: WebSocket };
}

/** How a drain ended: `clean` when everything finished in time, else what was still open. */
export interface DrainResult {
  clean: boolean;
  /** HTTP requests still unanswered (SSE streams included) when the time was up. */
  requests: number;
  /** graphql-ws sockets still open when the time was up. */
  sockets: number;
}

/** Whether the headers sent for `res` say `text/event-stream` (an SSE subscription). */
function isEventStream(res: ServerResponse): boolean {
  const type = res.getHeader('content-type');
  if (type !== undefined) return /^text\/event-stream/i.test(String(type));
  // Headers given to writeHead as an object (@whatwg-node/server) are only in the header block sent.
  const sent = (res as unknown as { _header?: string | null })._header;
  return typeof sent === 'string' && /\r\ncontent-type:\s*text\/event-stream/i.test(sent);
}

/**
 * The life of one HTTP server: `track` every request, `answer` `/healthz` and `/readyz`, remember
 * graphql-ws connections (`wsConnected`/`wsClosed` from `useServer`'s `onConnect`/`onClose`), and
 * `drain` on shutdown.
 */
export class ServerLife {
  #draining = false;
  readonly #responses = new Set<ServerResponse>();
  readonly #ws = new Set<WsContext>();
  #server: Server | null = null;

  /** `name` labels the drain's warning (`gateway`, `subgraph`, `emulator`). */
  constructor(
    private readonly checks: readonly ReadinessCheck[] = [],
    private readonly name = 'server',
  ) {}

  get draining(): boolean {
    return this.#draining;
  }

  /**
   * Remembers a request until its answer is finished or abandoned: SSE streams are ended on drain,
   * and once draining a keep-alive connection is closed as soon as its last answer went out.
   */
  track(res: ServerResponse): void {
    this.#responses.add(res);
    res.once('close', () => {
      this.#responses.delete(res);
      if (this.#draining) this.#server?.closeIdleConnections();
    });
  }

  /** Answers `/healthz` and `/readyz`; true when `path` was one of them. */
  async answer(path: string, res: ServerResponse): Promise<boolean> {
    if (path === '/healthz') {
      res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' }).end('{"ok":true}');
      return true;
    }
    if (path !== '/readyz') return false;
    const body = this.#draining ? { ready: false, draining: true, checks: {} } : { ...(await readiness(this.checks)), draining: false };
    res.writeHead(body.ready ? 200 : 503, { 'content-type': 'application/json', 'cache-control': 'no-store' }).end(JSON.stringify(body));
    return true;
  }

  /** `useServer`'s `onConnect`: a connection that `drain` closes. */
  wsConnected(ctx: WsContext): void {
    this.#ws.add(ctx);
  }

  /** `useServer`'s `onClose`. */
  wsClosed(ctx: WsContext): void {
    this.#ws.delete(ctx);
  }

  /**
   * Graceful stop of `server`, bounded by `timeoutMs`: `/readyz` answers 503 from now on, no new
   * connection is accepted, each graphql-ws socket is closed with 1001 and each SSE stream is ended
   * (no `complete`: clients reconnect elsewhere and resubscribe), in-flight requests finish and their
   * keep-alive connections close. Resolves once the server has no connection left (`server.close`)
   * or the time is up: then `clean` is false, a warning says what was left, and the caller closes
   * it by force.
   */
  async drain(server: Server, timeoutMs: number): Promise<DrainResult> {
    this.#draining = true;
    this.#server = server;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeIdleConnections();
    for (const ctx of this.#ws) {
      const socket = ctx.extra.socket;
      // graphql-ws's server ends the connection's subscriptions (their sources' `return`) on close.
      if (socket.readyState === socket.OPEN) socket.close(1001, 'Going away');
    }
    for (const res of this.#responses) if (res.headersSent && isEventStream(res)) res.end();
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), timeoutMs);
    });
    const clean = await Promise.race([closed.then(() => true as const), timeout]);
    clearTimeout(timer);
    const result = { clean, requests: this.#responses.size, sockets: this.#ws.size };
    if (!clean)
      log.warn(result, `[${this.name}] drain cut short after ${timeoutMs} ms (SHUTDOWN_TIMEOUT_MS): ${result.requests} requests and ${result.sockets} WebSocket connections left`);
    return result;
  }
}
