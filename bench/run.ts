/**
 * `npm run bench`: what company operations cost through the layer, cold and warm, against the
 * embedded emulator with a realistic per-call latency; beside them the same data fetched by calling
 * the REST endpoints directly (every request paid, no cache, no de-duplication).
 *
 * Prints a table: upstream calls and euro per operation, p50/p99 latency of sequential operations,
 * and operations per second with BENCH_CONCURRENCY clients in parallel.
 */
import { request } from 'undici';
import { DEFAULT_TOKEN } from '../emulator/server.ts';
import { registeredVats } from '../emulator/company/index.ts';
import { priceOf } from '../contract/prices.ts';
import { startStack } from '../stack.ts';
import { runFaultBench } from './faults.ts';
import { runSubscriptionBench } from './subscriptions.ts';
import { runScaleOutBench, type CompanyRow } from './scale-out.ts';
import { runPostalBench } from './postal.ts';
import { runPecBench } from './pec.ts';
import { runInvoicingBench } from './invoicing.ts';
import { runCompanyPlansBench } from './company-plans.ts';
import { runSpeedBench } from './speed.ts';
import { runAlternativeBench } from './alternative.ts';
import { runStoreBench } from './store.ts';

const LATENCY_MS = Number(process.env.BENCH_UPSTREAM_LATENCY_MS ?? 40);
const N = Number(process.env.BENCH_OPERATIONS ?? 40);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);
const THROUGHPUT_MS = Number(process.env.BENCH_THROUGHPUT_MS ?? 3000);

interface Scenario {
  name: string;
  query: string;
  /** REST paths a client without the layer calls for the same data: phases in order, calls of a phase in parallel. */
  rest: (vat: string) => string[][];
  /** Companies to run it on (cold: each once). */
  vats: string[];
}

const registered = registeredVats;

const SCENARIOS: Scenario[] = [
  {
    name: 'identity + address',
    query: `query($v: String!) { company(vatCode: $v) { companyName vatCode address { streetName zipCode town } } }`,
    rest: (v) => [[`/IT-start/${v}`]],
    vats: registered(2_000_000, N),
  },
  {
    name: 'profile: identity, address, managers, shareholders, ecofin',
    query: `query($v: String!) { company(vatCode: $v) { companyName address { town } managers { roles { role { code } } } shareholders { percentShare } ecofin { turnover netWorth } } }`,
    // without the layer: the two endpoints named after the needs (stakeholders + marketing)
    rest: (v) => [[`/IT-stakeholders/${v}`, `/IT-marketing/${v}`]],
    vats: registered(3_000_000, N),
  },
  {
    name: 'ownership walk: company → company shareholders → their address',
    query: `query($v: String!) { company(vatCode: $v) { companyName shareholders { percentShare owners { ... on ShareholderCompany { company { companyName address { town } } } } } } }`,
    rest: (v) => [[`/IT-stakeholders/${v}`], ownersOf(v).map((o) => `/IT-start/${o}`)],
    vats: ['04123450159', '03456783053', '03456782055', '03456781057', '12485671007'],
  },
];

const owners = new Map<string, string[]>();
const ownersOf = (v: string): string[] => owners.get(v) ?? [];

const pct = (xs: number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? 0;
};
const ms = (n: number): string => `${n.toFixed(1)} ms`;

interface Row extends CompanyRow {
  /** Worst-case euro the gateway estimated per operation (same for every mode). */
  estimate: number;
}

async function main(): Promise<void> {
  const stack = await startStack({ env: { ...process.env, OPENAPI_ENV: 'emulator' }, port: 0, emulator: { latencyMs: { company: LATENCY_MS, risk: LATENCY_MS } } });
  const emu = stack.emulatorUrl!;
  const gql = async (query: string, variables: Record<string, unknown>) => {
    const res = await request(stack.gateway.graphqlUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query, variables }) });
    const body = (await res.body.json()) as { errors?: unknown[]; data?: unknown; extensions?: { cost?: { upstreamCalls: number; euro: number; estimate: { euro: number } } } };
    if (body.errors) throw new Error(JSON.stringify(body.errors));
    return body;
  };
  const rest = async (path: string) => {
    const res = await request(`${emu}/company${path}`, { headers: { authorization: `Bearer ${DEFAULT_TOKEN}` } });
    await res.body.dump();
    return res.statusCode;
  };
  const restPhases = async (phases: string[][]): Promise<void> => {
    for (const phase of phases) await Promise.all(phase.map(rest));
  };
  const timed = async (fn: () => Promise<unknown>): Promise<number> => {
    const t0 = performance.now();
    await fn();
    return performance.now() - t0;
  };
  const throughput = async (fn: (i: number) => Promise<unknown>): Promise<number> => {
    let done = 0;
    const end = Date.now() + THROUGHPUT_MS;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async (_, w) => {
        for (let i = w; Date.now() < end; i += CONCURRENCY) {
          await fn(i);
          done++;
        }
      }),
    );
    return done / (THROUGHPUT_MS / 1000);
  };

  // Learn the company shareholders of the walk companies (for the direct-REST column).
  for (const v of SCENARIOS[2].vats) {
    const r = (await gql(`query($v: String!) { company(vatCode: $v) { shareholders { owners { ... on ShareholderCompany { company { vatCode } } } } } }`, { v })) as {
      data: { company: { shareholders: Array<{ owners: Array<{ company?: { vatCode: string } }> }> } };
    };
    owners.set(v, [...new Set(r.data.company.shareholders.flatMap((s) => s.owners.flatMap((o) => (o.company ? [o.company.vatCode] : []))))]);
  }

  const rows: Row[] = [];
  for (const sc of SCENARIOS) {
    // Cold: every company once, cache empty.
    await stack.upstream.clearCache();
    const cold = { lat: [] as number[], calls: 0, euro: 0, estimate: 0 };
    for (const v of sc.vats) {
      let cost = { upstreamCalls: 0, euro: 0, estimate: { euro: 0 } };
      cold.lat.push(await timed(async () => (cost = (await gql(sc.query, { v })).extensions!.cost!)));
      cold.calls += cost.upstreamCalls;
      cold.euro += cost.euro;
      cold.estimate = Math.max(cold.estimate, cost.estimate.euro);
      if (cost.euro > cost.estimate.euro + 1e-9) throw new Error(`${sc.name}: spent €${cost.euro}, more than the estimate €${cost.estimate.euro}`);
    }
    await stack.upstream.clearCache();
    const coldRps = await throughput(async (i) => {
      if (i % sc.vats.length === 0) await stack.upstream.clearCache();
      return gql(sc.query, { v: sc.vats[i % sc.vats.length] });
    });
    rows.push({
      scenario: sc.name,
      mode: 'layer, cold',
      calls: cold.calls / sc.vats.length,
      euro: cold.euro / sc.vats.length,
      p50: pct(cold.lat, 50),
      p99: pct(cold.lat, 99),
      rps: coldRps,
      estimate: cold.estimate,
    });

    // Warm: the same company again and again.
    const v0 = sc.vats[0];
    await gql(sc.query, { v: v0 });
    const warm = { lat: [] as number[], calls: 0, euro: 0 };
    for (let i = 0; i < N; i++) {
      let cost = { upstreamCalls: 0, euro: 0, estimate: { euro: 0 } };
      warm.lat.push(await timed(async () => (cost = (await gql(sc.query, { v: v0 })).extensions!.cost!)));
      warm.calls += cost.upstreamCalls;
      warm.euro += cost.euro;
    }
    const warmRps = await throughput(() => gql(sc.query, { v: v0 }));
    rows.push({
      scenario: sc.name,
      mode: 'layer, warm',
      calls: warm.calls / N,
      euro: warm.euro / N,
      p50: pct(warm.lat, 50),
      p99: pct(warm.lat, 99),
      rps: warmRps,
      estimate: cold.estimate,
    });

    // Direct REST: the client calls the endpoints itself, in parallel, every time.
    const direct = { lat: [] as number[] };
    for (const v of sc.vats) direct.lat.push(await timed(() => restPhases(sc.rest(v))));
    const restPaths = sc.vats.map((v) => sc.rest(v).flat());
    const restCalls = restPaths.reduce((a, p) => a + p.length, 0) / sc.vats.length;
    const restEuro = restPaths.reduce((a, p) => a + p.reduce((s, x) => s + priceOf('company', 'GET', x), 0), 0) / sc.vats.length;
    const directRps = await throughput((i) => restPhases(sc.rest(sc.vats[i % sc.vats.length])));
    rows.push({
      scenario: sc.name,
      mode: 'direct REST',
      calls: restCalls,
      euro: restEuro,
      p50: pct(direct.lat, 50),
      p99: pct(direct.lat, 99),
      rps: directRps,
      estimate: Number.NaN,
    });
  }
  await stack.close();

  console.log(`\nUpstream latency ${LATENCY_MS} ms per call (emulator), ${N} sequential operations per row, ${CONCURRENCY} clients for ${THROUGHPUT_MS} ms for throughput.\n`);
  console.log('| scenario | mode | upstream calls/op | euro/op | estimate €/op (worst case) | p50 | p99 | ops/s |');
  console.log('|---|---|---|---|---|---|---|---|');
  for (const r of rows)
    console.log(
      `| ${r.scenario} | ${r.mode} | ${r.calls.toFixed(2)} | ${r.euro.toFixed(4)} | ${Number.isNaN(r.estimate) ? '—' : r.estimate.toFixed(4)} | ${ms(r.p50)} | ${ms(r.p99)} | ${r.rps.toFixed(0)} |`,
    );

  await runCompanyPlansBench(LATENCY_MS);

  await runFaultBench(LATENCY_MS);

  await runSubscriptionBench();

  await runScaleOutBench({ latencyMs: LATENCY_MS, operations: N, concurrency: CONCURRENCY, throughputMs: THROUGHPUT_MS, scenarios: SCENARIOS, memoryRows: rows });

  // The embedded store's commits: durable without stopping the event loop.
  await runStoreBench();

  await runPostalBench(LATENCY_MS);
  await runPecBench(LATENCY_MS);
  await runInvoicingBench(LATENCY_MS);

  // The layer beside the runtime's own ceiling (a bare Hive gateway with its response cache).
  await runSpeedBench();

  // The layer beside what a user would pick instead: GraphQL Mesh over the vendor's OpenAPI spec.
  await runAlternativeBench();
}

await main();
