/**
 * Company monitors that push, end to end through the gateway against the emulator: creating a
 * monitor gives the upstream the layer's signed callback; a check (the emulator's control API, as
 * the vendor's periodic one) reaches the layer through `/callbacks/company/…`, is re-read upstream
 * (free), pushed to `companyChanged` over graphql-ws, relayed to the caller's own callback, and drops
 * that tenant's cached data of the company (exact upstream call lists). Tenants never hear or
 * invalidate each other; forged and replayed callbacks are refused; a monitor whose callback is
 * lost is read by the poller. Creation is idempotent under a key, as risk orders are.
 *
 * Every wait is on an event (a subscription message, a delivery); timeouts are safety limits only.
 */
import { createClient, type Client, type FormattedExecutionResult } from 'graphql-ws';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { DEFAULT_TOKEN } from '../../../emulator/server.ts';
import { Signer } from '../../../platform/signing.ts';
import { withSafety as safety } from '../../support/safety.ts';
import { startTestStack, type TestStack } from '../../support/stack.ts';
import type { Obj } from '../../../contract/values.ts';
import { startReceiver, type Receiver } from '../../support/receiver.ts';
import { waitFor } from '../../support/wait.ts';

const LAYER_SECRET = 'company-monitor-test-secret-0123456789';
// Slow datasets by POST + callback (the GET is the default): a pending purchase meets a monitor check.
const ENV = { LAYER_SECRET, COMPANY_RELAY_ALLOW_PRIVATE: '1', COMPANY_SLOW_PURCHASE: 'callback' };
/** OPENAPI S.P.A. and OPEN HOLDING S.R.L. (sandbox companies). */
const VAT = '12485671007';
const TENANT_B = 'company-monitor-tenant-b-token';
const SAFETY_MS = 20_000;

type Result = FormattedExecutionResult<Obj, unknown>;

let t: TestStack;
const clients: Client[] = [];

let receiver: Receiver;
const withSafety = <T>(p: Promise<T>, what: string): Promise<T> => safety(p, what, SAFETY_MS);
const auth = (token?: string): Record<string, string> => (token ? { authorization: `Bearer ${token}` } : {});

async function gqlOn<T = Obj>(stack: TestStack, query: string, variables: Obj = {}, token?: string): Promise<T> {
  const res = await stack.gql<T>(query, variables, auth(token));
  expect(res.errors, JSON.stringify(res.errors)).toBeUndefined();
  return res.data as T;
}
const gql = <T = Obj>(query: string, variables: Obj = {}, token?: string): Promise<T> => gqlOn<T>(t, query, variables, token);

function subscribe(stack: TestStack, query: string, variables: Obj, token?: string): AsyncIterableIterator<Result> {
  const client = createClient({ url: stack.stack.gateway.wsUrl, webSocketImpl: WebSocket, connectionParams: auth(token), retryAttempts: 0, lazy: true });
  clients.push(client);
  return client.iterate<Obj>({ query, variables });
}

async function nextChange(it: AsyncIterator<Result>): Promise<Obj> {
  const r = await withSafety(it.next(), 'companyChanged event');
  expect(r.done).toBe(false);
  const value = r.value as Result;
  expect(value.errors, JSON.stringify(value.errors)).toBeUndefined();
  return (value.data as Obj).companyChanged as Obj;
}

const CREATE = `mutation($input: CreateCompanyMonitorInput!, $key: String) {
  createCompanyMonitor(input: $input, idempotencyKey: $key) { id vatCode dataset monitoredFields checkedOn updatedFields }
}`;
const CHANGED = `subscription($monitorId: ID, $vatCode: String) { companyChanged(monitorId: $monitorId, vatCode: $vatCode) { id vatCode checkedOn updatedFields } }`;
const NAME = `query($vat: String!) { company(vatCode: $vat) { companyName } }`;

/** Upstream calls of the company area as `METHOD /path`. */
async function callsOf(stack: TestStack): Promise<string[]> {
  return (await stack.calls('company')).map((c) => `${c.method} ${c.path}`);
}

async function createMonitor(stack: TestStack, input: Obj, token?: string, key?: string): Promise<Obj> {
  return (await gqlOn<{ createCompanyMonitor: Obj }>(stack, CREATE, { input: { code: VAT, dataset: 'IT_START', ...input }, key }, token)).createCompanyMonitor;
}

/** The monitor as the emulator holds it (the layer's callback URL included), read with `token`'s account. */
async function upstreamMonitor(stack: TestStack, id: string, token: string): Promise<Obj> {
  const res = await request(`${stack.stack.emulatorUrl}/company/monitor/${id}`, { headers: { authorization: `Bearer ${token}` } });
  return ((await res.body.json()) as { data: Obj }).data;
}

beforeAll(async () => {
  t = await startTestStack(ENV);
  receiver = await startReceiver();
  await t.control('tokens', { token: TENANT_B, owner: 'company-monitor-b@example.com' });
});

afterAll(async () => {
  await Promise.allSettled(clients.map(async (c) => c.dispose()));
  await t?.close();
  await receiver?.close();
});

describe('a monitor pushes the changes of a company', () => {
  let monitorId = '';

  it('creation gives the upstream the layer’s signed callback, once per idempotency key', async () => {
    await t.clearCalls();
    const m = await createMonitor(t, { monitoredFields: ['companyName'], callbackUrl: receiver.url, callbackRetry: 2 }, undefined, 'monitor-key-0001');
    expect(m).toMatchObject({ vatCode: VAT, dataset: 'IT_START', monitoredFields: ['companyName'], checkedOn: null });
    monitorId = String(m.id);
    // The same key again: the same monitor, not bought again.
    const again = await createMonitor(t, { monitoredFields: ['companyName'], callbackUrl: receiver.url, callbackRetry: 2 }, undefined, 'monitor-key-0001');
    expect(again.id).toBe(monitorId);
    expect(await callsOf(t)).toEqual(['POST /monitor']);
    // The same key for another order is refused before any call.
    const reused = await t.gql(CREATE, { input: { code: VAT, dataset: 'IT_ADVANCED' }, key: 'monitor-key-0001' });
    expect(reused.errors?.[0]?.extensions?.code).toBe('IDEMPOTENCY_KEY_REUSED');
    expect(await callsOf(t)).toEqual(['POST /monitor']);

    const upstream = await upstreamMonitor(t, monitorId, DEFAULT_TOKEN);
    const cb = upstream.callback as Obj;
    expect(String(cb.url)).toMatch(new RegExp(`^${t.url}/callbacks/company/[^/]+$`));
    expect(cb.method).toBe('JSON');
    // The caller's callback is the layer's to relay; the upstream never sees it.
    expect(JSON.stringify(upstream)).not.toContain(receiver.url);
  });

  it('reads show the owner and the caller’s own callback (header names only), never the layer’s', async () => {
    await t.clearCalls();
    const m = await createMonitor(t, { monitoredFields: ['companyName'], callbackUrl: receiver.url, callbackRetry: 1 });
    const upstream = await upstreamMonitor(t, String(m.id), DEFAULT_TOKEN);
    await t.clearCalls();
    const FIELDS = `id owner callback { url method field headerNames retry }`;
    const one = await gql<{ companyMonitor: Obj }>(`query($id: ID!) { companyMonitor(id: $id) { ${FIELDS} } }`, { id: m.id });
    expect(one.companyMonitor).toEqual({ id: m.id, owner: upstream.owner, callback: { url: receiver.url, method: 'JSON', field: 'data', headerNames: [], retry: 1 } });
    expect(typeof upstream.owner === 'string' && upstream.owner !== '').toBe(true);
    const all = await gql<{ companyMonitors: Obj[] }>(`{ companyMonitors { ${FIELDS} } }`);
    expect(all.companyMonitors.find((x) => x.id === m.id)).toEqual(one.companyMonitor);
    expect(JSON.stringify(all)).not.toContain('/callbacks/company/');
    // One read each, free.
    expect(await callsOf(t)).toEqual([`GET /monitor/${String(m.id)}`, 'GET /monitor']);
    await gql(`mutation($id: ID!) { deleteCompanyMonitor(id: $id) }`, { id: m.id });
  });

  it('a check reaches the subscriber and the caller’s callback, and makes the next query buy fresh data', async () => {
    // Bought once (whichever endpoint the planner finds cheapest for the name), then a cache hit.
    await t.clearCalls();
    await gql(NAME, { vat: VAT });
    const bought = await callsOf(t);
    expect(bought).toHaveLength(1);
    expect(bought[0]).toMatch(new RegExp(`^GET /IT-[a-z]+/${VAT}$`));
    await gql(NAME, { vat: VAT });
    expect(await callsOf(t)).toEqual(bought);

    const sub = subscribe(t, CHANGED, { monitorId });
    const byVat = subscribe(t, CHANGED, { vatCode: VAT });
    await t.clearCalls();
    await t.control('company/monitorCheck', { id: monitorId, changes: { companyName: 'OPENAPI RENAMED S.P.A.' } });

    const event = await nextChange(sub);
    expect(event).toMatchObject({ id: monitorId, vatCode: VAT, updatedFields: { companyName: 'OPENAPI RENAMED S.P.A.' } });
    expect(event.checkedOn).toEqual(expect.any(String));
    expect((await nextChange(byVat)).id).toBe(monitorId);

    const relayed = await withSafety(receiver.next(), 'relay to the caller’s callback');
    const body = JSON.parse(relayed.body) as { data: Obj };
    expect(body.data).toMatchObject({ id: monitorId, updatedFields: { companyName: 'OPENAPI RENAMED S.P.A.' } });
    // The caller sees its own callback in the record, never the layer's.
    expect((body.data.callback as Obj).url).toBe(receiver.url);

    // The layer re-read the monitor (free); the company's cached data was dropped: bought again.
    await gql(NAME, { vat: VAT });
    expect(await callsOf(t)).toEqual([`GET /monitor/${monitorId}`, ...bought]);
    await gql(NAME, { vat: VAT });
    expect(await callsOf(t)).toEqual([`GET /monitor/${monitorId}`, ...bought]);

    // A subscriber arriving later gets the latest check first.
    const late = subscribe(t, CHANGED, { monitorId });
    expect(await nextChange(late)).toMatchObject({ id: monitorId, updatedFields: { companyName: 'OPENAPI RENAMED S.P.A.' } });
    await Promise.all([sub.return?.(), byVat.return?.(), late.return?.()]);
  });

  it('the sandbox check (GET /monitor/{id}?callback) is pushed the same way', async () => {
    const other = await createMonitor(t, { monitoredFields: ['companyName'], callbackUrl: receiver.url });
    const sub = subscribe(t, CHANGED, { monitorId: other.id });
    const res = await request(`${t.stack.emulatorUrl}/company/monitor/${String(other.id)}?callback`, { headers: { authorization: `Bearer ${DEFAULT_TOKEN}` } });
    expect(res.statusCode).toBe(200);
    await res.body.dump();
    expect(await nextChange(sub)).toMatchObject({ id: other.id, updatedFields: { companyName: 'OPENAPI S.P.A.' } });
    const relayed = JSON.parse((await withSafety(receiver.next(), 'relay of the sandbox check')).body) as { data: Obj };
    expect(relayed.data.id).toBe(other.id);
    await sub.return?.();
  });

  it('tenants never hear, read or invalidate each other’s monitors', async () => {
    // Tenant B has its own cached copy of the company and its own monitor of another company.
    await gql(NAME, { vat: VAT }, TENANT_B);
    const mine = await createMonitor(t, { code: '16935371001', monitoredFields: ['companyName'] }, TENANT_B);
    const feedB = subscribe(t, CHANGED, {}, TENANT_B);

    // B cannot subscribe to A's monitor, nor read it.
    const foreign = subscribe(t, CHANGED, { monitorId }, TENANT_B);
    const r = await withSafety(foreign.next(), 'subscription answer');
    expect((r.value as Result | undefined)?.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    const read = await gql<{ companyMonitor: Obj | null }>(`query($id: ID!) { companyMonitor(id: $id) { id } }`, { id: monitorId }, TENANT_B);
    expect(read.companyMonitor).toBeNull();

    // A's monitor changes, then B's: B's feed's first event is its own monitor.
    await t.control('company/monitorCheck', { id: monitorId, changes: { companyName: 'OPENAPI THIRD S.P.A.' } });
    await withSafety(receiver.next(), 'relay of A’s change');
    await t.control('company/monitorCheck', { id: String(mine.id), changes: { companyName: 'OPEN HOLDING NEW S.R.L.' } });
    expect(await nextChange(feedB)).toMatchObject({ id: mine.id, updatedFields: { companyName: 'OPEN HOLDING NEW S.R.L.' } });

    // A's change left B's cached copy of A's company alone.
    await t.clearCalls();
    await gql(NAME, { vat: VAT }, TENANT_B);
    expect(await callsOf(t)).toEqual([]);
    await feedB.return?.();
  });

  it('a forged, tampered or replayed callback is refused, with no upstream call', async () => {
    const upstream = await upstreamMonitor(t, monitorId, DEFAULT_TOKEN);
    const url = String((upstream.callback as Obj).url);
    const post = async (target: string, body: unknown): Promise<number> => {
      const res = await request(target, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      await res.body.dump();
      return res.statusCode;
    };
    await t.clearCalls();
    // The last delivery again: a replay.
    expect(await post(url, { data: upstream })).toBe(403);
    // A made-up change posted to the real URL is only a trigger: re-read, nothing new, refused as a replay.
    const token = url.slice(url.lastIndexOf('/') + 1);
    const forged = new Signer(Buffer.from('another-secret-of-sufficient-length')).sign('company-callback', token.split('.')[0], 3600);
    expect(await post(`${t.url}/callbacks/company/${forged}`, { data: upstream })).toBe(403);
    const tampered = `${token.slice(0, -2)}${token.endsWith('AA') ? 'BB' : 'AA'}`;
    expect(await post(`${t.url}/callbacks/company/${tampered}`, { data: upstream })).toBe(403);
    expect(await callsOf(t)).toEqual([]);
  });
});

describe('a monitor whose callback is lost', () => {
  let p: TestStack;

  beforeAll(async () => {
    // A fast poller: running monitors read every 300 ms.
    p = await startTestStack({ ...ENV, COMPANY_POLL_INTERVAL_MS: '100', COMPANY_POLL_LATE_AFTER_MS: '300', COMPANY_MONITOR_POLL_MS: '300', COMPANY_POLL_MAX_CALLS_PER_MIN: '600' });
  });

  afterAll(async () => {
    await p?.control('callbacks', { enabled: true });
    await p?.close();
  });

  it('is read by the poller (free): the change is pushed and the cache dropped all the same', async () => {
    const m = await createMonitor(p, { monitoredFields: ['companyName'] });
    await p.clearCalls();
    await gqlOn(p, NAME, { vat: VAT });
    const bought = (await callsOf(p)).filter((c) => !c.startsWith('GET /monitor/'));
    expect(bought).toHaveLength(1);
    const sub = subscribe(p, CHANGED, { monitorId: m.id });
    await p.control('callbacks', { enabled: false });
    await p.clearCalls();
    await p.control('company/monitorCheck', { id: m.id, changes: { companyName: 'OPENAPI POLLED S.P.A.' } });
    expect(await nextChange(sub)).toMatchObject({ id: m.id, updatedFields: { companyName: 'OPENAPI POLLED S.P.A.' } });
    await p.control('callbacks', { enabled: true });
    // Only free reads of the monitor were made to find it; no callback was delivered.
    const calls = await callsOf(p);
    expect(calls.length).toBeGreaterThan(0);
    expect(new Set(calls)).toEqual(new Set([`GET /monitor/${String(m.id)}`]));
    expect((await p.calls('company')).every((c) => c.price === 0)).toBe(true);
    // The cached company was dropped: bought again.
    await p.clearCalls();
    await gqlOn(p, NAME, { vat: VAT });
    expect((await callsOf(p)).filter((c) => !c.startsWith('GET /monitor/'))).toEqual(bought);
    await sub.return?.();
  });
});

describe('a slow dataset bought by POST + callback', () => {
  it('is bought again after a check of the company', async () => {
    const MANAGERS = `query($vat: String!) { company(vatCode: $vat) { managers { __typename } } }`;
    const m = await createMonitor(t, { monitoredFields: ['companyName'] });
    const sub = subscribe(t, CHANGED, { monitorId: m.id });
    await t.clearCalls();
    // Bought by its POST variant (the emulator calls back), then a cache hit.
    await gql(MANAGERS, { vat: VAT });
    expect(await callsOf(t)).toEqual([`POST /IT-stakeholders/${VAT}`]);
    await gql(MANAGERS, { vat: VAT });
    expect(await callsOf(t)).toEqual([`POST /IT-stakeholders/${VAT}`]);

    await t.clearCalls();
    await t.control('company/monitorCheck', { id: m.id, changes: { companyName: 'OPENAPI FOURTH S.P.A.' } });
    expect((await nextChange(sub)).id).toBe(m.id);
    // The check dropped the dataset (and any pending mark): bought again, not polled nor a cache hit.
    await gql(MANAGERS, { vat: VAT });
    expect(await callsOf(t)).toEqual([`GET /monitor/${String(m.id)}`, `POST /IT-stakeholders/${VAT}`]);
    await sub.return?.();
  });
});

describe('a slow dataset still pending when a check comes', () => {
  it('is not cached from its late callback: the next read buys the new data', async () => {
    const MANAGERS = `query($vat: String!) { company(vatCode: $vat) { managers { __typename } } }`;
    const token = await t.createToken(100);
    const m = await createMonitor(t, { monitoredFields: ['companyName'] }, token);
    const sub = subscribe(t, CHANGED, { monitorId: m.id }, token);
    await t.control('company/slow', { ms: 3_600_000 });
    try {
      await t.clearCalls();
      // Bought by POST; the dataset is not ready yet.
      const pending = t.gql(MANAGERS, { vat: VAT }, auth(token));
      await waitFor(async () => (await callsOf(t)).includes(`POST /IT-stakeholders/${VAT}`), 'the POST', { every: 20 });
      // The company changes meanwhile: the pending purchase is dropped with the cache.
      await t.control('company/monitorCheck', { id: m.id, changes: { companyName: 'OPENAPI FIFTH S.P.A.' } });
      expect((await nextChange(sub)).id).toBe(m.id);
      // Its delivery still answers the read that was waiting for it, but is not kept.
      expect(await t.control('company/complete', {})).toEqual({ completed: 1 });
      const first = await withSafety(pending, 'the waiting read');
      expect(first.errors, JSON.stringify(first.errors)).toBeUndefined();

      const again = t.gql(MANAGERS, { vat: VAT }, auth(token));
      await waitFor(async () => (await callsOf(t)).filter((c) => c === `POST /IT-stakeholders/${VAT}`).length >= 2, 'the second POST', { every: 20 });
      expect(await t.control('company/complete', {})).toEqual({ completed: 1 });
      const second = await withSafety(again, 'the read after the check');
      expect(second.errors, JSON.stringify(second.errors)).toBeUndefined();
      expect(await callsOf(t)).toEqual([`POST /IT-stakeholders/${VAT}`, `GET /monitor/${String(m.id)}`, `POST /IT-stakeholders/${VAT}`]);
    } finally {
      await t.control('company/slow', { ms: 0 });
      await sub.return?.();
    }
  });
});
