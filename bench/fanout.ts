/**
 * Subscription fan-out by the thousand, part of `npm run bench` and runnable alone
 * (`npx tsx bench/fanout.ts`): N graphql-ws subscribers (one connection each) of one risk request on
 * one gateway of the one-process layer; the emulator completes the request and POSTs the upstream
 * callback; timed from the callback's arrival at the gateway's HTTP server to each subscriber's
 * delivery of the final state. The gateway shares one subgraph subscription between them
 * (`gateway/subscription-sharing.ts`).
 *
 * The clients run in a child process (`LocalPool` of `bench/subscriber-pool.ts` behind IPC): 10,000
 * connections are 20,000 sockets, more than one process may open here, and their decoding stays off
 * the layer's CPU. Memory per subscriber: the layer's process (emulator included, no client) after a
 * full GC, idle with no subscriber versus idle with N subscribed (RSS and V8 heap).
 *
 * Environment: `BENCH_FANOUT` (comma list, default 1000,10000), `BENCH_FANOUT_ROUNDS` (default 5;
 * the first, a warm-up, is not counted), `BENCH_FANOUT_CPUPROFILE` (a file: CPU profile of the last
 * round, summarised by `npx tsx bench/cold.ts --summary <file>`).
 */
import { fork, type ChildProcess } from 'node:child_process';
import dc from 'node:diagnostics_channel';
import type { IncomingMessage } from 'node:http';
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { request } from 'undici';
import { makeFiscalCode } from '../contract/checksums.ts';
import { DEFAULT_TOKEN } from '../emulator/server.ts';
import { startStack } from '../stack.ts';
import { calibrate, LocalPool, now, pct, type RoundResult } from './subscriber-pool.ts';

const ORDER = `mutation($input: PersonSubjectInput!) { orderPatrimonialReport(level: STANDARD, input: $input) { id state } }`;
const SAFETY_MS = 60_000;

export interface FanoutRow {
  subscribers: number;
  rounds: number;
  /** Callback arrival → each delivery, ms. */
  eachP50: number;
  eachP99: number;
  /** Callback arrival → last delivery of the round, ms (over rounds). */
  lastP50: number;
  lastP99: number;
  lost: number;
  /** Layer's process, idle, per subscriber: RSS and V8 heap bytes. */
  rssPerSubscriber: number;
  heapPerSubscriber: number;
  problems: string[];
}

// ---------------------------------------------------------------------------------------------
// The clients' process

type ClientCall =
  { seq: number; op: 'open'; url: string; token: string; n: number } | { seq: number; op: 'subscribe'; id: string } | { seq: number; op: 'collect' } | { seq: number; op: 'close' };

function serveClients(): void {
  let pool: LocalPool | null = null;
  process.on('message', (call: ClientCall) => {
    const run = async (): Promise<RoundResult | null> => {
      switch (call.op) {
        case 'open':
          pool = new LocalPool([call.url], call.token);
          await pool.open(call.n);
          return null;
        case 'subscribe':
          calibrate();
          await pool!.subscribe(call.id);
          return null;
        case 'collect':
          return pool!.collect(SAFETY_MS);
        case 'close':
          await pool?.close();
          return null;
      }
    };
    run().then(
      (value) => process.send!({ seq: call.seq, ok: true, value }),
      (err: unknown) => process.send!({ seq: call.seq, ok: false, error: err instanceof Error ? err.message : String(err) }),
    );
  });
}

class ClientProcess {
  private readonly child: ChildProcess;
  private seq = 0;
  private readonly pending = new Map<number, (a: { ok: boolean; value?: RoundResult | null; error?: string }) => void>();
  constructor() {
    this.child = fork(new URL(import.meta.url).pathname, ['--clients'], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    this.child.on('message', (a: { seq: number; ok: boolean; value?: RoundResult | null; error?: string }) => {
      this.pending.get(a.seq)?.(a);
      this.pending.delete(a.seq);
    });
  }
  async call(msg: Record<string, unknown> & { op: ClientCall['op'] }): Promise<RoundResult | null> {
    const seq = ++this.seq;
    const a = await new Promise<{ ok: boolean; value?: RoundResult | null; error?: string }>((resolve) => {
      this.pending.set(seq, resolve);
      this.child.send({ ...msg, seq });
    });
    if (!a.ok) throw new Error(a.error);
    return a.value ?? null;
  }
  kill(): void {
    this.child.kill('SIGTERM');
  }
}

// ---------------------------------------------------------------------------------------------
// The bench

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const idleMemory = async (): Promise<{ rss: number; heap: number }> => {
  for (let i = 0; i < 3; i++) {
    gc();
    await new Promise((r) => setImmediate(r));
  }
  const m = process.memoryUsage();
  return { rss: m.rss, heap: m.heapUsed };
};

export async function runFanoutBench(): Promise<FanoutRow[]> {
  const counts = (process.env.BENCH_FANOUT ?? '1000,10000')
    .split(',')
    .map(Number)
    .filter((n) => n > 0);
  const rounds = Number(process.env.BENCH_FANOUT_ROUNDS ?? 5);
  // The deployed configuration (response cache on).
  const stack = await startStack({ env: { OPENAPI_ENV: 'emulator' }, port: 0 });
  const emu = async (method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown): Promise<unknown> => {
    const res = await request(`${stack.emulatorUrl!}/_emulator/${path}`, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.body.text();
    return text ? (JSON.parse(text) as unknown) : null;
  };
  const taxCode = makeFiscalCode({ surname: 'Rossi', name: 'Mario', birthDate: '1990-04-28', gender: 'M', cadastralCode: 'L117' });
  const order = async (): Promise<string> => {
    const res = await request(stack.gateway.graphqlUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${DEFAULT_TOKEN}` },
      body: JSON.stringify({ query: ORDER, variables: { input: { name: 'Mario', surname: 'Rossi', taxCode } } }),
    });
    const body = (await res.body.json()) as { data?: { orderPatrimonialReport: { id: string } }; errors?: unknown };
    if (!body.data) throw new Error(`order failed: ${JSON.stringify(body.errors)}`);
    return body.data.orderPatrimonialReport.id;
  };
  let callbackAt = Number.NaN;
  const onStart = (message: unknown): void => {
    if ((message as { request: IncomingMessage }).request.url?.startsWith('/callbacks/risk/')) callbackAt = now();
  };
  dc.subscribe('http.server.request.start', onStart);
  const rows: FanoutRow[] = [];
  try {
    await emu('POST', 'risk/timing', { completeAfterMs: 0 });
    for (const n of counts) {
      const clients = new ClientProcess();
      try {
        const before = await idleMemory();
        await clients.call({ op: 'open', url: stack.gateway.wsUrl, token: DEFAULT_TOKEN, n });
        const acc = { each: [] as number[], last: [] as number[], lost: 0, problems: new Set<string>(), rss: 0, heap: 0 };
        for (let round = 0; round <= rounds; round++) {
          calibrate();
          const id = await order();
          await clients.call({ op: 'subscribe', id });
          if (round === 1) {
            const idle = await idleMemory();
            acc.rss = (idle.rss - before.rss) / n;
            acc.heap = (idle.heap - before.heap) / n;
          }
          callbackAt = Number.NaN;
          // BENCH_FANOUT_CPUPROFILE=<file>: a V8 CPU profile of the last round of the last N.
          const profiler = process.env.BENCH_FANOUT_CPUPROFILE && round === rounds && n === counts.at(-1) ? new Session() : null;
          if (profiler) {
            profiler.connect();
            await profiler.post('Profiler.enable');
            await profiler.post('Profiler.start');
          }
          await emu('POST', 'risk/advance', { id });
          const result = (await clients.call({ op: 'collect' }))!;
          if (profiler) {
            writeFileSync(process.env.BENCH_FANOUT_CPUPROFILE!, JSON.stringify((await profiler.post('Profiler.stop')).profile));
            profiler.disconnect();
          }
          const got = result.delivered.filter((t) => !Number.isNaN(t));
          if (result.errors.length > 0) acc.problems.add(result.errors.slice(0, 2).join(' | '));
          if (Number.isNaN(callbackAt)) acc.problems.add('no callback seen at the gateway');
          if (round === 0) continue;
          acc.lost += n - got.length;
          acc.each.push(...got.map((t) => t - callbackAt));
          if (got.length > 0) acc.last.push(Math.max(...got) - callbackAt);
        }
        await clients.call({ op: 'close' });
        rows.push({
          subscribers: n,
          rounds,
          eachP50: pct(acc.each, 50),
          eachP99: pct(acc.each, 99),
          lastP50: pct(acc.last, 50),
          lastP99: pct(acc.last, 99),
          lost: acc.lost,
          rssPerSubscriber: acc.rss,
          heapPerSubscriber: acc.heap,
          problems: [...acc.problems],
        });
      } finally {
        clients.kill();
      }
    }
  } finally {
    dc.unsubscribe('http.server.request.start', onStart);
    await stack.close();
  }
  return rows;
}

export function printFanoutRows(rows: FanoutRow[]): void {
  console.log('\nSubscription fan-out on one gateway (one connection per subscriber, clients in another process; one shared subgraph subscription)\n');
  console.log('| subscribers | rounds | callback → each delivery p50 | p99 | callback → last delivery p50 | p99 | lost | idle RSS per subscriber | idle heap per subscriber |');
  console.log('|---|---|---|---|---|---|---|---|---|');
  for (const r of rows) {
    console.log(
      `| ${r.subscribers} | ${r.rounds} | ${r.eachP50.toFixed(1)} ms | ${r.eachP99.toFixed(1)} ms | ${r.lastP50.toFixed(1)} ms | ${r.lastP99.toFixed(1)} ms | ${r.lost} | ${(r.rssPerSubscriber / 1024).toFixed(1)} KB | ${(r.heapPerSubscriber / 1024).toFixed(1)} KB |`,
    );
  }
  for (const r of rows) for (const p of r.problems) console.log(`- ${r.subscribers}: ${p}`);
}

if (process.argv.includes('--clients')) serveClients();
else if (import.meta.url === `file://${process.argv[1]}`) printFanoutRows(await runFanoutBench());
