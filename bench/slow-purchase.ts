/**
 * Slow company datasets: the GET + 302 → IT-check_id polling flow against the POST + callback
 * variant (`subgraphs/company/slow-purchase.ts`, `COMPANY_SLOW_PURCHASE`). For each mode and each
 * preparation time of the upstream, N queries needing IT-stakeholders (distinct companies, cold
 * cache): time to the answer (p50, max), upstream calls and euro per query.
 *
 * `npx tsx bench/slow-purchase.ts [N]` (default 5). Uses the embedded emulator on real time (its
 * `slow` control sets how long a slow dataset takes to prepare).
 */
import { registeredVats } from '../emulator/company/index.ts';
import { startTestStack } from '../test/support/stack.ts';

const N = Number(process.argv[2] ?? 5);
const DELAYS_MS = [500, 1500, 4000];
const QUERY = `query($vat: String!) { company(vatCode: $vat) { managers { __typename } } }`;

const pct = (xs: number[], p: number): number => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))] ?? 0;

async function run(mode: 'poll' | 'callback'): Promise<void> {
  const t = await startTestStack({ LAYER_SECRET: 'bench-slow-purchase-secret-0123456789', COMPANY_SLOW_PURCHASE: mode, OPENAPI_SLOW_BUDGET_MS: '60000' });
  const vats = registeredVats(mode === 'poll' ? 0 : 1000, N * DELAYS_MS.length);
  try {
    let v = 0;
    for (const delay of DELAYS_MS) {
      await t.control('company/slow', { ms: delay });
      const times: number[] = [];
      await t.clearCalls();
      let euro = 0;
      for (let i = 0; i < N; i++) {
        const vat = vats[v++];
        const started = performance.now();
        const res = await t.gql(QUERY, { vat });
        times.push(performance.now() - started);
        if (res.errors) throw new Error(JSON.stringify(res.errors));
        euro += res.extensions?.cost?.euro ?? 0;
      }
      const calls = await t.calls('company');
      console.log(
        `${mode.padEnd(8)} prepared in ${String(delay).padStart(4)} ms: answer p50 ${pct(times, 0.5).toFixed(0)} ms, max ${Math.max(...times).toFixed(0)} ms; ` +
          `${(calls.length / N).toFixed(2)} calls/query (${calls.filter((c) => c.path.startsWith('/IT-check_id')).length / N} polls), €${(euro / N).toFixed(2)}/query`,
      );
    }
  } finally {
    await t.close();
  }
}

await run('poll');
await run('callback');
