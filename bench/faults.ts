/**
 * The fault mix of the money-and-safety issue, measured: 200 paid reads and 20 paid orders while
 * about one operation in five meets an upstream fault (503, 429 with Retry-After, a reset after the
 * upstream charged, a hang past the timeout, an answer lost after the upstream charged), with
 * realistic latency. The reads' companies were read a day earlier (their cached copies expired, so
 * a failing read may be answered from stale data). A faulty read meets its fault on every attempt
 * (the layer retries a GET twice): a short outage; a faulty order meets it once.
 *
 * Two clients in the same run: one that retries a failed order with the idempotency key the layer
 * gives back, and a naive one that orders again without a key. Reported: share of reads answered
 * (and of those, from stale data), paid POSTs sent twice, and the wallet against the euro reported
 * (+ at risk).
 */
import { Rng, registeredVats } from '../emulator/company/index.ts';
import { makeFiscalCode } from '../contract/checksums.ts';
import { startStack } from '../stack.ts';

const TIMEOUT_MS = 800;
const WALLET = 100_000;

const FAULTS = [{ status: 503 }, { status: 429, retryAfter: 1 }, { reset: true }, { hangMs: TIMEOUT_MS + 400 }, { delayAfterMs: TIMEOUT_MS + 400 }];

interface GqlBody {
  data?: Record<string, { id?: string } | null> | null;
  errors?: Array<{ extensions?: Record<string, unknown> }>;
  extensions?: { cost?: { euro: number; atRisk?: number; staleHits?: number } };
}

interface FaultRow {
  client: string;
  readsOk: number;
  readsStale: number;
  orders: number;
  postsTwice: number;
  wallet: number;
  reported: number;
  atRisk: number;
}

async function run(withKeys: boolean, latencyMs: number): Promise<FaultRow> {
  let now = Date.now();
  const stack = await startStack({
    env: { OPENAPI_ENV: 'emulator', OPENAPI_TIMEOUT_MS: String(TIMEOUT_MS), LAYER_SECRET: 'bench-faults-secret-0123456789', RISK_POLL_MAX_CALLS_PER_MIN: '0' },
    port: 0,
    clock: () => now,
    emulator: { latencyMs: { company: latencyMs, risk: latencyMs } },
  });
  const emu = stack.emulatorUrl!;
  const control = async (path: string, method: string, body?: unknown): Promise<unknown> => {
    const res = await fetch(`${emu}/_emulator/${path}`, { method, headers: { 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await res.text();
    return text ? (JSON.parse(text) as unknown) : null;
  };
  await control('risk/timing', 'POST', { completeAfterMs: 0 });
  const { token } = (await control('tokens', 'POST', { credit: WALLET })) as { token: string };
  const gql = async (query: string, variables?: Record<string, unknown>): Promise<GqlBody> => {
    const res = await fetch(stack.gateway.graphqlUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ query, variables }),
    });
    return (await res.json()) as GqlBody;
  };
  const quiescent = async (): Promise<void> => {
    while (((await control('inflight', 'GET')) as { count: number }).count > 0) await new Promise((r) => setTimeout(r, 10));
  };

  const vats = registeredVats(5_100_000, 40);
  const readQuery = (v: string) => `{ company(vatCode: "${v}") { companyName address { town } } }`;
  // Yesterday's reads (not counted in the wallet comparison below).
  for (const v of vats) await gql(readQuery(v));
  now += 25 * 3600_000;
  const spentBefore = WALLET - ((await control(`tokens/${token}`, 'GET')) as { credit: number }).credit;

  const seeded = new Rng('20261123');
  const random = (): number => seeded.next();
  let reported = 0;
  let atRisk = 0;
  let readsOk = 0;
  let readsStale = 0;
  let orders = 0;
  const account = (b: GqlBody): void => {
    reported += b.extensions?.cost?.euro ?? 0;
    atRisk += b.extensions?.cost?.atRisk ?? 0;
  };
  for (let step = 0; step < 220; step++) {
    const isOrder = step % 11 === 10;
    const faulty = random() < 0.2;
    const fault = FAULTS[Math.floor(random() * FAULTS.length)];
    if (!isOrder) {
      // A faulty read meets the fault on each of its attempts (the layer retries GETs twice): an outage.
      if (faulty) await control('faults', 'POST', { area: 'company', ...fault, count: 3 });
      const b = await gql(readQuery(vats[Math.floor(random() * vats.length)]));
      account(b);
      if (!b.errors) {
        readsOk++;
        if ((b.extensions?.cost?.staleHits ?? 0) > 0) readsStale++;
      }
    } else {
      const i = orders++;
      if (faulty) await control('faults', 'POST', { area: 'risk', pathPrefix: '/IT-report-persona', ...fault, count: 1 });
      const input = {
        name: `LUCA${String.fromCharCode(65 + i)}`,
        surname: 'VERDI',
        taxCode: makeFiscalCode({
          surname: 'Verdi',
          name: `Luca${String.fromCharCode(65 + i)}`,
          birthDate: `1980-01-${String(i + 1).padStart(2, '0')}`,
          gender: 'M',
          cadastralCode: 'F205',
        }),
      };
      let key: string | undefined = withKeys ? `bench:${step}` : undefined;
      for (let attempt = 0; attempt < 8; attempt++) {
        const b = await gql(`mutation($input: PersonSubjectInput!, $key: String) { orderPersonReport(input: $input, idempotencyKey: $key) { id } }`, { input, key });
        account(b);
        if (b.data?.orderPersonReport?.id) break;
        const given = b.errors?.[0]?.extensions?.idempotencyKey;
        if (withKeys && typeof given === 'string') key = given;
        await quiescent();
        await control('faults', 'DELETE');
      }
    }
    await control('faults', 'DELETE');
  }
  await quiescent();
  const calls = (await control('calls?area=risk', 'GET')) as Array<{ method: string; price: number }>;
  const charged = calls.filter((c) => c.method === 'POST' && c.price > 0).length;
  const wallet = WALLET - ((await control(`tokens/${token}`, 'GET')) as { credit: number }).credit - spentBefore;
  await stack.close();
  return {
    client: withKeys ? 'retries with the idempotency key' : 'naive: orders again without a key',
    readsOk: readsOk / 200,
    readsStale: readsStale / 200,
    orders,
    postsTwice: charged - orders,
    wallet,
    reported,
    atRisk,
  };
}

export async function runFaultBench(latencyMs: number): Promise<void> {
  const rows = [await run(true, latencyMs), await run(false, latencyMs)];
  console.log(
    `\nFault mix: 200 reads + 20 orders, ~20% of operations meet a fault (503, 429, reset after charge, hang, answer lost after charge), upstream latency ${latencyMs} ms, timeout ${TIMEOUT_MS} ms.\n`,
  );
  console.log(
    '| client | reads answered | of all reads, from stale data | orders | paid POSTs sent twice | wallet charged | euro reported | + at risk | wallet − (reported + at risk) |',
  );
  console.log('|---|---|---|---|---|---|---|---|---|');
  for (const r of rows) {
    console.log(
      `| ${r.client} | ${(r.readsOk * 100).toFixed(1)}% | ${(r.readsStale * 100).toFixed(1)}% | ${r.orders} | ${r.postsTwice} | €${r.wallet.toFixed(2)} | €${r.reported.toFixed(2)} | €${r.atRisk.toFixed(2)} | €${(r.wallet - r.reported - r.atRisk).toFixed(4)} |`,
    );
  }
}
