/**
 * Postal scenarios (issue 11): an address field completed as the user types, and company addresses
 * with their municipality. Upstream calls, euro and p50 latency per operation, through the layer,
 * against the embedded emulator with a per-call latency; beside the typing sequence, what a client
 * calling `cerca_comuni` directly at every key stroke would make.
 *
 * `npx tsx bench/postal.ts` alone, or from `npm run bench` (`runPostalBench`).
 */
import { request } from 'undici';
import { DEFAULT_TOKEN } from '../emulator/server.ts';
import { registeredVats } from '../emulator/company/index.ts';
import { priceOf } from '../contract/prices.ts';
import { startStack } from '../stack.ts';

const WORDS = ['Campobasso', 'Roma', 'Milano', 'Torino', 'Napoli', 'Firenze', 'Bologna', 'Venezia', 'Palermo', 'Genova'];
const PREFIXES = 10;
const COMPLETE = 'query ($p: String!) { completeMunicipality(prefix: $p, limit: 5) { istatCode name } }';
const COMPANY = 'query ($v: String!) { company(vatCode: $v) { address { town municipality { istatCode cadastralCode province { code } region { name } postalCodes } } } }';

const pct = (xs: number[], p: number): number => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))] ?? 0;
const ms = (n: number): string => `${n.toFixed(1)} ms`;

/** The prefixes typed for a word: its first 10 (a shorter word is typed whole, then with a trailing space removed and retyped). */
function prefixes(word: string): string[] {
  const out: string[] = [];
  for (let i = 1; out.length < PREFIXES; i++) out.push(word.slice(0, Math.min(i, word.length)));
  return out;
}

export async function runPostalBench(latencyMs: number, companies = 20): Promise<void> {
  const stack = await startStack({ env: { ...process.env, OPENAPI_ENV: 'emulator' }, port: 0, emulator: { latencyMs: { company: latencyMs, cap: latencyMs } } });
  const emu = stack.emulatorUrl!;
  const gql = async (query: string, variables: Record<string, unknown>) => {
    const res = await request(stack.gateway.graphqlUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query, variables }) });
    const body = (await res.body.json()) as { errors?: unknown[]; extensions?: { cost?: { upstreamCalls: number; euro: number } } };
    if (body.errors) throw new Error(JSON.stringify(body.errors));
    return body.extensions!.cost!;
  };
  const rows: string[] = [];
  try {
    // Typing: each word's 10 prefixes, cold (nothing cached) per word.
    let calls = 0;
    let euro = 0;
    const lat: number[] = [];
    for (const w of WORDS) {
      await stack.upstream.clearCache();
      for (const p of prefixes(w)) {
        const t0 = performance.now();
        const cost = await gql(COMPLETE, { p });
        lat.push(performance.now() - t0);
        calls += cost.upstreamCalls;
        euro += cost.euro;
      }
    }
    const list = priceOf('cap', 'GET', '/cerca_comuni');
    rows.push(
      `| typing 10 prefixes (layer, cold per word) | ${(calls / WORDS.length).toFixed(2)} | ${(euro / WORDS.length).toFixed(4)} (list price ${((calls / WORDS.length) * list).toFixed(4)}; inside the daily free tier) | ${ms(pct(lat, 0.5))} per key |`,
    );
    // Without the layer: one cerca_comuni per key stroke.
    const direct: number[] = [];
    for (const w of WORDS) {
      for (const p of prefixes(w)) {
        const t0 = performance.now();
        const res = await request(`${emu}/cap/cerca_comuni?comune=${encodeURIComponent(p)}`, { headers: { authorization: `Bearer ${DEFAULT_TOKEN}` } });
        await res.body.dump();
        direct.push(performance.now() - t0);
      }
    }
    rows.push(
      `| typing 10 prefixes (direct REST, one search per key) | ${PREFIXES.toFixed(2)} | list price ${(PREFIXES * list).toFixed(4)}; uses 10× the free tier | ${ms(pct(direct, 0.5))} per key |`,
    );

    // Companies with their municipality: company data cold per company, postal data shared.
    await stack.upstream.clearCache();
    const vats = registeredVats(4_000_000, companies);
    for (const [label, warmPostal] of [
      ['cold postal cache', false],
      ['postal cache warm', true],
    ] as const) {
      let c = 0;
      let e = 0;
      let pc = 0;
      const l: number[] = [];
      for (const v of vats) {
        if (!warmPostal) await stack.upstream.clearCache();
        const t0 = performance.now();
        const before = (await (await request(`${emu}/_emulator/calls?area=cap`)).body.json()) as unknown[];
        const cost = await gql(COMPANY, { v });
        l.push(performance.now() - t0);
        const after = (await (await request(`${emu}/_emulator/calls?area=cap`)).body.json()) as unknown[];
        pc += after.length - before.length;
        c += cost.upstreamCalls;
        e += cost.euro;
      }
      rows.push(
        `| company + address.municipality (${label}) | ${(c / vats.length).toFixed(2)} (postal ${(pc / vats.length).toFixed(2)}) | ${(e / vats.length).toFixed(4)} | ${ms(pct(l, 0.5))} |`,
      );
    }
  } finally {
    await stack.close();
  }
  console.log(`\nPostal (upstream latency ${latencyMs} ms per call; typing: ${WORDS.length} words × ${PREFIXES} prefixes; companies: ${companies}).\n`);
  console.log('| scenario | upstream calls/op | euro/op | p50 |');
  console.log('|---|---|---|---|');
  for (const r of rows) console.log(r);
}

if (import.meta.url === `file://${process.argv[1]}`) await runPostalBench(Number(process.env.BENCH_UPSTREAM_LATENCY_MS ?? 40));
