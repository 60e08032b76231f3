/**
 * Background work and the layer's own token: work started with the managed token keeps a marker,
 * not the value, so a callback re-read after a rotation calls with the new token and succeeds (the
 * old one has expired at the emulator). The managed token carries exactly the scopes the served
 * subgraphs call, and a graceful close deletes it upstream.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestStack, type TestStack } from '../../support/stack.ts';
import { startStack } from '../../../stack.ts';
import { managedTokenOf, scopesFor } from '../../../subgraphs/upstream/service-token.ts';
import { tokenEndpoints } from '../../../subgraphs/index.ts';
import { LAYER_TOKEN, fixedLayerToken, workTokens } from '../../../subgraphs/upstream/work-tokens.ts';
import { bureauInput, CF } from '../../support/risk.ts';
import { waitFor } from '../../support/wait.ts';
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { DEFAULT_BULK_PASSWORD, DEFAULT_BULK_USERNAME } from '../../../emulator/pecmassiva/index.ts';

let t: TestStack;
let now = Date.now();

interface Call {
  method: string;
  path: string;
  status: number;
  token: string | null;
}

beforeAll(async () => {
  t = await startTestStack(
    {
      OPENAPI_EMAIL: 'emulator@example.com',
      OPENAPI_APIKEY: 'emulator-apikey',
      OPENAPI_MANAGED_TOKEN_TTL_S: '3600',
      RISK_POLL_INTERVAL_MS: '3600000',
      PECMASSIVA_INBOX_POLL_MS: '50',
      // Slow datasets by POST + callback (the GET is the default): the POST's scope is what is tested.
      COMPANY_SLOW_PURCHASE: 'callback',
    },
    { clock: () => now },
  );
  now = (await t.clock.manual()).nowMs;
  // Reports complete only when the test says so.
  await t.control('risk/timing', { completeAfterMs: 0 });
}, 120_000);
afterAll(async () => {
  await t?.close();
}, 120_000);

async function advance(ms: number): Promise<void> {
  await t.clock.advance(ms);
  now += ms;
}

const tail = (token: string): string => `…${token.slice(-4)}`;
const STATE = 'query ($id: ID!) { riskRequest(family: PATRIMONIAL, id: $id) { state } }';

it('a slow company dataset is bought by POST + callback with the managed token (its scopes include the POST)', async () => {
  const VAT = '12485671007';
  await t.control('company/slow', { ms: 3_600_000 });
  await t.clearCalls();
  const query = t.gql<{ company: { managers: unknown[] } }>('query ($vat: String!) { company(vatCode: $vat) { managers { __typename } } }', { vat: VAT });
  const posts = async (): Promise<Call[]> => ((await t.calls('company')) as unknown as Call[]).filter((c) => c.method === 'POST');
  await waitFor(async () => (await posts()).length > 0, 'the POST of the slow dataset', { deadline: 20_000, every: 20 });
  expect(await t.control('company/complete', {})).toEqual({ completed: 1 });
  const res = await query;
  expect(res.errors).toBeUndefined();
  expect(res.data!.company.managers.length).toBeGreaterThan(0);
  const token = managedTokenOf(t.stack.upstream)!.current();
  expect((await posts()).map((c) => [c.path, c.token, c.status])).toEqual([[`/IT-stakeholders/${VAT}`, tail(token), 200]]);
  await t.control('company/slow', { ms: 0 });
}, 60_000);

it('a callback re-read after a rotation uses the new token and succeeds', async () => {
  const manager = managedTokenOf(t.stack.upstream)!;
  const first = manager.current();
  const order = await t.gql<{ orderPatrimonialReport: { id: string; state: string } }>(
    'mutation ($input: PersonSubjectInput!) { orderPatrimonialReport(level: STANDARD, input: $input) { id state } }',
    { input: { name: 'Mario', surname: 'Rossi', taxCode: CF } },
  );
  expect(order.errors).toBeUndefined();
  const id = order.data!.orderPatrimonialReport.id;
  expect(order.data!.orderPatrimonialReport.state).toBe('PROCESSING');
  // A signed download issued now (the bureau's delegation form), fetched after the rotation.
  const bureau = await t.gql<{ orderPersonBureauReport: { delegationForm: { url: string } } }>(
    'mutation ($input: PersonBureauInput!) { orderPersonBureauReport(input: $input) { delegationForm { url } } }',
    { input: bureauInput() },
  );
  expect(bureau.errors).toBeUndefined();
  const formUrl = bureau.data!.orderPersonBureauReport.delegationForm.url;

  // Rotation: due at 3,240 s of 3,600; the new token minted; then past the first one's expiry.
  await advance(3300 * 1000);
  await manager.renew();
  const second = manager.current();
  expect(second).not.toBe(first);
  await advance(600 * 1000);

  await t.clearCalls();
  await t.control('risk/advance', { id });
  // The callback arrives (the emulator's delivery log), and the layer's re-read of it (free) follows.
  const readsOf = async (): Promise<Call[]> => ((await t.calls('risk')) as unknown as Call[]).filter((c) => c.method === 'GET' && c.path.endsWith(id));
  const deliveries = async (): Promise<Array<{ url: string; status: number }>> =>
    (await (await fetch(`${t.stack.emulatorUrl}/_emulator/callbacks`)).json()) as Array<{ url: string; status: number }>;
  await waitFor(
    async () => (await deliveries()).some((d) => d.url.includes('/callbacks/') && d.status === 200) && (await readsOf()).length > 0,
    'the callback delivered and re-read',
    { deadline: 20_000, every: 20 },
  );
  const reads = await readsOf();
  expect(reads.length).toBe(1);
  expect((await t.gql<{ riskRequest: { state: string } }>(STATE, { id })).data?.riskRequest.state).toBe('COMPLETE');
  // Every read with the token valid now; none with the expired one (which the emulator refuses, 401).
  expect(reads.map((c) => [c.token, c.status])).toEqual(reads.map(() => [tail(second), 200]));
  expect(((await t.calls()) as unknown as Call[]).filter((c) => c.status === 401)).toEqual([]);

  // The download URL issued before the rotation still works: its grant kept the marker, not the value.
  const form = await fetch(formUrl);
  expect(form.status).toBe(200);
  expect(
    Buffer.from(await form.arrayBuffer())
      .subarray(0, 4)
      .toString('latin1'),
  ).toBe('%PDF');
  const fetched = ((await t.calls('risk')) as unknown as Call[]).filter((c) => c.path.endsWith('/delega'));
  expect(fetched.map((c) => [c.token, c.status])).toEqual([[tail(second), 200]]);
}, 60_000);

it('an inbox subscription reads with the token valid now after a renewal, not the one it started with', async () => {
  const manager = managedTokenOf(t.stack.upstream)!;
  const client = createClient({ url: t.stack.gateway.wsUrl, webSocketImpl: WebSocket, retryAttempts: 0, lazy: true });
  try {
    type Msg = { data?: { inboxMessageReceived: { id: string } } | null; errors?: unknown };
    const it = client.iterate<Msg['data'] & object>({
      query: 'subscription ($c: BulkCredentialsInput!) { inboxMessageReceived(credentials: $c) { id } }',
      variables: { c: { username: DEFAULT_BULK_USERNAME, password: DEFAULT_BULK_PASSWORD } },
    });
    const first = await it.next();
    expect(first.value?.errors).toBeUndefined();
    const newest = Number(first.value?.data?.inboxMessageReceived.id);
    // Renewal (the token minted at 3,300 s is due at 6,540 s of its 6,900), then past the replaced
    // token's expiry: the emulator refuses it (401) from then on.
    const before = manager.current();
    await advance(2800 * 1000);
    await manager.renew();
    await manager.settled();
    const after = manager.current();
    expect(after).not.toBe(before);
    await advance(600 * 1000);
    await t.clearCalls();
    await t.control('pecmassiva/receive', { username: DEFAULT_BULK_USERNAME, count: 1, subject: 'Dopo il rinnovo' });
    const next = await it.next();
    expect(next.value?.errors).toBeUndefined();
    expect(Number(next.value?.data?.inboxMessageReceived.id)).toBe(newest + 1);
    await it.return?.();
    const reads = (await t.calls('pecmassiva')) as unknown as Call[];
    expect(reads.length).toBeGreaterThan(0);
    expect([...new Set(reads.map((c) => `${c.token} ${c.status}`))]).toEqual([`${tail(manager.current())} 200`]);
  } finally {
    await client.dispose();
  }
}, 60_000);

it('the managed token is minted with exactly the scopes of the served subgraphs, no wildcard', async () => {
  const value = managedTokenOf(t.stack.upstream)!.current();
  const held = ((await (await fetch(`${t.stack.emulatorUrl}/_emulator/tokens/${encodeURIComponent(value)}`)).json()) as { scopes: string[] }).scopes;
  // Independent of scopesFor: scopes each area's features call, written out (the slow tiers' POSTs among them).
  for (const scope of [
    'GET:test.cap.openapi.it/cerca_comuni',
    'GET:test.cap.openapi.it/cap',
    'GET:test.company.openapi.com/IT-start',
    'POST:test.company.openapi.com/IT-full',
    'POST:test.company.openapi.com/IT-stakeholders',
    'POST:test.risk.openapi.com/IT-patrimoniale-persona',
    'GET:test.ws.pecmassiva.com/inbox',
    'POST:test.invoice.openapi.com/IT-invoices',
  ])
    expect(held).toContain(scope);
  expect(held.filter((s) => s.includes('*') || s.includes('oauth.openapi.com'))).toEqual([]);
  // Every scope held is one the account has enabled (the emulator's GET /scopes, Basic).
  const basic = `Basic ${Buffer.from('emulator@example.com:emulator-apikey').toString('base64')}`;
  const enabled = ((await (await fetch(`${t.stack.emulatorUrl}/oauth/scopes`, { headers: { authorization: basic } })).json()) as { data: Array<{ scope: string }> }).data.map(
    (s) => s.scope,
  );
  expect(held.filter((s) => !enabled.includes(s))).toEqual([]);
  expect(new Set(held).size).toBe(held.length);
  expect(scopesFor('production', tokenEndpoints(['postal']))).toContain('GET:cap.openapi.it/cap');
});

it('work tokens: the layer token kept as a marker and resolved at call time; a caller token kept as is', () => {
  let current = 'layer-token-one';
  const tokens = workTokens({ current: () => current, owns: (v) => v === current || v === 'layer-token-old' });
  expect(tokens.keep('layer-token-one')).toBe(LAYER_TOKEN);
  expect(tokens.keep('layer-token-old')).toBe(LAYER_TOKEN);
  expect(tokens.keep('caller-token')).toBe('caller-token');
  expect(tokens.keep(LAYER_TOKEN)).toBe(LAYER_TOKEN);
  current = 'layer-token-two';
  expect(tokens.use(LAYER_TOKEN)).toBe('layer-token-two');
  expect(tokens.use('caller-token')).toBe('caller-token');
  // Kept as the layer's under one OPENAPI_TOKEN, resolved to the next after a restart.
  expect(workTokens(fixedLayerToken('new-env-token')).use(workTokens(fixedLayerToken('old-env-token')).keep('old-env-token'))).toBe('new-env-token');
  expect(workTokens(null).use(LAYER_TOKEN)).toBe('');
});

it('a graceful close of the stack deletes the tokens the layer minted', async () => {
  // A second layer on the same emulator, shut down as a deployment is (stack.shutdown).
  const other = await startStack({
    env: { OPENAPI_ENV: 'emulator', OPENAPI_EMAIL: 'emulator@example.com', OPENAPI_APIKEY: 'emulator-apikey' },
    emulatorUrl: t.stack.emulatorUrl!,
    port: 0,
  });
  let closed = false;
  try {
    const value = managedTokenOf(other.upstream)!.current();
    expect((await fetch(`${t.stack.emulatorUrl}/_emulator/tokens/${encodeURIComponent(value)}`)).status).toBe(200);
    await t.clearCalls();
    await other.shutdown();
    closed = true;
    const deletes = ((await t.calls('oauth')) as unknown as Call[]).filter((c) => c.method === 'DELETE' && c.path === `/tokens/${value}`);
    expect(deletes.map((c) => c.status)).toEqual([200]);
    expect((await fetch(`${t.stack.emulatorUrl}/_emulator/tokens/${encodeURIComponent(value)}`)).status).toBe(404);
  } finally {
    if (!closed) await other.close();
  }
}, 120_000);
