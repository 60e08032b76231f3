/**
 * Speed against the runtime's own ceiling, in one run (`npm run bench`, or alone:
 * `npx tsx bench/speed.ts`): the layer (one process: emulator, subgraphs, gateway) beside a
 * **baseline**, a bare Hive gateway runtime (proxy mode, its response cache on, the transport's
 * in-flight de-duplication on) over a trivial graphql-yoga subgraph that answers the same company
 * JSON after the same emulated upstream delay. Every row prints both and the ratio layer ÷ baseline.
 *
 * Rows: warm profile (p50, ops/s); cold profile at upstream latency 0 and 40 ms (p50, ops/s,
 * CPU per operation: `process.cpuUsage()` of this process — client, emulator and server alike —
 * over the throughput run, divided by its operations); bursts of 20 and 200 identical operations
 * (upstream calls, p50/max of each answer's arrival minus the upstream call's return); the
 * ownership walk, warm and cold; RSS idle and under 200 concurrent connections (each side in a
 * process of its own, as deployed: see "Memory" below).
 *
 * Other benches add rows with `SPEED_SECTIONS` (a function of `SpeedContext` returning rows).
 */
import { readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createGatewayRuntime, type GatewayRuntime } from '@graphql-hive/gateway-runtime';
import { createSchema, createYoga } from 'graphql-yoga';
import { LRUCache } from 'lru-cache';
import { Agent, request } from 'undici';
import type { Stack } from '../stack.ts';

const LATENCY_MS = Number(process.env.BENCH_UPSTREAM_LATENCY_MS ?? 40);
const N = Number(process.env.BENCH_OPERATIONS ?? 40);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);
const THROUGHPUT_MS = Number(process.env.BENCH_THROUGHPUT_MS ?? 3000);
/** Untimed load on each side before a throughput reading (`BENCH_WARMUP_MS`). */
const WARMUP_MS = Number(process.env.BENCH_WARMUP_MS ?? 1500);

export const PROFILE = `query($v: String!) { company(vatCode: $v) { companyName address { town } managers { roles { role { code } } } shareholders { percentShare } ecofin { turnover netWorth } } }`;
/**
 * The bursts' question: identity, address and balance-sheet figures, one upstream GET (IT-advanced),
 * so that "after the call's return" is the one call's (the profile also buys IT-stakeholders, by
 * POST and callback).
 */
export const IDENTITY = `query($v: String!) { company(vatCode: $v) { companyName vatCode address { streetName zipCode town } ecofin { turnover netWorth shareCapital } } }`;
export const WALK = `query($v: String!) { company(vatCode: $v) { companyName shareholders { percentShare owners { ... on ShareholderCompany { company { companyName address { town } } } } } } }`;
/** The walk as the baseline's schema (built from the JSON, no union) asks it. */
export const WALK_BASELINE = `query($v: String!) { company(vatCode: $v) { companyName shareholders { percentShare owners { company { companyName address { town } } } } } }`;
export const WALK_VAT = '12485671007';

/** One side of a comparison: sends operations, counts upstream calls and when the last returned. */
export interface Side {
  /** Who answers (error messages): 'layer', 'baseline', or an alternative's name (`alternative.ts`). */
  name: string;
  graphqlUrl: string;
  /** Sends one operation; resolves with the parsed answer and when it arrived (ms, `Date.now()`). */
  send(query: string, variables: Record<string, unknown>): Promise<{ body: { data?: unknown; errors?: unknown }; at: number }>;
  /** Upstream calls since the last `resetCalls`, each with when it returned (ms, `Date.now()`). */
  calls(): Promise<Array<{ returnedAt: number }>>;
  resetCalls(): Promise<void>;
  /** Sets the emulated upstream latency. */
  setLatency(ms: number): Promise<void>;
  /** Forgets every cached answer. */
  clearCaches(): Promise<void>;
  close(): Promise<void>;
}

export interface SpeedRow {
  what: string;
  layer: string;
  baseline: string;
  /** layer ÷ baseline of the row's main figure. */
  ratio: number;
}

export interface SpeedContext {
  layer: Side;
  baseline: Side;
  latencyMs: number;
}

/** Sections of rows, run in order after the ones here (other benches push theirs). */
export const SPEED_SECTIONS: Array<(ctx: SpeedContext) => Promise<SpeedRow[]>> = [
  // The cold path in process and over loopback HTTP (`cold.ts`; BENCH_COLD_OPERATIONS, BENCH_COLD_LATENCIES).
  async () => {
    const { runColdBench } = await import('./cold.ts');
    return (await runColdBench()).map((r) => ({
      what: `cold profile, ${r.mode}, upstream ${r.latencyMs} ms: p50 (critical path ${r.criticalP50.toFixed(1)} ms), CPU ${r.cpuMs.toFixed(2)} ms/op`,
      layer: `${r.p50.toFixed(1)} ms`,
      baseline: `${r.criticalP50.toFixed(1)} ms`,
      ratio: r.criticalP50 > 0 ? r.p50 / r.criticalP50 : NaN,
    }));
  },
  // One upstream event to many subscribers (`fanout.ts`; BENCH_FANOUT, BENCH_FANOUT_ROUNDS).
  async () => {
    const { runFanoutBench } = await import('./fanout.ts');
    return (await runFanoutBench()).map((r) => ({
      what: `fan-out to ${r.subscribers} subscribers: callback → last delivery p50 / p99 (the server wrote the last frame at p50 ${r.writtenP50.toFixed(1)} ms; ${r.lost} lost; ${(r.rssPerSubscriber / 1024).toFixed(1)} KB RSS per subscriber)`,
      layer: `${r.lastP50.toFixed(1)} / ${r.lastP99.toFixed(1)} ms`,
      baseline: `${r.baselineLastP50.toFixed(1)} / ${r.baselineLastP99.toFixed(1)} ms (graphql-ws alone${r.baselineLost ? `, ${r.baselineLost} lost` : ''})`,
      ratio: r.baselineLastP99 > 0 ? r.lastP99 / r.baselineLastP99 : NaN,
    }));
  },
];

export const pct = (xs: number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? 0;
};
const f1 = (n: number): string => n.toFixed(1);

/** Latencies (ms) of `n` sequential operations. */
export async function sequentialLatencies(side: Side, n: number, query: string, vars: (i: number) => Record<string, unknown>): Promise<number[]> {
  const lat: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    const r = await side.send(query, vars(i));
    if (r.body.errors) throw new Error(`${side.name}: ${JSON.stringify(r.body.errors).slice(0, 300)}`);
    lat.push(performance.now() - t0);
  }
  return lat;
}

/** p50 of `n` sequential operations. */
export async function sequentialP50(side: Side, n: number, query: string, vars: (i: number) => Record<string, unknown>): Promise<number> {
  return pct(await sequentialLatencies(side, n, query, vars), 50);
}

/** Operations per second with `concurrency` clients for `ms`, and this process's CPU ms per operation. */
export async function throughput(
  side: Side,
  query: string,
  vars: (i: number) => Record<string, unknown>,
  concurrency = CONCURRENCY,
  ms = THROUGHPUT_MS,
): Promise<{ rps: number; cpuMs: number }> {
  let done = 0;
  let next = 0;
  const cpu0 = process.cpuUsage();
  const end = Date.now() + ms;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (Date.now() < end) {
        const r = await side.send(query, vars(next++));
        if (r.body.errors) throw new Error(`${side.name}: ${JSON.stringify(r.body.errors).slice(0, 300)}`);
        done++;
      }
    }),
  );
  const cpu = process.cpuUsage(cpu0);
  return { rps: done / (ms / 1000), cpuMs: (cpu.user + cpu.system) / 1000 / Math.max(1, done) };
}

/** `n` identical operations at once: upstream calls, and each answer's arrival minus the call's return. */
export async function burst(side: Side, n: number, query: string, variables: Record<string, unknown>): Promise<{ calls: number; p50: number; max: number; spread: number }> {
  await side.resetCalls();
  const answers = await Promise.all(Array.from({ length: n }, () => side.send(query, variables)));
  for (const a of answers) if (a.body.errors) throw new Error(`${side.name}: ${JSON.stringify(a.body.errors).slice(0, 300)}`);
  const calls = await side.calls();
  const returned = Math.max(...calls.map((c) => c.returnedAt));
  const waits = answers.map((a) => a.at - returned);
  // spread: the last answer after the first (what the burst adds to one operation's own time).
  return { calls: calls.length, p50: pct(waits, 50), max: Math.max(...waits), spread: Math.max(...waits) - Math.min(...waits) };
}

const agent = new Agent({ connections: 256, pipelining: 1 });

async function post(url: string, query: string, variables: Record<string, unknown>): Promise<{ body: { data?: unknown; errors?: unknown }; at: number }> {
  const res = await request(url, { method: 'POST', dispatcher: agent, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query, variables }) });
  const body = (await res.body.json()) as { data?: unknown; errors?: unknown };
  return { body, at: Date.now() };
}

// ---------------------------------------------------------------------------------------------
// The layer

export async function startLayerSide(latencyMs: number): Promise<Side & { stack: Stack }> {
  // Imported here: the baseline's memory child never loads the layer.
  const { startStack } = await import('../stack.ts');
  const stack = await startStack({ env: { ...process.env, OPENAPI_ENV: 'emulator' }, port: 0, emulator: { latencyMs: { company: latencyMs } } });
  const emu = `${stack.emulatorUrl!}/_emulator`;
  return {
    name: 'layer',
    stack,
    graphqlUrl: stack.gateway.graphqlUrl,
    send: (q, v) => post(stack.gateway.graphqlUrl, q, v),
    async calls() {
      const res = await request(`${emu}/calls`);
      const all = (await res.body.json()) as Array<{ area: string | null; at: string; ms: number }>;
      return all.filter((c) => c.area === 'company').map((c) => ({ returnedAt: Date.parse(c.at) + c.ms }));
    },
    async resetCalls() {
      await (await request(`${emu}/calls`, { method: 'DELETE' })).body.dump();
    },
    async setLatency(ms) {
      // Every call answers after `ms` (the baseline answers everything after `ms`); a composite
      // tier's preparation time is the emulator's default (0, ready at once) whichever flow buys it.
      for (const [path, body] of [['latency', { area: 'company', ms }]] as const) {
        await (await request(`${emu}/${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })).body.dump();
      }
    },
    clearCaches: () => stack.upstream.clearCache(),
    close: () => stack.close(),
  };
}

// ---------------------------------------------------------------------------------------------
// The baseline: Hive gateway runtime + response cache over a yoga subgraph answering fixed JSON

/** GraphQL SDL whose `Query.company` returns `sample`'s shape (objects → types, arrays → lists). */
export function sdlFromSample(sample: unknown): string {
  const types: string[] = [];
  const typeOf = (name: string, values: unknown[]): string => {
    const present = values.filter((v) => v !== null && v !== undefined);
    if (present.length === 0) return 'String';
    if (Array.isArray(present[0]))
      return `[${typeOf(
        name,
        present.flatMap((v) => v as unknown[]),
      )}]`;
    if (typeof present[0] === 'object') {
      const keys = [...new Set(present.flatMap((v) => Object.keys(v)))];
      const fields = keys.map(
        (k) =>
          `  ${k}: ${typeOf(
            `${name}_${k}`,
            present.map((v) => (v as Record<string, unknown>)[k]),
          )}`,
      );
      types.push(`type ${name} {\n${fields.length ? fields.join('\n') : '  _empty: String'}\n}`);
      return name;
    }
    if (typeof present[0] === 'number') return 'Float';
    if (typeof present[0] === 'boolean') return 'Boolean';
    return 'String';
  };
  const root = typeOf('Company', [sample]);
  return `${types.join('\n')}\ntype Query { company(vatCode: String!): ${root} }`;
}

/** `a` and `b` merged: objects key by key, arrays item by item. */
function deepMerge(a: unknown, b: unknown): unknown {
  if (Array.isArray(a) && Array.isArray(b)) return Array.from({ length: Math.max(a.length, b.length) }, (_, i) => deepMerge(a[i], b[i]));
  if (a && b && typeof a === 'object' && typeof b === 'object') {
    const out: Record<string, unknown> = { ...(a as Record<string, unknown>) };
    for (const [k, v] of Object.entries(b)) out[k] = k in out ? deepMerge(out[k], v) : v;
    return out;
  }
  return b ?? a;
}

/**
 * The key-value store the runtime's response cache keeps answers in (`cache` of
 * `createGatewayRuntime`): an LRU, as Hive's in-memory one.
 */
export function lruKeyValueCache(max = 10_000) {
  const lru = new LRUCache<string, object>({ max });
  return {
    get: (key: string) => lru.get(key),
    set: (key: string, value: object, o?: { ttl?: number | null }) => void lru.set(key, value, o?.ttl ? { ttl: o.ttl * 1000 } : {}),
    delete: (key: string) => lru.delete(key),
    getKeysByPrefix: (prefix: string) => [...lru.keys()].filter((k) => k.startsWith(prefix)),
  };
}

export async function startBaselineSide(samples: { profile: unknown; walk: unknown; identity?: unknown }, latencyMs: number): Promise<Side & { runtime: GatewayRuntime }> {
  let latency = latencyMs;
  let calls: Array<{ returnedAt: number }> = [];
  // One schema answering both shapes: the walk's and the profile's fields merged.
  const merged = deepMerge(deepMerge(samples.walk, samples.profile), samples.identity ?? {});
  const yoga = createYoga({
    graphqlEndpoint: '/graphql',
    logging: false,
    schema: createSchema({
      typeDefs: sdlFromSample(merged),
      resolvers: {
        Query: {
          company: async () => {
            if (latency > 0) await new Promise((r) => setTimeout(r, latency));
            calls.push({ returnedAt: Date.now() });
            return merged;
          },
        },
      },
    }),
  });
  const subgraph: Server = createServer(yoga.requestListener);
  await new Promise<void>((r) => subgraph.listen(0, '127.0.0.1', r));
  const subgraphUrl = `http://127.0.0.1:${(subgraph.address() as AddressInfo).port}/graphql`;
  const cache = lruKeyValueCache();
  const runtime = createGatewayRuntime({
    proxy: { endpoint: subgraphUrl },
    cache,
    responseCaching: { session: () => null },
    logging: false,
    landingPage: false,
    graphqlEndpoint: '/graphql',
  });
  const gateway: Server = createServer(runtime.requestListener);
  await new Promise<void>((r) => gateway.listen(0, '127.0.0.1', r));
  const graphqlUrl = `http://127.0.0.1:${(gateway.address() as AddressInfo).port}/graphql`;
  let generation = 0;
  return {
    name: 'baseline',
    runtime,
    graphqlUrl,
    // Clearing the cache: later operations carry a new `gen` variable (unused by the subgraph), a new key.
    send: (q, v) => post(graphqlUrl, q, { ...v, ...(generation ? { gen: generation } : {}) }),
    calls: async () => calls,
    async resetCalls() {
      calls = [];
    },
    async setLatency(ms) {
      latency = ms;
    },
    async clearCaches() {
      generation++;
    },
    async close() {
      await runtime.dispose();
      for (const s of [gateway, subgraph]) {
        s.closeAllConnections();
        await new Promise<void>((r) => s.close(() => r()));
      }
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Rows

const row = (what: string, layer: number, baseline: number, fmt: (n: number) => string, extra: { layer?: string; baseline?: string } = {}): SpeedRow => ({
  what,
  layer: `${fmt(layer)}${extra.layer ?? ''}`,
  baseline: `${fmt(baseline)}${extra.baseline ?? ''}`,
  ratio: layer / baseline,
});
const msFmt = (n: number): string => `${f1(n)} ms`;
const opsFmt = (n: number): string => `${n.toFixed(0)} ops/s`;

/** The baseline's variables: the same VAT-shaped values; `gen` is added by its side when needed. */
/** Companies never asked before, filled by `runSpeedBench` (the emulator's registered VATs). */
const coldVats: string[] = [];
let coldNext = 0;
const nextCold = (): string => coldVats[coldNext++ % coldVats.length];

async function warmRows(ctx: SpeedContext, label: string, layerQuery: string, baselineQuery: string, vat: string): Promise<SpeedRow[]> {
  const out: SpeedRow[] = [];
  await ctx.layer.send(layerQuery, { v: vat });
  await ctx.baseline.send(baselineQuery, { v: vat });
  const p50 = [await sequentialP50(ctx.layer, N, layerQuery, () => ({ v: vat })), await sequentialP50(ctx.baseline, N, baselineQuery, () => ({ v: vat }))];
  out.push(row(`${label}, warm: p50`, p50[0], p50[1], msFmt));
  // Each side warmed up under the same load first: the JIT compiles the code they share (the Hive
  // runtime) while the first measured side runs, which would favour the second.
  await throughput(ctx.layer, layerQuery, () => ({ v: vat }), CONCURRENCY, WARMUP_MS);
  await throughput(ctx.baseline, baselineQuery, () => ({ v: vat }), CONCURRENCY, WARMUP_MS);
  const l = await throughput(ctx.layer, layerQuery, () => ({ v: vat }));
  const b = await throughput(ctx.baseline, baselineQuery, () => ({ v: vat }));
  out.push(row(`${label}, warm: throughput`, l.rps, b.rps, opsFmt));
  out.push(row(`${label}, warm: CPU per operation`, l.cpuMs, b.cpuMs, (n) => `${n.toFixed(2)} ms`));
  return out;
}

async function coldRows(ctx: SpeedContext, label: string, layerQuery: string, baselineQuery: string, latencyMs: number, vat?: string): Promise<SpeedRow[]> {
  await Promise.all([ctx.layer.setLatency(latencyMs), ctx.baseline.setLatency(latencyMs)]);
  // The layer: every operation a company never asked before (or, with `vat`, its caches cleared first).
  const layerVars = (): Record<string, unknown> => ({ v: vat ?? nextCold() });
  const layerSeq: number[] = [];
  for (let i = 0; i < N; i++) {
    if (vat) await ctx.layer.clearCaches();
    const t0 = performance.now();
    const r = await ctx.layer.send(layerQuery, layerVars());
    if (r.body.errors) throw new Error(JSON.stringify(r.body.errors).slice(0, 300));
    layerSeq.push(performance.now() - t0);
  }
  const baseSeq: number[] = [];
  for (let i = 0; i < N; i++) {
    const t0 = performance.now();
    await ctx.baseline.send(baselineQuery, { v: nextCold() });
    baseSeq.push(performance.now() - t0);
  }
  const out = [row(`${label}, cold, upstream ${latencyMs} ms: p50`, pct(layerSeq, 50), pct(baseSeq, 50), msFmt)];
  if (!vat) {
    await throughput(ctx.layer, layerQuery, () => ({ v: nextCold() }), CONCURRENCY, WARMUP_MS);
    await throughput(ctx.baseline, baselineQuery, () => ({ v: nextCold() }), CONCURRENCY, WARMUP_MS);
    const l = await throughput(ctx.layer, layerQuery, () => ({ v: nextCold() }));
    const b = await throughput(ctx.baseline, baselineQuery, () => ({ v: nextCold() }));
    out.push(row(`${label}, cold, upstream ${latencyMs} ms: throughput`, l.rps, b.rps, opsFmt));
    out.push(row(`${label}, cold, upstream ${latencyMs} ms: CPU per operation`, l.cpuMs, b.cpuMs, (n) => `${n.toFixed(2)} ms`));
  }
  return out;
}

async function burstRows(ctx: SpeedContext, n: number): Promise<SpeedRow[]> {
  await Promise.all([ctx.layer.setLatency(ctx.latencyMs), ctx.baseline.setLatency(ctx.latencyMs)]);
  // What one operation alone calls upstream (the layer's profile takes two endpoints).
  const single = async (side: Side): Promise<number> => (await burst(side, 1, IDENTITY, { v: nextCold() })).calls;
  const [l1, b1] = [await single(ctx.layer), await single(ctx.baseline)];
  const l = await burst(ctx.layer, n, IDENTITY, { v: nextCold() });
  const b = await burst(ctx.baseline, n, IDENTITY, { v: nextCold() });
  return [
    {
      what: `burst of ${n} identical company identities: upstream calls (one operation alone)`,
      layer: `${l.calls} (${l1})`,
      baseline: `${b.calls} (${b1})`,
      ratio: l.calls / l1 / (b.calls / b1),
    },
    row(`burst of ${n}: answer after the call's return, p50`, l.p50, b.p50, msFmt),
    row(`burst of ${n}: answer after the call's return, max`, l.max, b.max, msFmt),
    row(`burst of ${n}: last answer after the first`, l.spread, b.spread, msFmt),
  ];
}

// ---------------------------------------------------------------------------------------------
// Memory, each side alone in a process of its own, as it is deployed: plain `node`, no TypeScript
// loader (tsx's loader thread alone holds ~100 MB), with the heap cap `npm start` uses. The layer is
// what `npm start` runs (`scripts/start.mjs`: dist/main.js, built when stale); the baseline is this file with its types
// stripped (esbuild), run with SPEED_MEMORY=baseline. The load comes from this process and the RSS
// is read from /proc, so the client is never counted.

interface MemoryReading {
  idleMb: number;
  /** After GraphiQL's page was served once (its renderer loads on the first visit); the layer only. */
  graphiqlMb?: number;
  loadedMb: number;
}

const ROOT = resolve(fileURLToPath(import.meta.url), '../..');
/** The node flags `npm start` runs with: its script in package.json is `node <flags> scripts/start.mjs`. */
export const START_FLAGS = ((): string[] => {
  const [node, ...rest] = (JSON.parse(readFileSync(resolve(ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } }).scripts.start.split(/\s+/);
  if (node !== 'node') throw new Error(`npm start does not run node: ${node}`);
  const script = rest.findIndex((t) => !t.startsWith('-'));
  return script < 0 ? rest : rest.slice(0, script);
})();
/** The heap cap `npm start` runs with, for the baseline too. */
const HEAP_CAP = START_FLAGS.filter((f) => f.startsWith('--max-old-space-size='));
const rssOf = (pid: number): number => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) * 1024;

/** One query, RSS; then 200 connections asking at once for 3 s, peak RSS (sampled every 50 ms). */
async function readMemory(pid: number, side: Pick<Side, 'send' | 'name'>, graphiqlUrl?: string): Promise<MemoryReading> {
  const first = await side.send(PROFILE, { v: WALK_VAT });
  if (first.body.errors) throw new Error(`${side.name}: ${JSON.stringify(first.body.errors).slice(0, 300)}`);
  const idle = rssOf(pid);
  let graphiql: number | undefined;
  if (graphiqlUrl) {
    const page = await request(graphiqlUrl, { headers: { accept: 'text/html', 'accept-encoding': 'br' } });
    await page.body.dump();
    if (page.statusCode !== 200) throw new Error(`${side.name}: GraphiQL answered ${page.statusCode}`);
    graphiql = rssOf(pid);
  }
  let peak = graphiql ?? idle;
  const timer = setInterval(() => (peak = Math.max(peak, rssOf(pid))), 50);
  await throughput(side as Side, PROFILE, (i) => ({ v: i % 2 ? WALK_VAT : '03456783053' }), 200, 3000);
  clearInterval(timer);
  peak = Math.max(peak, rssOf(pid));
  return { idleMb: idle / 2 ** 20, graphiqlMb: graphiql === undefined ? undefined : graphiql / 2 ** 20, loadedMb: peak / 2 ** 20 };
}

export async function measureLayerMemory(): Promise<MemoryReading> {
  // `npm start`'s own script: builds dist/ when stale, then runs dist/main.js in its process.
  // Imported here, as the layer is: the baseline's process (this file with types stripped) loads no project module.
  const { spawnNode } = await import('../services/processes.ts');
  const layer = await spawnNode(
    'layer',
    [...START_FLAGS, 'scripts/start.mjs'],
    { ...process.env, PORT: '0', OPENAPI_ENV: 'emulator' },
    /GraphiQL and GraphQL:\s+(\S+)[\s\S]*embedded emulator at [^\s,]+/,
  );
  try {
    const emulator = /embedded emulator at ([^\s,]+)/.exec(layer.output())![1];
    await (
      await request(`${emulator}/_emulator/latency`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ area: 'company', ms: LATENCY_MS }) })
    ).body.dump();
    return await readMemory(layer.proc.pid!, { name: 'layer', send: (q, v) => post(layer.url, q, v) }, layer.url);
  } finally {
    await layer.kill();
  }
}

export async function measureBaselineMemory(samples: unknown): Promise<MemoryReading> {
  const { build } = await import('esbuild');
  const out = resolve(ROOT, 'bench', '.speed-baseline.mjs');
  // Types stripped only; its relative imports (the layer's) are never loaded by the baseline.
  await build({ entryPoints: [fileURLToPath(import.meta.url)], outfile: out, platform: 'node', format: 'esm', bundle: false, logLevel: 'warning' });
  try {
    const { spawnNode } = await import('../services/processes.ts');
    const baseline = await spawnNode('baseline', [...HEAP_CAP, out], { ...process.env, SPEED_MEMORY: 'baseline', SPEED_SAMPLES: JSON.stringify(samples) }, /baseline at (\S+)/);
    try {
      return await readMemory(baseline.proc.pid!, { name: 'baseline', send: (q, v) => post(baseline.url, q, v) });
    } finally {
      await baseline.kill();
    }
  } finally {
    rmSync(out, { force: true });
  }
}

// ---------------------------------------------------------------------------------------------

export async function runSpeedBench(): Promise<SpeedRow[]> {
  const { registeredVats } = await import('../emulator/company/index.ts');
  if (coldVats.length === 0) coldVats.push(...registeredVats(5_000_000, 20_000));
  const layer = await startLayerSide(LATENCY_MS);
  // The baseline answers what the layer answers.
  const profile = ((await layer.send(PROFILE, { v: WALK_VAT })).body.data as { company: unknown }).company;
  const walk = ((await layer.send(WALK, { v: WALK_VAT })).body.data as { company: unknown }).company;
  const identity = ((await layer.send(IDENTITY, { v: WALK_VAT })).body.data as { company: unknown }).company;
  const baseline = await startBaselineSide({ profile, walk, identity }, LATENCY_MS);
  const ctx: SpeedContext = { layer, baseline, latencyMs: LATENCY_MS };
  const rows: SpeedRow[] = [];
  try {
    rows.push(...(await warmRows(ctx, 'profile', PROFILE, PROFILE, WALK_VAT)));
    rows.push(...(await coldRows(ctx, 'profile', PROFILE, PROFILE, 0)));
    rows.push(...(await coldRows(ctx, 'profile', PROFILE, PROFILE, LATENCY_MS)));
    rows.push(...(await burstRows(ctx, 20)));
    rows.push(...(await burstRows(ctx, 200)));
    await Promise.all([layer.setLatency(LATENCY_MS), baseline.setLatency(LATENCY_MS)]);
    rows.push(...(await warmRows(ctx, 'ownership walk', WALK, WALK_BASELINE, WALK_VAT)));
    rows.push(...(await coldRows(ctx, 'ownership walk', WALK, WALK_BASELINE, LATENCY_MS, WALK_VAT)));
    for (const section of SPEED_SECTIONS) rows.push(...(await section(ctx)));
  } finally {
    await baseline.close();
    await layer.close();
  }
  const [lm, bm] = [await measureLayerMemory(), await measureBaselineMemory({ profile, walk, identity })];
  rows.push(row('RSS idle (after one query)', lm.idleMb, bm.idleMb, (n) => `${n.toFixed(0)} MB`));
  // The baseline serves no GraphiQL: the row compares the layer after its visit with the baseline idle.
  if (lm.graphiqlMb !== undefined) rows.push(row('RSS after GraphiQL served once (baseline: idle)', lm.graphiqlMb, bm.idleMb, (n) => `${n.toFixed(0)} MB`));
  rows.push(row('RSS under 200 concurrent connections (peak)', lm.loadedMb, bm.loadedMb, (n) => `${n.toFixed(0)} MB`));
  printSpeedRows(rows);
  return rows;
}

export function printSpeedRows(rows: SpeedRow[]): void {
  console.log(
    `\nSpeed: the layer beside a bare Hive gateway with its response cache over a yoga subgraph answering the same JSON after the same delay (upstream ${LATENCY_MS} ms unless said; ${N} sequential operations, ${CONCURRENCY} clients for ${THROUGHPUT_MS} ms).\n`,
  );
  console.log('| what | layer | baseline | layer ÷ baseline |');
  console.log('|---|---|---|---|');
  for (const r of rows) console.log(`| ${r.what} | ${r.layer} | ${r.baseline} | ${Number.isFinite(r.ratio) ? r.ratio.toFixed(2) : '—'} |`);
}

if (process.env.SPEED_MEMORY === 'baseline') {
  // The baseline alone (see `measureBaselineMemory`): serves until SIGTERM.
  const samples = JSON.parse(process.env.SPEED_SAMPLES ?? '{}') as { profile: unknown; walk: unknown; identity?: unknown };
  const side = await startBaselineSide(samples, LATENCY_MS);
  process.once('SIGTERM', () => void side.close().then(() => process.exit(0)));
  console.log(`baseline at ${side.graphqlUrl}`);
} else if (process.argv[1] && fileURLToPath(import.meta.url) === resolve(process.argv[1])) {
  await runSpeedBench();
  await agent.close();
}
