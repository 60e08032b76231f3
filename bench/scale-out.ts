/**
 * The layer scaled out on Redis, part of `npm run bench`, measured next to its one-process memory
 * baseline in the same run:
 *
 * 1. **Subscription fan-out.** N graphql-ws subscribers (one connection each, in a worker thread:
 *    `bench/subscriber-pool.ts`) of one patrimonial report, subscribed with
 *    `riskRequestUpdated(id:, family:)`; the emulator completes the request
 *    (`POST /_emulator/risk/advance`, requests never complete by themselves) and POSTs the callback
 *    to the gateway the request was ordered through. Timed: callback in (the gateway's HTTP server
 *    has its headers) → each subscriber's COMPLETE and → the last one; subscribers that never got
 *    it are lost.
 *    - *memory*: the one-process stack (`startStack`, as `bench/subscriptions.ts`), every
 *      subscriber on its one gateway; callback times from `node:diagnostics_channel` in process.
 *    - *Redis*: separate processes as an operator runs them: one emulator, two gateways (A, B), each
 *      over its own company and risk subgraph processes, all on one Redis (`REDIS_URL`, a
 *      `REDIS_PREFIX` of this run) with one `LAYER_SECRET`. Subscribers alternate between A and
 *      B; rounds alternate the gateway the request is ordered through (so the callback reaches A
 *      in one round and B in the next). Each gateway is preloaded with `bench/callback-probe.ts`,
 *      which prints when a callback came in and was answered. A subscriber on the other gateway
 *      hears the change through Redis pub/sub.
 * 2. **Company operations through two replicas.** The scenarios of `bench/run.ts` through gateways
 *    A and B alternately (operation i through `i % 2`): cold (the shared Redis cache emptied) and
 *    warm, upstream calls and euro per operation, p50/p99 of sequential operations, operations per
 *    second with the same number of clients; next to the one-process memory rows of `bench/run.ts`.
 *
 * Every process is stopped at the end and the run's keys are removed from Redis (SCAN + UNLINK of
 * its prefix). Environment: `BENCH_SCALE_OUT=0` skips all of it; `REDIS_URL` (default
 * redis://127.0.0.1:6379); `BENCH_SCALE_OUT_SUBSCRIBERS` (default 100,1000);
 * `BENCH_SCALE_OUT_ROUNDS` (counted rounds per N; default 10 up to 100 subscribers, else 5; one
 * more, not counted, warms up).
 */
import { randomBytes } from 'node:crypto';
import { makeFiscalCode } from '../contract/checksums.ts';
import { DEFAULT_TOKEN } from '../emulator/server.ts';
import { baseEnv, emulatorControl, freePort, gqlAt, otherSubgraphs, spawnService, subgraphUrlsEnv, until, type Service } from '../services/processes.ts';
import { startStack } from '../stack.ts';
import { closeRedis, connectRedis, unlinkMatching } from '../platform/redis.ts';
import { RedisCacheStore } from '../subgraphs/upstream/redis-cache.ts';
import { parseProbeLines, watchCallbacks, type CallbackTimes } from './callback-probe.ts';
import { calibrate, ms, now, pct, WorkerPool, type SubscriberPool } from './subscriber-pool.ts';

/** A company scenario of `bench/run.ts`. */
export interface CompanyScenario {
  name: string;
  query: string;
  /** Companies to run it on (cold: each once). */
  vats: string[];
}

/** A company row of `bench/run.ts` (its `layer, cold` and `layer, warm` rows are the baseline). */
export interface CompanyRow {
  scenario: string;
  mode: string;
  calls: number;
  euro: number;
  p50: number;
  p99: number;
  rps: number;
}

export interface ScaleOutOptions {
  /** Emulator latency per upstream call (company and risk). */
  latencyMs: number;
  /** Sequential operations per warm row. */
  operations: number;
  /** Clients in parallel for operations per second. */
  concurrency: number;
  throughputMs: number;
  scenarios: readonly CompanyScenario[];
  /** The one-process memory rows measured earlier in the run. */
  memoryRows: readonly CompanyRow[];
}

const MEMORY = 'one process, memory';
const REDIS = '2 gateways, 2 × 2 subgraph processes, Redis';
const FAMILY = 'PATRIMONIAL';
const ORDER = `mutation($input: PersonSubjectInput!) { orderPatrimonialReport(level: STANDARD, input: $input) { id state } }`;
/** How long a round waits for every subscriber's final state before counting the rest as lost. */
const COLLECT_MS = 10_000;
/** How long a process may take to stop on SIGTERM before it is killed. */
const STOP_MS = 5_000;

const subscriberCounts = (): number[] => {
  const list = (process.env.BENCH_SCALE_OUT_SUBSCRIBERS ?? '100,1000')
    .split(',')
    .map((s) => Number(s.trim()))
    .filter((n) => Number.isInteger(n) && n > 0);
  return list.length > 0 ? list : [100, 1000];
};

const roundsFor = (n: number): number => {
  const override = Number(process.env.BENCH_SCALE_OUT_ROUNDS);
  if (Number.isInteger(override) && override > 0) return override;
  return n <= 100 ? 10 : 5;
};

// ---------------------------------------------------------------------------------------------
// Subscription fan-out

/** One setup the fan-out runs on. */
interface FanoutTarget {
  stack: string;
  emulatorUrl: string;
  /** graphql-ws URLs; subscriber i connects to `wsUrls[i % wsUrls.length]`. */
  wsUrls: string[];
  /** Gateway (origin) the request of `round` is ordered through. */
  orderVia(round: number): string;
  /** Which gateway (index into `wsUrls`) a callback came in through, and its times: the ones seen since the last call. */
  takeCallbacks(): Promise<Array<CallbackTimes & { gateway: number }>>;
}

interface FanoutRow {
  stack: string;
  subscribers: number;
  rounds: number;
  subscribe: number;
  eachP50: number;
  eachP99: number;
  lastP50: number;
  lastP99: number;
  sameP50: number;
  otherP50: number;
  advanceLastP50: number;
  answeredP50: number;
  emulatorCalls: number;
  lost: number;
  problems: string[];
}

async function fanout(target: FanoutTarget, n: number, taxCode: string): Promise<FanoutRow> {
  const emu = (method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown) => emulatorControl(target.emulatorUrl, method, path, body);
  const authorization = `Bearer ${DEFAULT_TOKEN}`;
  const rounds = roundsFor(n);
  const acc = {
    subscribe: [] as number[],
    each: [] as number[],
    last: [] as number[],
    same: [] as number[],
    other: [] as number[],
    advanceLast: [] as number[],
    answered: [] as number[],
    emulatorCalls: 0,
    lost: 0,
    problems: new Set<string>(),
  };
  const pool: SubscriberPool = new WorkerPool(target.wsUrls, DEFAULT_TOKEN);
  try {
    await pool.open(n);
    for (let round = 0; round <= rounds; round++) {
      const counted = round > 0; // round 0 warms up
      await emu('DELETE', 'calls');
      await emu('DELETE', 'callbacks');
      await target.takeCallbacks();
      calibrate();
      const ordered = await gqlAt<{ orderPatrimonialReport: { id: string } }>(
        target.orderVia(round),
        ORDER,
        { input: { name: 'Mario', surname: 'Rossi', taxCode } },
        { authorization },
      );
      if (ordered.errors || !ordered.data) throw new Error(`order failed: ${JSON.stringify(ordered.errors)}`);
      const id = ordered.data.orderPatrimonialReport.id;

      const tSub = now();
      await pool.subscribe(id, FAMILY);
      const subscribed = now() - tSub;

      const t0 = now();
      const adv = (await emu('POST', 'risk/advance', { id })) as { advanced?: string[] };
      if (!adv.advanced?.includes(id)) acc.problems.add(`advance did not complete ${id}`);
      const result = await pool.collect(COLLECT_MS);

      const log = (await emu('GET', 'callbacks')) as Array<{ status: number | null }>;
      if (log.length !== 1 || log[0].status !== 200) acc.problems.add(`callback deliveries: ${JSON.stringify(log.map((l) => l.status))}`);
      // A process's line may still be in its pipe: wait for it a little (it was printed before the
      // emulator had the 200, so before `advance` answered).
      const seen: Array<CallbackTimes & { gateway: number }> = [];
      await until(
        'the callback times',
        async () => {
          seen.push(...(await target.takeCallbacks()).filter((c) => c.area === 'risk'));
          return seen.length > 0 ? true : undefined;
        },
        2_000,
      ).catch(() => undefined);
      if (seen.length !== 1) acc.problems.add(`${seen.length} callback requests at the gateways in a round`);
      const calls = (await emu('GET', 'calls?area=risk')) as unknown[];
      const got = result.delivered.map((t, i) => ({ t, gateway: i % target.wsUrls.length })).filter((d) => !Number.isNaN(d.t));
      if (result.errors.length > 0) acc.problems.add(`errors: ${result.errors.slice(0, 2).join(' | ')}`);
      if (result.unexpected > 0) acc.problems.add(`${result.unexpected} unexpected events`);
      if (result.ended < got.length) acc.problems.add(`${got.length - result.ended} streams not ended after COMPLETE`);
      if (!counted) continue;

      acc.subscribe.push(subscribed);
      acc.lost += n - got.length;
      acc.emulatorCalls += calls.length;
      if (got.length > 0) acc.advanceLast.push(Math.max(...got.map((d) => d.t)) - t0);
      const cb = seen[0];
      if (cb) {
        acc.answered.push(cb.answered - cb.arrived);
        acc.each.push(...got.map((d) => d.t - cb.arrived));
        if (got.length > 0) acc.last.push(Math.max(...got.map((d) => d.t)) - cb.arrived);
        for (const d of got) (d.gateway === cb.gateway ? acc.same : acc.other).push(d.t - cb.arrived);
      }
    }
  } finally {
    await pool.close().catch(() => undefined);
  }
  return {
    stack: target.stack,
    subscribers: n,
    rounds,
    subscribe: pct(acc.subscribe, 50),
    eachP50: pct(acc.each, 50),
    eachP99: pct(acc.each, 99),
    lastP50: pct(acc.last, 50),
    lastP99: pct(acc.last, 99),
    sameP50: pct(acc.same, 50),
    otherP50: pct(acc.other, 50),
    advanceLastP50: pct(acc.advanceLast, 50),
    answeredP50: pct(acc.answered, 50),
    emulatorCalls: acc.emulatorCalls / rounds,
    lost: acc.lost,
    problems: [...acc.problems],
  };
}

/** The fan-out on the one-process memory stack. */
async function memoryFanout(latencyMs: number, taxCode: string): Promise<FanoutRow[]> {
  // baseEnv: no REDIS_URL (or any other layer setting) of the bench's environment.
  const stack = await startStack({ env: baseEnv({ EMULATOR_TOKEN: DEFAULT_TOKEN }), port: 0, emulator: { latencyMs: { company: latencyMs, risk: latencyMs } } });
  const seen: CallbackTimes[] = [];
  const unwatch = watchCallbacks(now, (t) => seen.push(t));
  try {
    await emulatorControl(stack.emulatorUrl!, 'POST', 'risk/timing', { completeAfterMs: 0 });
    const target: FanoutTarget = {
      stack: MEMORY,
      emulatorUrl: stack.emulatorUrl!,
      wsUrls: [stack.gateway.wsUrl],
      orderVia: () => stack.gateway.url,
      takeCallbacks: async () => seen.splice(0).map((t) => ({ ...t, gateway: 0 })),
    };
    const rows: FanoutRow[] = [];
    for (const n of subscriberCounts()) rows.push(await fanout(target, n, taxCode));
    return rows;
  } finally {
    unwatch();
    await stack.close();
  }
}

// ---------------------------------------------------------------------------------------------
// The separate processes on Redis

interface Replicas {
  emulatorUrl: string;
  /** Gateway origins, A and B. */
  gateways: string[];
  gatewayServices: Service[];
}

/** Spawns the emulator, the four subgraph processes and the two gateways; each is pushed to `services` as soon as it runs. */
async function startReplicas(services: Service[], redisUrl: string, prefix: string, latencyMs: number): Promise<Replicas> {
  const started = async (pending: Array<Promise<Service>>): Promise<Service[]> => {
    const settled = await Promise.allSettled(pending);
    for (const s of settled) if (s.status === 'fulfilled') services.push(s.value);
    const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
    if (failed) throw failed.reason;
    return settled.map((s) => (s as PromiseFulfilledResult<Service>).value);
  };
  const env = baseEnv({ LAYER_SECRET: randomBytes(24).toString('hex'), REDIS_URL: redisUrl, REDIS_PREFIX: prefix, EMULATOR_TOKEN: DEFAULT_TOKEN });
  const [emu] = await started([spawnService('emulator', 'emulator', [], { ...env, EMULATOR_PORT: '0' })]);
  const emulatorUrl = emu.url;
  for (const area of ['company', 'risk']) await emulatorControl(emulatorUrl, 'POST', 'latency', { area, ms: latencyMs });
  // Requests complete only on `advance`, never by themselves.
  await emulatorControl(emulatorUrl, 'POST', 'risk/timing', { completeAfterMs: 0 });

  const ports = [await freePort(), await freePort()];
  const subgraphs = await started(
    ports.flatMap((port, i) => {
      const subgraphEnv = { ...env, OPENAPI_EMULATOR_URL: emulatorUrl, PUBLIC_URL: `http://127.0.0.1:${port}`, SUBGRAPH_PORT: '0' };
      return [spawnService(`company-${'AB'[i]}`, 'subgraph', ['company'], subgraphEnv), spawnService(`risk-${'AB'[i]}`, 'subgraph', ['risk'], subgraphEnv)];
    }),
  );
  // The subgraphs the bench does not exercise, in one process both gateways share.
  const rest = otherSubgraphs(['company', 'risk']);
  const [others] = await started([
    spawnService('others', 'subgraph', rest, { ...env, OPENAPI_EMULATOR_URL: emulatorUrl, PUBLIC_URL: `http://127.0.0.1:${ports[0]}`, SUBGRAPH_PORT: '0' }),
  ]);
  const probe = ['--import', new URL('./callback-probe.ts', import.meta.url).href];
  const gatewayServices = await started(
    ports.map((port, i) =>
      spawnService(
        `gateway-${'AB'[i]}`,
        'gateway',
        [],
        {
          ...env,
          PORT: String(port),
          SUBGRAPH_COMPANY_URL: `${subgraphs[2 * i].url}/company/graphql`,
          SUBGRAPH_RISK_URL: `${subgraphs[2 * i + 1].url}/risk/graphql`,
          ...subgraphUrlsEnv(others.url, rest),
          BENCH_CALLBACK_PROBE: '1',
        },
        { nodeArgs: probe },
      ),
    ),
  );
  return { emulatorUrl, gateways: gatewayServices.map((g) => g.url), gatewayServices };
}

/** SIGTERM to every process (gateways first, the emulator last), SIGKILL to one that does not stop in time. */
async function stopAll(services: Service[]): Promise<void> {
  const rank = (s: Service): number => (s.name.startsWith('gateway') ? 0 : s.name === 'emulator' ? 2 : 1);
  for (const r of [0, 1, 2]) {
    await Promise.all(
      services
        .filter((s) => rank(s) === r)
        .map(async (s) => {
          const timer = setTimeout(() => s.proc.kill('SIGKILL'), STOP_MS);
          try {
            await s.kill('SIGTERM');
          } finally {
            clearTimeout(timer);
          }
        }),
    );
  }
}

async function redisFanout(replicas: Replicas, taxCode: string): Promise<FanoutRow[]> {
  const read = replicas.gatewayServices.map(() => 0);
  const target: FanoutTarget = {
    stack: REDIS,
    emulatorUrl: replicas.emulatorUrl,
    wsUrls: replicas.gateways.map((g) => `${g.replace(/^http/, 'ws')}/graphql`),
    orderVia: (round) => replicas.gateways[round % replicas.gateways.length],
    takeCallbacks: async () =>
      replicas.gatewayServices.flatMap((g, i) => {
        const out = g.output();
        // Complete lines only: a line still being written is read next time.
        const end = out.lastIndexOf('\n') + 1;
        const fresh = end > read[i] ? out.slice(read[i], end) : '';
        read[i] = Math.max(read[i], end);
        return parseProbeLines(fresh).map((t) => ({ ...t, gateway: i }));
      }),
  };
  const rows: FanoutRow[] = [];
  for (const n of subscriberCounts()) rows.push(await fanout(target, n, taxCode));
  return rows;
}

// ---------------------------------------------------------------------------------------------
// Company operations through two replicas

async function companyThroughReplicas(replicas: Replicas, cache: RedisCacheStore, opts: ScaleOutOptions): Promise<CompanyRow[]> {
  const { gateways } = replicas;
  const gql = async (i: number, query: string, variables: Record<string, unknown>) => {
    const res = await gqlAt(gateways[i % gateways.length], query, variables);
    if (res.errors) throw new Error(JSON.stringify(res.errors));
    return res.extensions?.cost ?? { upstreamCalls: Number.NaN, euro: Number.NaN };
  };
  const throughput = async (fn: (i: number) => Promise<unknown>): Promise<number> => {
    let done = 0;
    const end = Date.now() + opts.throughputMs;
    await Promise.all(
      Array.from({ length: opts.concurrency }, async (_, w) => {
        for (let i = w; Date.now() < end; i += opts.concurrency) {
          await fn(i);
          done++;
        }
      }),
    );
    return done / (opts.throughputMs / 1000);
  };
  const sequential = async (count: number, fn: (i: number) => Promise<{ upstreamCalls: number; euro: number }>) => {
    const lat: number[] = [];
    let calls = 0;
    let euro = 0;
    for (let i = 0; i < count; i++) {
      const t0 = performance.now();
      const cost = await fn(i);
      lat.push(performance.now() - t0);
      calls += cost.upstreamCalls;
      euro += cost.euro;
    }
    return { calls: calls / count, euro: euro / count, p50: pct(lat, 50), p99: pct(lat, 99) };
  };

  const rows: CompanyRow[] = [];
  for (const sc of opts.scenarios) {
    // Each gateway plans the query once before it is timed (not counted).
    for (let g = 0; g < gateways.length; g++) await gql(g, sc.query, { v: sc.vats[0] });
    // Cold: every company once, the shared cache empty; operation i through gateway i % 2.
    await cache.clear();
    const cold = await sequential(sc.vats.length, (i) => gql(i, sc.query, { v: sc.vats[i] }));
    await cache.clear();
    const coldRps = await throughput(async (i) => {
      if (i % sc.vats.length === 0) await cache.clear();
      return gql(i, sc.query, { v: sc.vats[i % sc.vats.length] });
    });
    rows.push({ scenario: sc.name, mode: 'cold', ...cold, rps: coldRps });

    // Warm: the same company again and again, bought once through A.
    const v0 = sc.vats[0];
    await gql(0, sc.query, { v: v0 });
    const warm = await sequential(opts.operations, (i) => gql(i, sc.query, { v: v0 }));
    const warmRps = await throughput((i) => gql(i, sc.query, { v: v0 }));
    rows.push({ scenario: sc.name, mode: 'warm', ...warm, rps: warmRps });
  }
  return rows;
}

// ---------------------------------------------------------------------------------------------

export async function runScaleOutBench(opts: ScaleOutOptions): Promise<void> {
  if (process.env.BENCH_SCALE_OUT === '0') {
    console.log('\nScale-out on Redis: skipped (BENCH_SCALE_OUT=0).');
    return;
  }
  const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
  const prefix = `bench:scale-out:${randomBytes(4).toString('hex')}:`;
  const taxCode = makeFiscalCode({ surname: 'Rossi', name: 'Mario', birthDate: '1990-04-28', gender: 'M', cadastralCode: 'L117' });
  const started = Date.now();

  const fanoutRows = await memoryFanout(opts.latencyMs, taxCode);

  const redis = connectRedis(redisUrl, { prefix, name: 'bench' });
  const services: Service[] = [];
  let companyRows: CompanyRow[];
  let removed: number;
  try {
    try {
      await redis.ping();
    } catch (err) {
      throw new Error(`Redis unreachable at ${new URL(redisUrl).host} (${(err as Error).message}): start it, set REDIS_URL, or skip this part with BENCH_SCALE_OUT=0`, {
        cause: err,
      });
    }
    const replicas = await startReplicas(services, redisUrl, prefix, opts.latencyMs);
    fanoutRows.push(...(await redisFanout(replicas, taxCode)));
    companyRows = await companyThroughReplicas(replicas, new RedisCacheStore(redis), opts);
  } finally {
    await stopAll(services);
    removed = await unlinkMatching(redis).catch(() => Number.NaN);
    await closeRedis(redis);
  }

  // Fan-out table.
  const byN = (a: FanoutRow, b: FanoutRow): number => a.subscribers - b.subscribers || (a.stack === MEMORY ? -1 : 1);
  console.log(
    `\nScale-out, subscription fan-out: one request, N graphql-ws subscribers (one connection each, in a worker thread) of \`riskRequestUpdated(id:, family: ${FAMILY})\`, ` +
      `completed by the emulator's \`advance\`, which POSTs the upstream callback to the gateway the request was ordered through. ` +
      `"${MEMORY}": \`startStack\`, every subscriber on its one gateway. "${REDIS}": gateways A and B as separate processes, each over its own company and risk subgraph processes, ` +
      `one emulator process, one Redis; subscribers alternate between A and B, rounds alternate the ordering gateway. ` +
      `"callback in": the callback's headers reached the gateway's HTTP server; "answered": the gateway's 200 to it (the risk subgraph re-reads the request upstream, stores and publishes first). ` +
      `"callback's gateway" / "other gateway": deliveries to subscribers on the gateway the callback came in through / on the other one (through Redis pub/sub). ` +
      `Upstream latency ${opts.latencyMs} ms per call; the first round of each N is not counted; "last delivery" p99 is over rounds (few: close to the maximum).\n`,
  );
  console.log(
    "| stack | subscribers | rounds | subscribe all (initial state) p50 | callback in → each delivery p50 | p99 | callback in → last delivery p50 | p99 | each delivery p50, callback's gateway | other gateway | advance → last delivery p50 | callback answered p50 | emulator risk calls/round | lost |",
  );
  console.log('|---|---|---|---|---|---|---|---|---|---|---|---|---|---|');
  for (const r of [...fanoutRows].sort(byN)) {
    console.log(
      `| ${r.stack} | ${r.subscribers} | ${r.rounds} | ${ms(r.subscribe)} | ${ms(r.eachP50)} | ${ms(r.eachP99)} | ${ms(r.lastP50)} | ${ms(r.lastP99)} | ${ms(r.sameP50)} | ${r.stack === MEMORY ? '—' : ms(r.otherP50)} | ${ms(r.advanceLastP50)} | ${ms(r.answeredP50)} | ${r.emulatorCalls.toFixed(2)} | ${r.lost} |`,
    );
  }
  const problems = fanoutRows.flatMap((r) => r.problems.map((p) => `- ${r.stack}, ${r.subscribers} subscribers: ${p}`));
  if (problems.length > 0) console.log(`\nProblems seen:\n${problems.join('\n')}`);

  // Company table.
  console.log(
    `\nScale-out, company operations: "${MEMORY}" rows are the layer rows of the first table; "2 replicas on Redis" runs operation i through gateway A or B (i % 2), each gateway over its own company subgraph process, ` +
      `one shared Redis cache ("cold": emptied first, every company once; "warm": the same company again and again); each gateway runs each query once before it is timed. ` +
      `Upstream latency ${opts.latencyMs} ms per call, ${opts.operations} sequential operations per warm row, ${opts.concurrency} clients for ${opts.throughputMs} ms for throughput.\n`,
  );
  console.log('| scenario | stack | mode | upstream calls/op | euro/op | p50 | p99 | ops/s |');
  console.log('|---|---|---|---|---|---|---|---|');
  for (const sc of opts.scenarios) {
    for (const mode of ['cold', 'warm']) {
      const mem = opts.memoryRows.find((r) => r.scenario === sc.name && r.mode === `layer, ${mode}`);
      const rep = companyRows.find((r) => r.scenario === sc.name && r.mode === mode);
      for (const [stack, r] of [
        [MEMORY, mem],
        ['2 replicas on Redis, A/B alternately', rep],
      ] as const) {
        if (r) console.log(`| ${sc.name} | ${stack} | ${mode} | ${r.calls.toFixed(2)} | ${r.euro.toFixed(4)} | ${ms(r.p50)} | ${ms(r.p99)} | ${r.rps.toFixed(0)} |`);
      }
    }
  }
  console.log(
    `\nScale-out part: ${((Date.now() - started) / 1000).toFixed(0)} s; ${services.length} processes stopped; ${Number.isNaN(removed) ? 'Redis keys of the run NOT removed' : `${removed} Redis keys of prefix ${prefix} removed`}.`,
  );
}
