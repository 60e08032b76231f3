/**
 * The money promise under faults, through the gateway: a mix of 200 paid reads and 20 paid orders
 * while about one operation in five meets an upstream fault (5xx, 429 with Retry-After, a
 * connection reset after the upstream charged, a hang past the layer's timeout, an answer lost
 * after the upstream charged). Orders are retried as a careful client would: with the
 * idempotency key the layer gives back. Then: no paid POST was sent twice, every order is findable,
 * and what the emulator's wallet was charged equals the euro reported plus the euro reported at risk.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Rng, registeredVats } from '../../../emulator/company/index.ts';
import { makeFiscalCode } from '../../../contract/checksums.ts';
import { startTestStack, type GraphQLResponse, type TestStack } from '../../support/stack.ts';
import { untilInFlight } from '../../support/inflight.ts';

const TIMEOUT_MS = 400;
const WALLET = 100_000;

let t: TestStack;
let token: string;

const FAULTS = [
  { kind: '503', spec: { status: 503 } },
  { kind: '429', spec: { status: 429, retryAfter: 1 } },
  { kind: 'reset', spec: { reset: true } },
  { kind: 'hang', spec: { hangMs: TIMEOUT_MS + 300 } },
  { kind: 'lost', spec: { delayAfterMs: TIMEOUT_MS + 300 } },
] as const;

beforeAll(async () => {
  t = await startTestStack({
    OPENAPI_TIMEOUT_MS: String(TIMEOUT_MS),
    OPENAPI_RETRY_BASE_MS: '5',
    LAYER_SECRET: 'fault-mix-test-secret-0123456789',
    RISK_POLL_MAX_CALLS_PER_MIN: '0',
  });
  await t.control('risk/timing', { completeAfterMs: 0 });
  token = await t.createToken(WALLET);
}, 120_000);

afterAll(async () => {
  await t?.close();
});

/** Waits until the emulator handles no call (hangs and late answers finished): no sleeping. */
async function quiescent(): Promise<void> {
  await untilInFlight(t.stack.emulatorUrl!, 'none');
}

async function clearFaults(): Promise<void> {
  await fetch(`${t.stack.emulatorUrl}/_emulator/faults`, { method: 'DELETE' });
}

it('spends nothing twice, loses no order, and reports every euro the wallet was charged', { timeout: 240_000 }, async () => {
  const seeded = new Rng('20261123');
  const random = (): number => seeded.next();
  const auth = { authorization: `Bearer ${token}` };
  let reported = 0;
  let atRisk = 0;
  const faultsUsed = new Map<string, number>();
  const account = (res: GraphQLResponse): void => {
    reported += res.extensions?.cost?.euro ?? 0;
    atRisk += res.extensions?.cost?.atRisk ?? 0;
  };
  const maybeFault = async (area: string, pathPrefix?: string): Promise<void> => {
    if (random() >= 0.2) return;
    const f = FAULTS[Math.floor(random() * FAULTS.length)];
    faultsUsed.set(f.kind, (faultsUsed.get(f.kind) ?? 0) + 1);
    await t.control('faults', { area, ...(pathPrefix ? { pathPrefix } : {}), ...f.spec, count: 1 });
  };

  const vats = registeredVats(4_100_000, 40);
  const reads = [
    (v: string) => ({ area: 'company', q: `{ company(vatCode: "${v}") { companyName address { town } } }` }),
    (v: string) => ({ area: 'risk', q: `{ creditScore(vatCode: "${v}", level: START) { score } }` }),
    (v: string) => ({ area: 'company', q: `{ company(vatCode: "${v}") { companyName creditScore(level: ADVANCED) { score } } }` }),
  ];
  const orders = Array.from({ length: 20 }, (_, i) => ({
    family: i % 2 === 0 ? 'PERSON_REPORT' : 'PATRIMONIAL',
    path: i % 2 === 0 ? '/IT-report-persona' : '/IT-patrimoniale-persona',
    mutation: i % 2 === 0 ? 'orderPersonReport' : 'orderPatrimonialReport',
    taxCode: makeFiscalCode({
      surname: 'Verdi',
      name: `Luca${String.fromCharCode(65 + i)}`,
      birthDate: `1980-01-${String(i + 1).padStart(2, '0')}`,
      gender: 'M',
      cadastralCode: 'F205',
    }),
    name: `LUCA${String.fromCharCode(65 + i)}`,
  }));

  let readsOk = 0;
  const ids: Array<{ family: string; id: string }> = [];
  for (let step = 0; step < 220; step++) {
    const isOrder = step % 11 === 10;
    if (!isOrder) {
      const read = reads[Math.floor(random() * reads.length)](vats[Math.floor(random() * vats.length)]);
      await maybeFault(read.area);
      const res = await t.gql(read.q, undefined, auth);
      account(res);
      if (!res.errors) readsOk++;
      else for (const e of res.errors) expect(e.extensions?.code, e.message).toMatch(/^UPSTREAM_|^RATE_LIMITED$/);
    } else {
      const o = orders[ids.length];
      await maybeFault('risk', o.path);
      let key: string | undefined;
      let id: string | undefined;
      for (let attempt = 0; attempt < 8 && !id; attempt++) {
        const res = await t.gql<Record<string, { id: string }>>(
          `mutation($input: PersonSubjectInput!, $key: String) { ${o.mutation}(input: $input, idempotencyKey: $key) { id } }`,
          { input: { name: o.name, surname: 'VERDI', taxCode: o.taxCode }, key: key ?? `fault-mix:${step}` },
          auth,
        );
        account(res);
        id = res.data?.[o.mutation]?.id;
        if (id) break;
        const err = res.errors?.[0];
        // The layer says how to find an order whose answer was lost: the same key again.
        if (typeof err?.extensions?.idempotencyKey === 'string') key = err.extensions.idempotencyKey;
        await quiescent();
        await clearFaults();
      }
      expect(id, `order ${ids.length} was never confirmed`).toMatch(/^[0-9a-f]{24}$/);
      ids.push({ family: o.family, id: id! });
    }
    await clearFaults();
  }
  await quiescent();

  // Every kind of fault happened.
  expect([...faultsUsed.keys()].sort()).toEqual(['429', '503', 'hang', 'lost', 'reset']);
  // No paid POST was sent twice: exactly one charged creation per order.
  const charged = (await t.calls('risk')).filter((c) => c.method === 'POST' && c.price > 0);
  expect(charged).toHaveLength(20);
  expect(new Set(ids.map((o) => o.id)).size).toBe(20);
  // Every order is findable by the client.
  for (const o of ids) {
    const res = await t.gql<{ riskRequest: { id: string } | null }>(
      `query($f: RiskFamily!, $id: ID!) { riskRequest(family: $f, id: $id) { id } }`,
      { f: o.family, id: o.id },
      auth,
    );
    expect(res.data?.riskRequest?.id).toBe(o.id);
  }
  // The wallet: what was charged is what was reported, plus what was reported at risk.
  const spent = WALLET - (await t.credit(token));
  expect(spent).toBeCloseTo(reported + atRisk, 4);
  expect(atRisk).toBeGreaterThan(0);
  expect(readsOk).toBeGreaterThan(150);
});
