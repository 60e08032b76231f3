/**
 * The separate services as child processes (`services/emulator.ts`, `services/subgraph.ts`,
 * `services/gateway.ts`), for the tests (services, restart, scale-out) and the scale-out bench:
 * spawn on free loopback ports, wait for the line saying where each listens, kill (SIGTERM or
 * SIGKILL), restart on the same port; plus GraphQL over HTTP and the emulator's control API.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { request } from 'undici';
import type { CostSummary } from '../subgraphs/upstream/cost.ts';
import { SUBGRAPH_NAMES } from '../subgraphs/index.ts';
import { subgraphUrlVariable } from './build.ts';

const ROOT = new URL('..', import.meta.url);

export interface Service {
  name: string;
  proc: ChildProcess;
  url: string;
  output(): string;
  /** Stops the process (SIGKILL: as a crash) and waits for it to exit. */
  kill(signal?: NodeJS.Signals): Promise<void>;
}

/**
 * The environment every service gets: none of the caller's layer settings leak in. Its state is in
 * memory (`STORE=memory`) unless `extra` says where to keep it (`REDIS_URL`, `DATA_DIR` or `STORE`).
 */
export function baseEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const k of Object.keys(env))
    if (/^(OPENAPI_|SUBGRAPH_|EMULATOR_|RISK_|PUBLIC_URL$|LAYER_SECRET$|PORT$|HOST$|REDIS_URL$|REDIS_PREFIX$|STORE$|DATA_DIR$|CORS_ORIGINS$|GATEWAY_LOG_LEVEL$)/.test(k))
      delete env[k];
  const placed = extra.REDIS_URL !== undefined || extra.DATA_DIR !== undefined || extra.STORE !== undefined;
  return { ...env, OPENAPI_ENV: 'emulator', ...(placed ? {} : { STORE: 'memory' }), ...extra };
}

/** A free loopback port (listen on 0, read it, close). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const READY: Record<string, RegExp> = {
  emulator: /emulator listening on (http:\/\/127\.0\.0\.1:\d+)\n/,
  gateway: /gateway listening on (http:\/\/127\.0\.0\.1:\d+)\n/,
};

export interface SpawnOptions {
  /** Node options after `--import tsx` (e.g. another `--import` of a module to preload). */
  nodeArgs?: string[];
  /**
   * Run the built JavaScript of this directory (`npm run build`'s `dist/`, as the container image
   * does: `node dist/services/<script>.js`) instead of the sources through tsx.
   */
  dist?: string;
}

/**
 * Spawns `services/<script>.ts` and resolves once it prints where it listens: `url` is the
 * service's origin (a subgraph's GraphQL endpoint is `<url>/<name>/graphql`).
 */
export async function spawnService(name: string, script: 'emulator' | 'gateway' | 'subgraph', args: string[], env: NodeJS.ProcessEnv, opts: SpawnOptions = {}): Promise<Service> {
  const ready = script === 'subgraph' ? new RegExp(`\\n  ${args[0]}: (http://127\\.0\\.0\\.1:\\d+)/${args[0]}/graphql `) : READY[script];
  const entry = opts.dist ? [...(opts.nodeArgs ?? []), `${opts.dist}/services/${script}.js`] : ['--import', 'tsx', ...(opts.nodeArgs ?? []), `services/${script}.ts`];
  return spawnNode(name, [...entry, ...args], env, ready);
}

/**
 * Runs `node <nodeArgs>` in the project's folder and resolves once its output matches `ready`:
 * `url` is the match's first group; `output()` all it printed so far (stdout and stderr).
 */
export async function spawnNode(name: string, nodeArgs: string[], env: NodeJS.ProcessEnv, ready: RegExp): Promise<Service> {
  const proc = spawn(process.execPath, nodeArgs, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  proc.stderr.on('data', (chunk: Buffer) => {
    out += chunk.toString();
  });
  const url = await new Promise<string>((resolve, reject) => {
    proc.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const m = ready.exec(out);
      if (m) resolve(m[1]);
    });
    // 'close', not 'exit': by then its output has been read to the end (the reason it gives).
    proc.once('close', (code) => reject(new Error(`${name} exited with ${code} before it was ready:\n${out}`)));
  });
  return {
    name,
    proc,
    url,
    output: () => out,
    async kill(signal: NodeJS.Signals = 'SIGTERM') {
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      const exited = once(proc, 'exit');
      proc.kill(signal);
      await exited;
    },
  };
}

export interface GraphQLResponse<T = Record<string, unknown>> {
  data?: T | null;
  errors?: Array<{ message: string; path?: Array<string | number>; extensions?: Record<string, unknown> & { code?: string } }>;
  extensions?: {
    cost?: Partial<CostSummary> &
      Pick<CostSummary, 'upstreamCalls' | 'cacheHits' | 'dedupHits' | 'euro' | 'calls'> & {
        estimate?: { euro: number; breakdown: Array<{ field: string; euro: number }> };
        executed?: boolean;
      };
    warnings?: Array<{ code: string; message: string }>;
  };
}

/** POSTs a GraphQL operation to `<gatewayUrl>/graphql`. */
export async function gqlAt<T = Record<string, unknown>>(
  gatewayUrl: string,
  query: string,
  variables?: Record<string, unknown>,
  headers: Record<string, string> = {},
): Promise<GraphQLResponse<T>> {
  const res = await request(`${gatewayUrl}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json, application/json', ...headers },
    body: JSON.stringify({ query, variables }),
  });
  return (await res.body.json()) as GraphQLResponse<T>;
}

/** The emulator's control API. */
export async function emulatorControl(emulatorUrl: string, method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown): Promise<unknown> {
  const res = await request(`${emulatorUrl}/_emulator/${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.body.text();
  if (res.statusCode >= 400) throw new Error(`emulator ${path}: ${res.statusCode} ${text}`);
  return text ? (JSON.parse(text) as unknown) : null;
}

/** Polls `probe` until it gives a value (a safety limit, not a synchronisation by sleeping). */
export async function until<T>(what: string, probe: () => Promise<T | undefined>, ms = 10_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * The subgraphs of the supergraph but `served` (a gateway needs the URL of every one): tests and
 * benches that put some subgraphs in processes of their own serve the rest in one more process.
 */
export function otherSubgraphs(served: readonly string[]): string[] {
  return SUBGRAPH_NAMES.filter((n) => !served.includes(n));
}

/** `SUBGRAPH_<NAME>_URL` for the subgraphs a subgraph process at `origin` serves. */
export function subgraphUrlsEnv(origin: string, names: readonly string[]): Record<string, string> {
  return Object.fromEntries(names.map((n) => [subgraphUrlVariable(n), `${origin}/${n}/graphql`]));
}
