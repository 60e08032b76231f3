/**
 * End-to-end harness: starts the real stack (emulator, subgraphs, gateway) on free loopback ports
 * and talks to it only over HTTP, like a client.
 */
import { request } from 'undici';
import { startStack, type Stack, type StackOptions } from '../../stack.ts';
import { emulatorClock, type EmulatorClock } from './clock.ts';

export interface GraphQLResponse<T = Record<string, unknown>> {
  data?: T | null;
  errors?: Array<{ message: string; path?: Array<string | number>; extensions?: Record<string, unknown> & { code?: string } }>;
  extensions?: {
    cost?: {
      upstreamCalls: number;
      cacheHits: number;
      dedupHits: number;
      staleHits?: number;
      euro: number;
      atRisk?: number;
      estimate?: { euro: number; breakdown: Array<{ field: string; euro: number }> };
      executed?: boolean;
      /** The operation's id: its money at risk is looked up by it once settled (`operationCost`). */
      operationId?: string;
      budget?: Record<'operation' | 'day', { limit: number | null; committed: number; remaining: number | null }>;
      calls: Array<{ path: string; source: string; euro: number; status: number; atRisk?: number }>;
    };
    warnings?: Array<{ code: string; message: string }>;
  };
}

export interface EmulatorCall {
  method: string;
  path: string;
  area: string;
  status: number;
  price: number;
}

export interface TestStack {
  stack: Stack;
  url: string;
  gql<T = Record<string, unknown>>(query: string, variables?: Record<string, unknown>, headers?: Record<string, string>): Promise<GraphQLResponse<T>>;
  /** Calls the emulator received (optionally of one area). */
  calls(area?: string): Promise<EmulatorCall[]>;
  clearCalls(): Promise<void>;
  /** A cold start for the next test: no upstream answer cached, no emulator call logged. */
  cold(): Promise<void>;
  /** POST to the emulator's control API, e.g. control('faults', {...}). */
  control(path: string, body?: unknown): Promise<unknown>;
  /** A new emulator account (every scope) with `credit` euro in its wallet; returns its token. */
  createToken(credit: number): Promise<string>;
  /** Euro left in an account's wallet. */
  credit(token: string): Promise<number>;
  /** The embedded emulator's clock (`support/clock.ts`): stop it, move it, let it run. */
  clock: EmulatorClock;
  close(): Promise<void>;
}

export async function startTestStack(env: NodeJS.ProcessEnv = {}, opts: Omit<StackOptions, 'env' | 'port'> = {}): Promise<TestStack> {
  const stack = await startStack({ env: { OPENAPI_ENV: 'emulator', ...env }, port: 0, ...opts });
  const emu = stack.emulatorUrl;
  const emuJson = async (method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown): Promise<unknown> => {
    if (!emu) throw new Error('no embedded emulator');
    const res = await request(`${emu}/_emulator/${path}`, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.body.text();
    if (res.statusCode >= 400) throw new Error(`emulator control ${path}: ${res.statusCode} ${text}`);
    return text ? (JSON.parse(text) as unknown) : null;
  };
  return {
    stack,
    url: stack.gateway.url,
    async gql<T>(query: string, variables?: Record<string, unknown>, headers: Record<string, string> = {}) {
      const res = await request(stack.gateway.graphqlUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json, application/json', ...headers },
        body: JSON.stringify({ query, variables }),
      });
      return (await res.body.json()) as GraphQLResponse<T>;
    },
    async calls(area?: string) {
      const all = (await emuJson('GET', area ? `calls?area=${area}` : 'calls')) as EmulatorCall[];
      return area ? all.filter((c) => c.area === area) : all;
    },
    async clearCalls() {
      await emuJson('DELETE', 'calls');
    },
    async cold() {
      await stack.upstream.clearCache();
      await emuJson('DELETE', 'calls');
    },
    control: (path: string, body: unknown = {}) => emuJson('POST', path, body),
    async createToken(credit: number) {
      return ((await emuJson('POST', 'tokens', { credit })) as { token: string }).token;
    },
    async credit(token: string) {
      return ((await emuJson('GET', `tokens/${encodeURIComponent(token)}`)) as { credit: number }).credit;
    },
    clock: emulatorClock(emu ?? 'http://no-embedded-emulator.invalid'),
    close: () => stack.close(),
  };
}
