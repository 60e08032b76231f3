/**
 * Money at risk settled, through the gateway like a client: a paid read whose connection was reset
 * after the service charged it, and an order a proxy answered 502 before the service ran it, are
 * both reported at risk; once the service can no longer charge them (the layer's clock moved past
 * `OPENAPI_SETTLE_LATE_MS`), one settlement on demand reads the account's wallet history and settles
 * the first as charged and the second as not; the caller looks each operation up by its
 * `extensions.cost.operationId`, hears each settlement on `costSettled`, and `/metrics` counts it.
 */
import { createClient, type Client, type FormattedExecutionResult } from 'graphql-ws';
import { afterAll, beforeAll, expect, it } from 'vitest';
import WebSocket from 'ws';
import { makeFiscalCode } from '../../../contract/checksums.ts';
import { DEFAULT_EMAIL } from '../../../emulator/server.ts';
import { registeredVats } from '../../../emulator/company/index.ts';
import { untilInFlight } from '../../support/inflight.ts';
import { startTestStack, type TestStack } from '../../support/stack.ts';

const SERVICE_TOKEN = 'settlement-e2e-service-token-0123456789';
const WALLET = 1_000;
let t: TestStack;
let offset = 0;
const clients: Client[] = [];

beforeAll(async () => {
  t = await startTestStack(
    {
      OPENAPI_TIMEOUT_MS: '400',
      OPENAPI_RETRY_BASE_MS: '5',
      LAYER_SECRET: 'settlement-e2e-secret-0123456789abcdef',
      RISK_POLL_MAX_CALLS_PER_MIN: '0',
      OPENAPI_TOKEN: SERVICE_TOKEN,
      OPENAPI_SETTLE_LATE_MS: '1000',
      OPENAPI_SETTLE_EVERY_MS: '0',
    },
    { clock: () => Date.now() + offset },
  );
  await t.control('risk/timing', { completeAfterMs: 0 });
  await t.control('tokens', { token: SERVICE_TOKEN, owner: DEFAULT_EMAIL, credit: WALLET });
}, 120_000);

afterAll(async () => {
  await Promise.allSettled(clients.map(async (c) => c.dispose()));
  await t?.close();
});

interface Settlement {
  call: { state: string; euro: number; path: string } | null;
  operation: { operationId: string; atRisk: number; charged: number; notCharged: number; open: number; settled: boolean };
}

it('settles a charged read and an order never carried out, and tells the caller', { timeout: 60_000 }, async () => {
  const client = createClient({ url: t.stack.gateway.wsUrl, webSocketImpl: WebSocket, retryAttempts: 0, lazy: true });
  clients.push(client);
  const events = client.iterate<{ costSettled: Settlement }>({
    query: `subscription { costSettled { call { state euro path } operation { operationId atRisk charged notCharged open settled } } }`,
  });
  const spentBefore = WALLET - (await t.credit(SERVICE_TOKEN));

  // A read whose connection is reset after the service charged it (then retried, and answered).
  const [vat] = registeredVats(4_300_000, 1);
  await t.control('faults', { area: 'risk', pathPrefix: '/IT-creditscore-start/', reset: true, count: 1 });
  const read = await t.gql(`{ creditScore(vatCode: "${vat}", level: START) { score } }`);
  expect(read.errors).toBeUndefined();
  expect(read.extensions?.cost).toMatchObject({ atRisk: 0.5 });
  // An order a proxy answers 502 before the service runs it.
  await t.control('faults', { area: 'risk', pathPrefix: '/IT-report-persona', status: 502, count: 1 });
  const taxCode = makeFiscalCode({ surname: 'Bianchi', name: 'Anna', birthDate: '1985-03-04', gender: 'F', cadastralCode: 'F205' });
  const order = await t.gql(`mutation($input: PersonSubjectInput!) { orderPersonReport(input: $input, idempotencyKey: "settle-e2e-1") { id } }`, {
    input: { name: 'ANNA', surname: 'BIANCHI', taxCode },
  });
  expect(order.errors?.[0]?.extensions).toMatchObject({ outcome: 'unknown' });
  const orderRisk = order.extensions?.cost?.atRisk ?? 0;
  expect(orderRisk).toBeGreaterThan(0);
  await untilInFlight(t.stack.emulatorUrl!, 'none');
  const reported = (read.extensions?.cost?.euro ?? 0) + (order.extensions?.cost?.euro ?? 0);

  // Before the service could still charge them: looked up, open; a settlement settles nothing.
  const OP = `query($id: ID!) { operationCost(id: $id) { operationId atRisk charged notCharged open settled calls { state euro basis } } }`;
  const readId = read.extensions?.cost?.operationId;
  const orderId = order.extensions?.cost?.operationId;
  expect((await t.gql(OP, { id: readId })).data?.operationCost).toMatchObject({ atRisk: 0.5, open: 0.5, settled: false });
  expect((await t.gql(`mutation { settleCosts { charged notCharged open } }`)).data?.settleCosts).toMatchObject({ charged: 0, notCharged: 0, open: 2 });

  // Past it (the layer's clock moved on): settled on demand from the wallet history.
  offset += 30_000;
  const run = await t.gql<{ settleCosts: Record<string, number> }>(`mutation { settleCosts { charged chargedEuro notCharged notChargedEuro open openEuro } }`);
  expect(run.errors).toBeUndefined();
  expect(run.data?.settleCosts).toEqual({ charged: 1, chargedEuro: 0.5, notCharged: 1, notChargedEuro: orderRisk, open: 0, openEuro: 0 });
  expect((await t.gql(OP, { id: readId })).data?.operationCost).toMatchObject({
    charged: 0.5,
    notCharged: 0,
    open: 0,
    settled: true,
    calls: [{ state: 'CHARGED', euro: 0.5, basis: 'wallet' }],
  });
  expect((await t.gql(OP, { id: orderId })).data?.operationCost).toMatchObject({ charged: 0, notCharged: orderRisk, open: 0, settled: true });
  // An operation with nothing at risk answers zeros.
  expect((await t.gql(OP, { id: '00000000-0000-4000-8000-000000000000' })).data?.operationCost).toMatchObject({ atRisk: 0, settled: true, calls: [] });

  // The wallet: what was reported, plus what was settled as charged.
  const spent = WALLET - (await t.credit(SERVICE_TOKEN)) - spentBefore;
  expect(spent).toBeCloseTo(reported + 0.5, 4);

  // Heard on the subscription, each with its operation's standing.
  const heard: Settlement[] = [];
  while (heard.length < 2) {
    const next = (await events.next()) as IteratorResult<FormattedExecutionResult<{ costSettled: Settlement }>>;
    heard.push(next.value.data!.costSettled);
  }
  expect(heard.map((h) => h.call?.state).sort()).toEqual(['CHARGED', 'NOT_CHARGED']);
  expect(heard.find((h) => h.call?.state === 'CHARGED')?.operation).toMatchObject({ operationId: readId, charged: 0.5, settled: true });
  await events.return?.();

  // /metrics counts the settled euro.
  const metrics = await (await fetch(`${t.url}/metrics`)).text();
  expect(metrics).toMatch(/openapi_settled_calls_total\{outcome="charged"\} [1-9]/);
  expect(metrics).toMatch(/openapi_settled_calls_total\{outcome="not_charged"\} [1-9]/);
});
