/**
 * Slow company datasets: which flow answers a cold company profile first. For each flow of the layer
 * (`COMPANY_SLOW_PURCHASE`: `get`, the GET that the vendor holds until the dataset is ready and
 * answers 302 → IT-check_id past its wait; `callback`, the POST + callback variant), each upstream
 * latency and each preparation time of the dataset, N queries needing IT-stakeholders (distinct
 * companies, cold cache): time to the answer (p50, max), upstream calls and euro per query. Beside
 * them, the alternative's floor: one direct GET of the dataset (what GraphQL Mesh over the vendor's
 * OpenAPI spec sends for the same profile).
 *
 * `npx tsx bench/slow-purchase.ts [N]` (default 5). Uses the embedded emulator on real time: its
 * `company/slow` control sets the preparation time (the same whichever flow buys it) and the GET's
 * wait, scaled down here from the vendor's 30 s to 1 s so that the "past the wait" case (302, then
 * polls or the callback) is measured in seconds.
 */
import { request } from 'undici';
import { registeredVats } from '../emulator/company/index.ts';
import { DEFAULT_TOKEN } from '../emulator/server.ts';
import { startTestStack, type TestStack } from '../test/support/stack.ts';

const N = Number(process.argv[2] ?? 5);
const LATENCIES_MS = [0, 40];
/** Preparation times; the last one is past the (scaled) wait. */
const PREPARE_MS = [0, 200, 2500];
const WAIT_MS = 1000;
const FLOWS = ['get', 'callback'] as const;
const QUERY = `query($vat: String!) { company(vatCode: $vat) { managers { __typename } } }`;

const pct = (xs: number[], p: number): number => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))] ?? 0;

interface Row {
  flow: string;
  latency: number;
  prepare: number;
  p50: number;
  max: number;
  calls: number;
  polls: number;
  euro: number;
}

/** One direct GET of IT-stakeholders per company: the alternative's time to the dataset. */
async function direct(emulatorUrl: string, vats: string[]): Promise<number[]> {
  const times: number[] = [];
  for (const vat of vats) {
    const started = performance.now();
    const res = await request(`${emulatorUrl}/company/IT-stakeholders/${vat}`, { headers: { authorization: `Bearer ${DEFAULT_TOKEN}` } });
    await res.body.dump();
    times.push(performance.now() - started);
  }
  return times;
}

async function measure(t: TestStack, flow: string, latency: number, prepare: number, vats: string[]): Promise<Row> {
  await t.control('latency', { area: 'company', ms: latency });
  await t.control('company/slow', { ms: prepare, waitMs: WAIT_MS });
  await t.clearCalls();
  const times: number[] = [];
  let euro = 0;
  for (const vat of vats) {
    const started = performance.now();
    const res = await t.gql(QUERY, { vat });
    times.push(performance.now() - started);
    if (res.errors) throw new Error(JSON.stringify(res.errors));
    euro += res.extensions?.cost?.euro ?? 0;
  }
  const calls = await t.calls('company');
  return {
    flow,
    latency,
    prepare,
    p50: pct(times, 0.5),
    max: Math.max(...times),
    calls: calls.length / vats.length,
    polls: calls.filter((c) => c.path.startsWith('/IT-check_id')).length / vats.length,
    euro: euro / vats.length,
  };
}

const rows: Row[] = [];
let offset = 0;
const cells = LATENCIES_MS.length * PREPARE_MS.length;
for (const flow of FLOWS) {
  const t = await startTestStack({ LAYER_SECRET: 'bench-slow-purchase-secret-0123456789', COMPANY_SLOW_PURCHASE: flow, OPENAPI_SLOW_BUDGET_MS: '60000' });
  try {
    const vats = registeredVats(offset, N * (cells + 2));
    offset += N * (cells + 2);
    // Warm-up (connections, the planner, the JIT), not counted.
    for (const vat of vats.slice(N * cells)) await t.gql(QUERY, { vat });
    let v = 0;
    for (const latency of LATENCIES_MS)
      for (const prepare of PREPARE_MS) {
        rows.push(await measure(t, flow, latency, prepare, vats.slice(v, v + N)));
        v += N;
      }
    if (flow === 'get') {
      // The alternative's floor on the same emulator: one GET of the dataset, ready at once.
      for (const latency of LATENCIES_MS) {
        await t.control('latency', { area: 'company', ms: latency });
        await t.control('company/slow', { ms: 0, waitMs: WAIT_MS });
        const times = await direct(t.stack.emulatorUrl!, registeredVats(5000 + latency, N));
        rows.push({ flow: 'direct GET', latency, prepare: 0, p50: pct(times, 0.5), max: Math.max(...times), calls: 1, polls: 0, euro: 0.5 });
      }
    }
  } finally {
    await t.close();
  }
}

console.log(`cold profile (managers → IT-stakeholders), ${N} companies per cell, GET wait ${WAIT_MS} ms (the vendor's 30 s, scaled)`);
console.log('| flow | latency | prepared in | p50 | max | calls/query | polls/query | €/query |');
console.log('|---|---|---|---|---|---|---|---|');
for (const r of rows)
  console.log(
    `| ${r.flow} | ${r.latency} ms | ${r.prepare} ms | ${r.p50.toFixed(0)} ms | ${r.max.toFixed(0)} ms | ${r.calls.toFixed(2)} | ${r.polls.toFixed(2)} | ${r.euro.toFixed(2)} |`,
  );
