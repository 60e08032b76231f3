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
 *   finish, complete every graphql-ws subscription (the client receives `complete`, then the socket
 *   closes with 1001 "Going away" so that it reconnects to another replica), all within a timeout
 *   after which whatever is left is cut.
 */
import type { Server, ServerResponse } from 'node:http';
import { request } from 'undici';
import { MessageType, stringifyMessage } from 'graphql-ws';
import type { WebSocket } from 'ws';
import { closeRedis, connectRedis } from './redis.ts';

/** One condition of readiness; `check` throws (or rejects) when it does not hold. */
export interface ReadinessCheck {
  name: string;
  check(signal: AbortSignal): Promise<void>;
  /** Releases what the check holds (a connection). */
  close?(): Promise<void>;
}

/** How long one readiness check may take before it counts as failed. */
export const READINESS_CHECK_TIMEOUT_MS = 2_000;

/** Default bound of a graceful shutdown (`SHUTDOWN_TIMEOUT_MS`). */
export const DEFAULT_SHUTDOWN_TIMEOUT_MS = 10_000;

/** `SHUTDOWN_TIMEOUT_MS` of `env`: a non-negative integer, else the default. */
export function shutdownTimeoutFromEnv(env: NodeJS.ProcessEnv): number {
  const ms = Number(env.SHUTDOWN_TIMEOUT_MS);
  return env.SHUTDOWN_TIMEOUT_MS?.trim() && Number.isInteger(ms) && ms >= 0 ? ms : DEFAULT_SHUTDOWN_TIMEOUT_MS;
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
      const pong = await redis.ping();
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
        await Promise.race([
          c.check(signal),
          new Promise<never>((_, reject) => signal.addEventListener('abort', () => reject(new Error('timed out')), { once: true })),
        ]);
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
  readonly subscriptions: Record<string, unknown>;
  readonly extra: { readonly socket: WebSocket };
}

/**
 * The life of one HTTP server: `track` every request, `answer` `/healthz` and `/readyz`, remember
 * graphql-ws connections (`wsConnected`/`wsClosed` from `useServer`'s `onConnect`/`onClose`), and
 * `drain` on shutdown.
 */
export class ServerLife {
  #draining = false;
  #inFlight = 0;
  #idle = new Set<() => void>();
  readonly #ws = new Set<WsContext>();
  #server: Server | null = null;

  constructor(private readonly checks: readonly ReadinessCheck[] = []) {}

  get draining(): boolean {
    return this.#draining;
  }

  /** Counts a request as in flight until its answer is finished or abandoned. */
  track(res: ServerResponse): void {
    this.#inFlight++;
    res.once('close', () => {
      this.#inFlight--;
      // Once draining, a keep-alive connection is closed as soon as its last answer went out.
      if (this.#draining) this.#server?.closeIdleConnections();
      if (this.#inFlight === 0) for (const done of this.#idle) done();
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

  /** `useServer`'s `onConnect`: a connection whose subscriptions `drain` completes. */
  wsConnected(ctx: WsContext): void {
    this.#ws.add(ctx);
  }

  /** `useServer`'s `onClose`. */
  wsClosed(ctx: WsContext): void {
    this.#ws.delete(ctx);
  }

  /**
   * Graceful stop of `server`, bounded by `timeoutMs`: `/readyz` answers 503 from now on, no new
   * connection is accepted, each graphql-ws subscription gets `complete` and each socket is closed
   * with 1001, in-flight requests finish. Resolves when all that is done or the time is up
   * (`clean` false: the caller then closes what is left by force).
   */
  async drain(server: Server, timeoutMs: number): Promise<{ clean: boolean }> {
    this.#draining = true;
    this.#server = server;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeIdleConnections();
    const sockets = [...this.#ws].map((ctx) => this.#completeAndClose(ctx));
    const requests = new Promise<void>((resolve) => {
      if (this.#inFlight === 0) resolve();
      else this.#idle.add(resolve);
    });
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), timeoutMs);
    });
    const clean = await Promise.race([Promise.all([...sockets, requests, closed]).then(() => true as const), timeout]);
    clearTimeout(timer);
    return { clean };
  }

  /** Sends `complete` for every subscription of a connection, then closes it with 1001. */
  async #completeAndClose(ctx: WsContext): Promise<void> {
    const socket = ctx.extra.socket;
    for (const [id, subscription] of Object.entries(ctx.subscriptions)) {
      // Forgotten first: the server then sends no second `complete` when the source ends.
      delete ctx.subscriptions[id];
      if (socket.readyState === socket.OPEN) socket.send(stringifyMessage({ id, type: MessageType.Complete }));
      const source = subscription as { return?: () => Promise<unknown> } | null;
      void source?.return?.().catch(() => undefined);
    }
    if (socket.readyState === socket.CLOSED) return;
    const gone = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    socket.close(1001, 'Going away');
    await gone;
  }
}
