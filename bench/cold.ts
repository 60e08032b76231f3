/**
 * Cold path of the one-process layer, part of `npm run bench` and runnable alone
 * (`npx tsx bench/cold.ts`): the company profile asked with every cache empty, one operation at a
 * time, at upstream latency 0 (the layer's own overhead) and 40 ms (against the upstream's critical
 * path), with the subgraphs called in process (`gateway/in-process.ts`, as `npm start` runs) and over
 * loopback HTTP (as separate services do).
 *
 * The emulator runs in a child process, so the CPU counted (`process.cpuUsage` of this process over
 * the timed operations only) is the gateway's and the subgraphs', plus this script's HTTP client.
 * The critical path is the same upstream calls the layer made, sent directly and all at once.
 *
 * Profile it: `BENCH_COLD_CPUPROFILE=/tmp/cold.cpuprofile npx tsx bench/cold.ts` records a V8 CPU
 * profile (`node:inspector`) of the timed operations of the first row only (in process, first
 * latency), leaving start-up and module loading out; `npx tsx bench/cold.ts --summary <file>` prints
 * its top self-time packages, functions and stacks as text.
 *
 * Environment: `BENCH_COLD_OPERATIONS` (per row, default 60), `BENCH_COLD_LATENCIES` (comma list, default 0,40).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { request } from 'undici';
import { registeredVats } from '../emulator/company/index.ts';
import { DEFAULT_TOKEN } from '../emulator/server.ts';
import { baseEnv, emulatorControl, spawnService } from '../services/processes.ts';
import { startStack } from '../stack.ts';

/** The cold query: identity, address and balance sheet, one GET (IT-advanced) per company. */
const PROFILE = `query($v: String!) { company(vatCode: $v) { companyName vatCode address { streetName zipCode town } ecofin { turnover netWorth shareCapital } } }`;

export interface ColdRow {
  mode: 'in process' | 'loopback HTTP';
  latencyMs: number;
  operations: number;
  p50: number;
  p99: number;
  /** Process CPU per operation, ms (gateway + subgraphs + the bench's client; the emulator apart). */
  cpuMs: number;
  /** The same upstream calls sent directly, all at once: p50, ms. */
  criticalP50: number;
  upstreamCalls: number;
}

const pct = (xs: number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? 0;
};

interface Call {
  method: string;
  path: string;
  area: string;
}

export async function runColdBench(opts: { operations?: number; latencies?: number[] } = {}): Promise<ColdRow[]> {
  const operations = opts.operations ?? Number(process.env.BENCH_COLD_OPERATIONS ?? 60);
  const latencies = opts.latencies ?? (process.env.BENCH_COLD_LATENCIES ?? '0,40').split(',').map(Number);
  const emulator = await spawnService('emulator', 'emulator', [], baseEnv({ EMULATOR_PORT: '0' }));
  const rows: ColdRow[] = [];
  try {
    for (const inProcess of [true, false]) {
      const stack = await startStack({ env: { ...baseEnv(), OPENAPI_ENV: 'emulator' }, port: 0, emulatorUrl: emulator.url, inProcess });
      try {
        const gql = async (v: string): Promise<number> => {
          const res = await request(stack.gateway.graphqlUrl, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ query: PROFILE, variables: { v } }),
          });
          const body = (await res.body.json()) as { errors?: unknown[]; extensions?: { cost?: { upstreamCalls: number } } };
          if (body.errors) throw new Error(JSON.stringify(body.errors));
          return body.extensions?.cost?.upstreamCalls ?? 0;
        };
        const vats = registeredVats(3_100_000, operations + 5);
        for (const latencyMs of latencies) {
          await emulatorControl(emulator.url, 'POST', 'latency', { area: 'company', ms: latencyMs });
          // Warm-up (JIT, connections, plans), not counted.
          for (const v of vats.slice(operations)) {
            await stack.upstream.clearCache();
            await gql(v);
          }
          const profiler = process.env.BENCH_COLD_CPUPROFILE && rows.length === 0 ? new Session() : null;
          if (profiler) {
            profiler.connect();
            await profiler.post('Profiler.enable');
            await profiler.post('Profiler.start');
          }
          const lat: number[] = [];
          const critical: number[] = [];
          let cpu = 0;
          let calls = 0;
          for (const v of vats.slice(0, operations)) {
            await stack.upstream.clearCache();
            await emulatorControl(emulator.url, 'DELETE', 'calls');
            const c0 = process.cpuUsage();
            const t0 = performance.now();
            calls += await gql(v);
            lat.push(performance.now() - t0);
            const c = process.cpuUsage(c0);
            cpu += (c.user + c.system) / 1000;
            const made = (await emulatorControl(emulator.url, 'GET', 'calls')) as Call[];
            const t1 = performance.now();
            await Promise.all(
              made.map(async (m) => {
                const res = await request(`${emulator.url}/${m.area}${m.path}`, {
                  method: m.method === 'POST' ? 'POST' : 'GET',
                  headers: { authorization: `Bearer ${DEFAULT_TOKEN}`, ...(m.method === 'POST' ? { 'content-type': 'application/json' } : {}) },
                  body: m.method === 'POST' ? '{}' : undefined,
                });
                await res.body.dump();
              }),
            );
            critical.push(performance.now() - t1);
          }
          if (profiler) {
            const { profile } = await profiler.post('Profiler.stop');
            writeFileSync(process.env.BENCH_COLD_CPUPROFILE!, JSON.stringify(profile));
            profiler.disconnect();
          }
          rows.push({
            mode: inProcess ? 'in process' : 'loopback HTTP',
            latencyMs,
            operations,
            p50: pct(lat, 50),
            p99: pct(lat, 99),
            cpuMs: cpu / operations,
            criticalP50: pct(critical, 50),
            upstreamCalls: calls / operations,
          });
        }
      } finally {
        await stack.close();
      }
    }
  } finally {
    await emulator.kill('SIGTERM');
  }
  return rows;
}

export function printColdRows(rows: ColdRow[]): void {
  console.log('\nCold company profile, one operation at a time, caches empty (emulator in another process)\n');
  console.log('| subgraphs | upstream latency | upstream calls/op | p50 | p99 | upstream critical path p50 | p50 − critical path | CPU/op |');
  console.log('|---|---|---|---|---|---|---|---|');
  for (const r of rows) {
    console.log(
      `| ${r.mode} | ${r.latencyMs} ms | ${r.upstreamCalls.toFixed(1)} | ${r.p50.toFixed(1)} ms | ${r.p99.toFixed(1)} ms | ${r.criticalP50.toFixed(1)} ms | ${(r.p50 - r.criticalP50).toFixed(1)} ms | ${r.cpuMs.toFixed(2)} ms |`,
    );
  }
}

// ---------------------------------------------------------------------------------------------
// A .cpuprofile as text

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** Top self-time functions and the heaviest stacks (leaf upward) of a V8 CPU profile. */
export function summariseProfile(file: string, top = 25): string {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const self = new Map<number, number>();
  profile.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0) / 1000));
  const name = (n: ProfileNode): string => {
    const url = n.callFrame.url.replace(/^.*node_modules\//, '').replace(/^file:\/\/.*\/main\//, '');
    return `${n.callFrame.functionName || '(anonymous)'} ${url}:${n.callFrame.lineNumber + 1}`;
  };
  const total = [...self.values()].reduce((a, b) => a + b, 0);
  const fn = new Map<string, number>();
  for (const [id, t] of self) fn.set(name(byId.get(id)!), (fn.get(name(byId.get(id)!)) ?? 0) + t);
  const pkg = new Map<string, number>();
  for (const [id, t] of self) {
    const url = byId.get(id)!.callFrame.url;
    const key =
      /node_modules\/((@[^/]+\/)?[^/]+)/.exec(url)?.[1] ??
      (url.includes('/main/') ? url.replace(/^.*\/main\/([^/]+).*$/, 'project: $1/') : url ? 'node internals' : byId.get(id)!.callFrame.functionName);
    pkg.set(key, (pkg.get(key) ?? 0) + t);
  }
  const lines = [`total sampled ${total.toFixed(0)} ms`, '', 'self time by package:'];
  for (const [k, t] of [...pkg].sort((a, b) => b[1] - a[1]).slice(0, 15))
    lines.push(`  ${((100 * t) / total).toFixed(1).padStart(5)}%  ${'#'.repeat(Math.round((60 * t) / total))} ${k}`);
  lines.push('', 'self time by function:');
  for (const [k, t] of [...fn].sort((a, b) => b[1] - a[1]).slice(0, top)) lines.push(`  ${((100 * t) / total).toFixed(1).padStart(5)}%  ${k}`);
  lines.push('', 'heaviest stacks (leaf first, 6 frames):');
  const stacks = new Map<string, number>();
  for (const [id, t] of self) {
    const frames: string[] = [];
    for (let cur: number | undefined = id; cur !== undefined && frames.length < 6; cur = parent.get(cur)) frames.push(name(byId.get(cur)!));
    const key = frames.join(' ← ');
    stacks.set(key, (stacks.get(key) ?? 0) + t);
  }
  for (const [k, t] of [...stacks].sort((a, b) => b[1] - a[1]).slice(0, 10)) lines.push(`  ${((100 * t) / total).toFixed(1).padStart(5)}%  ${k}`);
  return lines.join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const at = process.argv.indexOf('--summary');
  if (at > 0) console.log(summariseProfile(process.argv[at + 1] ?? ''));
  else printColdRows(await runColdBench());
}
