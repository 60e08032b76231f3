/**
 * The money promise under faults, through the gateway: a mix of 200 paid reads and 20 paid orders
 * while about one operation in five meets an upstream fault (5xx, 429 with Retry-After, a
 * connection reset after the upstream charged, a hang past the layer's timeout, an answer lost
 * after the upstream charged). Orders are retried as a careful client would: with the
 * idempotency key the layer gives back. Then: no paid POST was sent twice, every order is findable,
 * and what the emulator's wallet was charged is at most the euro reported plus the euro reported at
 * risk. Then the money at risk is settled (in the background, from the account's wallet history;
 * the test waits on the settler's `costSettled` events): every operation's calls at risk are
 * settled, and the wallet equals the euro reported plus the euro settled as charged, exactly. The layer pays with a service token of the account it holds the
 * credentials of (the emulator's built-in account), so that the wallet history can be read.
 */
import { createClient, type Client } from 'graphql-ws';
import { afterAll, beforeAll, expect, it } from 'vitest';
import WebSocket from 'ws';
import { Rng, registeredVats } from '../../../emulator/company/index.ts';
import { makeFiscalCode } from '../../../contract/checksums.ts';
import { startTestStack, type GraphQLResponse, type TestStack } from '../../support/stack.ts';
import { untilInFlight } from '../../support/inflight.ts';
import { waitFor, within } from '../../support/wait.ts';
import { DEFAULT_EMAIL } from '../../../emulator/server.ts';

const TIMEOUT_MS = 400;
const WALLET = 100_000;
const SERVICE_TOKEN = 'fault-mix-service-token-0123456789abcdef';

let t: TestStack;
let token: string;
/** The subscription client on which the settler's events are heard (`costSettled`). */
let ws: Client;

const FAULTS = [
  { kind: '503', spec: { status: 503 } },
  { kind: '429', spec: { status: 429, retryAfter: 1 } },
  { kind: 'reset', spec: { reset: true } },
  { kind: 'hang', spec: { hangMs: TIMEOUT_MS + 300 } },
  { kind: 'lost', spec: { delayAfterMs: TIMEOUT_MS + 300 } },
  // A proxy's 502/504 before the service ran it: an order's price at risk, never charged.
  { kind: '502', spec: { status: 502 } },
  { kind: '504', spec: { status: 504 } },
] as const;

beforeAll(async () => {
  t = await startTestStack({
    OPENAPI_TIMEOUT_MS: String(TIMEOUT_MS),
    OPENAPI_RETRY_BASE_MS: '5',
    LAYER_SECRET: 'fault-mix-test-secret-0123456789',
    RISK_POLL_MAX_CALLS_PER_MIN: '0',
    OPENAPI_TOKEN: SERVICE_TOKEN,
    // The service may carry out a call up to 300 ms after the layer gave up (a hang): 1 s covers it.
    OPENAPI_SETTLE_LATE_MS: '1000',
    OPENAPI_SETTLE_EVERY_MS: '100',
  });
  await t.control('risk/timing', { completeAfterMs: 0 });
  // The service token is the built-in account's (whose credentials the layer holds), with a fresh wallet.
  await t.control('tokens', { token: SERVICE_TOKEN, owner: DEFAULT_EMAIL, credit: WALLET });
  token = SERVICE_TOKEN;
  ws = createClient({ url: t.stack.gateway.wsUrl, webSocketImpl: WebSocket, retryAttempts: 0, lazy: true });
}, 120_000);

afterAll(async () => {
  await ws?.dispose();
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
  /** The operations with money at risk, by id, and the euro. */
  const risky = new Map<string, number>();
  const account = (res: GraphQLResponse): void => {
    const cost = res.extensions?.cost;
    reported += cost?.euro ?? 0;
    atRisk += cost?.atRisk ?? 0;
    expect(cost?.operationId).toMatch(/^[0-9a-f-]{36}$/);
    if ((cost?.atRisk ?? 0) > 0) risky.set(cost?.operationId ?? '', cost?.atRisk ?? 0);
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
      /** The operation whose order got no answer (its price at risk). */
      let unanswered: string | undefined;
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
        if ((res.extensions?.cost?.atRisk ?? 0) > 0) unanswered = res.extensions?.cost?.operationId;
        // Not found under its key: the settlement tells whether it was charged; never charged, it was
        // never carried out, and is ordered again under a new key.
        if (err?.extensions?.code === 'OUTCOME_UNKNOWN' && unanswered) {
          const settled = await settlementOf(unanswered);
          if (settled.notCharged > 0 && settled.charged === 0) {
            key = `fault-mix:${step}:again`;
            unanswered = undefined;
          }
        }
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
  expect([...faultsUsed.keys()].sort()).toEqual(['429', '502', '503', '504', 'hang', 'lost', 'reset']);
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
  // The wallet: what was charged is at most what was reported, plus what was reported at risk.
  const spent = WALLET - (await t.credit(token));
  expect(spent).toBeLessThanOrEqual(reported + atRisk + 1e-6);
  expect(atRisk).toBeGreaterThan(0);
  expect(readsOk).toBeGreaterThan(150);

  // Settled in the background: each operation's calls at risk, looked up by its id.
  const settled = new Map<string, OperationCost>();
  for (const [id, euro] of risky) {
    const cost = await settlementOf(id);
    expect(cost.atRisk).toBeCloseTo(euro, 4);
    settled.set(id, cost);
  }
  const calls = [...settled.values()].flatMap((c) => c.calls);
  const settledCharged = calls.filter((c) => c.state === 'CHARGED');
  const settledNot = calls.filter((c) => c.state === 'NOT_CHARGED');
  const euro = (l: typeof calls): number => Math.round(l.reduce((a, c) => a + c.euro, 0) * 10000) / 10000;
  console.log(
    `settled ${calls.length} calls at risk (€${Math.round(atRisk * 10000) / 10000}): ${settledCharged.length} charged (€${euro(settledCharged)}), ${settledNot.length} not charged (€${euro(settledNot)}); wallet spent €${Math.round(spent * 10000) / 10000} = reported €${Math.round(reported * 10000) / 10000} + settled charged €${euro(settledCharged)}`,
  );
  expect(calls.every((c) => c.basis === 'wallet')).toBe(true);
  expect(euro(calls)).toBeCloseTo(atRisk, 4);
  // After settlement the wallet equals the euro reported plus the euro settled as charged, exactly.
  expect(spent).toBeCloseTo(reported + euro(settledCharged), 4);
  expect(settledNot.length).toBeGreaterThan(0);
  expect(settledCharged.length).toBeGreaterThan(0);
  // The ledger follows: a call settled as never charged gives its reservation back, so the day's
  // spending (what the budgets are checked on) is what the wallet was charged, to the cent.
  await waitFor(
    async () => {
      const res = await t.gql<{ spending: { today: { total: number } } }>('{ spending { today { total } } }');
      return Math.round((res.data?.spending.today.total ?? -1) * 100) === Math.round(spent * 100);
    },
    'the day ledger to equal the wallet after settlement',
    { deadline: 10_000 },
  );
  // /metrics counts the settled euro, charged and not.
  const metrics = await (await fetch(`${t.url}/metrics`)).text();
  expect(metrics).toMatch(/openapi_settled_euro_total\{outcome="charged"\} [1-9]/);
  expect(metrics).toMatch(/openapi_settled_euro_total\{outcome="not_charged"\} [1-9]/);
});

interface OperationCost {
  atRisk: number;
  charged: number;
  notCharged: number;
  open: number;
  settled: boolean;
  calls: Array<{ state: 'OPEN' | 'CHARGED' | 'NOT_CHARGED'; euro: number; basis: string | null; path: string }>;
}

/** What a settler may take at most to settle a call, from when the layer gave up on it (a safety limit, not a wait). */
const SETTLE_DEADLINE_MS = 60_000;

/**
 * An operation's money at risk once settled. The background settler looks at a call only once the
 * service can no longer charge it (`OPENAPI_SETTLE_LATE_MS` and the widest window after the layer
 * gave up: seconds, on any machine): waited for on the settler's own event (`costSettled` of the
 * operation, which first sends the operation's standing when part of it is settled already, so no
 * settlement is missed between the lookup and the subscription). No sleeping, no polling.
 */
async function settlementOf(id: string): Promise<OperationCost> {
  const now = await lookUp(id);
  if (now.settled) return now;
  const events = ws.iterate<{ costSettled: { operation: { settled: boolean } } }>({
    query: `subscription($id: ID) { costSettled(operationId: $id) { operation { settled } } }`,
    variables: { id },
  });
  try {
    await within(
      (async () => {
        for await (const e of events) {
          expect(e.errors).toBeUndefined();
          if (e.data?.costSettled.operation.settled) return;
        }
        throw new Error(`the costSettled subscription of ${id} ended`);
      })(),
      `the settlement of operation ${id} (${JSON.stringify(now)})`,
      SETTLE_DEADLINE_MS,
    );
  } finally {
    await events.return?.();
  }
  const settled = await lookUp(id);
  expect(settled.settled).toBe(true);
  return settled;
}

/** The operation's standing, looked up by its id (free: reads only what the layer keeps). */
async function lookUp(id: string): Promise<OperationCost> {
  const res = await t.gql<{ operationCost: OperationCost }>(OPERATION_COST, { id });
  expect(res.errors).toBeUndefined();
  return res.data!.operationCost;
}

const OPERATION_COST = `query($id: ID!) { operationCost(id: $id) { atRisk charged notCharged open settled calls { state euro basis path } } }`;
