/**
 * Idempotency keys of paid risk orders, end to end through the gateway: the same key never buys
 * twice, whatever happened to the first answer. Lost answers are made with the emulator's
 * `delayAfterMs` fault (the order is carried out and charged, the answer comes after the layer's
 * timeout) and `hangMs` (the order is carried out only after the layer gave up).
 *
 * Completion is driven explicitly (emulator timing 0): no callback arrives unless a test asks for
 * one. Waits poll the emulator's call log; timeouts below are safety limits only.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { MemoryRequestStore, type IdempotencyRecord } from '../../../subgraphs/risk/store.ts';
import { CF, CF2 } from '../../support/risk.ts';
import { startTestStack, type EmulatorCall, type GraphQLResponse, type TestStack } from '../../support/stack.ts';
import type { Obj } from '../../../contract/values.ts';
import { waitFor } from '../../support/wait.ts';

/** The layer's upstream timeout: an answer later than this is lost. */
const TIMEOUT_MS = 2000;
const LATE_MS = TIMEOUT_MS + 1_500;
const SAFETY_MS = 10_000;
const TENANT_B = 'idempotency-test-tenant-b-token';

let t: TestStack;

beforeAll(async () => {
  t = await startTestStack({ LAYER_SECRET: 'idempotency-test-secret-0123456789', OPENAPI_TIMEOUT_MS: String(TIMEOUT_MS), RISK_POLL_MAX_CALLS_PER_MIN: '0' });
  await t.control('risk/timing', { completeAfterMs: 0 });
  await t.control('tokens', { token: TENANT_B, owner: 'idempotency-b@example.com' });
}, 120_000);

afterAll(async () => {
  await t?.close();
});

beforeEach(async () => {
  await fetch(`${t.stack.emulatorUrl}/_emulator/faults`, { method: 'DELETE' });
});

const PERSON_REPORT = `mutation($input: PersonSubjectInput!, $key: String) {
  orderPersonReport(input: $input, idempotencyKey: $key) { id state }
}`;
const COMPANY_REPORT = `mutation($input: CompanySubjectInput!, $key: String) {
  orderCompanyReport(input: $input, idempotencyKey: $key) { id state }
}`;
const PATRIMONIAL = `mutation($input: PersonSubjectInput!, $key: String) {
  orderPatrimonialReport(input: $input, idempotencyKey: $key) { id state }
}`;
const HEIRS = `mutation($input: PersonSubjectInput!, $key: String) {
  orderHeirsSearch(acceptance: ACCEPTED, input: $input, idempotencyKey: $key) { id state }
}`;
const MONITOR = `mutation($input: CreditScoreMonitorInput!, $key: String) {
  startCreditScoreMonitor(input: $input, idempotencyKey: $key) { id state }
}`;

const mario = { name: 'Mario', surname: 'Rossi', taxCode: CF };
const anna = { name: 'Anna', surname: 'Bianchi', taxCode: CF2 };

/** A fresh key per test, valid for the layer. */
const newKey = (name: string): string => `test:${name}:${Math.random().toString(36).slice(2, 10)}`;

/** POSTs the emulator received on one family path. */
async function posts(path: string): Promise<EmulatorCall[]> {
  return (await t.calls('risk')).filter((c) => c.method === 'POST' && c.path === path);
}

/** Polls the emulator's call log until `count` POSTs on `path` were answered (the late ones included). */
function awaitPosts(path: string, count: number): Promise<EmulatorCall[]> {
  return waitFor(
    async () => {
      const seen = await posts(path);
      return seen.length >= count && seen;
    },
    `${count} POST ${path}`,
    { deadline: SAFETY_MS, every: 25 },
  );
}

function data<T = Obj>(res: GraphQLResponse, field: string): T {
  expect(res.errors, JSON.stringify(res.errors)).toBeUndefined();
  return (res.data as Obj)[field] as T;
}

function onlyError(res: GraphQLResponse): { message: string; extensions: Obj } {
  expect(res.errors, JSON.stringify(res)).toHaveLength(1);
  const e = res.errors![0];
  return { message: e.message, extensions: e.extensions ?? {} };
}

describe('idempotency keys of paid risk orders', () => {
  it('the same key twice buys once and returns the same request, for free the second time', async () => {
    const key = newKey('twice');
    const before = (await posts('/IT-report-azienda')).length;
    const input = { companyName: 'Beta SRL', taxCode: '04123450159' };
    const first = await t.gql(COMPANY_REPORT, { input, key });
    const a = data<{ id: string }>(first, 'orderCompanyReport');
    const second = await t.gql(COMPANY_REPORT, { input, key });
    const b = data<{ id: string }>(second, 'orderCompanyReport');
    expect(b.id).toBe(a.id);
    expect(second.extensions?.cost?.euro).toBe(0);
    expect((await posts('/IT-report-azienda')).length - before).toBe(1);

    // Another tenant's key of the same name is its own.
    const other = await t.gql(COMPANY_REPORT, { input, key }, { authorization: `Bearer ${TENANT_B}` });
    expect(data<{ id: string }>(other, 'orderCompanyReport').id).not.toBe(a.id);
    expect((await posts('/IT-report-azienda')).length - before).toBe(2);
  });

  it('a monitor started twice under one key is started once', async () => {
    const key = newKey('monitor');
    const before = (await posts('/IT-creditscore-top-monitor')).length;
    const input = { vatCode: '03456782055' };
    const a = data<{ id: string }>(await t.gql(MONITOR, { input, key }), 'startCreditScoreMonitor');
    const b = data<{ id: string }>(await t.gql(MONITOR, { input, key }), 'startCreditScoreMonitor');
    expect(b.id).toBe(a.id);
    expect((await posts('/IT-creditscore-top-monitor')).length - before).toBe(1);
  });

  it('concurrent orders under one key make one paid call and get the same request', async () => {
    const key = newKey('concurrent');
    const path = '/IT-report-persona';
    const before = (await posts(path)).length;
    // The answer takes a while (within the timeout), so the others arrive while it is in flight.
    await t.control('faults', { area: 'risk', pathPrefix: path, delayAfterMs: 300, count: 1 });
    // Different selections, so the gateway cannot merge the requests itself.
    const results = await Promise.all([
      t.gql(PERSON_REPORT, { input: mario, key }),
      t.gql(`mutation($input: PersonSubjectInput!, $key: String) { second: orderPersonReport(input: $input, idempotencyKey: $key) { id } }`, { input: mario, key }),
      t.gql(`mutation($input: PersonSubjectInput!, $key: String) { third: orderPersonReport(input: $input, idempotencyKey: $key) { id state rawState } }`, { input: mario, key }),
    ]);
    const ids = [data<{ id: string }>(results[0], 'orderPersonReport').id, data<{ id: string }>(results[1], 'second').id, data<{ id: string }>(results[2], 'third').id];
    expect(new Set(ids).size).toBe(1);
    expect((await posts(path)).length - before).toBe(1);
  });

  it('the same key for a different order is refused with IDEMPOTENCY_KEY_REUSED, before any call', async () => {
    const key = newKey('reused');
    data(await t.gql(PATRIMONIAL, { input: mario, key }), 'orderPatrimonialReport');
    const before = (await t.calls('risk')).length;
    const { extensions, message } = onlyError(await t.gql(PATRIMONIAL, { input: anna, key }));
    expect(extensions.code).toBe('IDEMPOTENCY_KEY_REUSED');
    expect(message).toContain(key);
    // Another level is another order, too.
    const other = onlyError(
      await t.gql(`mutation($input: PersonSubjectInput!, $key: String) { orderPatrimonialReport(level: TOP, input: $input, idempotencyKey: $key) { id } }`, { input: mario, key }),
    );
    expect(other.extensions.code).toBe('IDEMPOTENCY_KEY_REUSED');
    expect((await t.calls('risk')).length).toBe(before);
  });

  it('a malformed key is BAD_USER_INPUT, before any call', async () => {
    const before = (await t.calls('risk')).length;
    for (const key of ['short', 'has space in it', 'x'.repeat(129), 'ünïcødé-key']) {
      const { extensions } = onlyError(await t.gql(PATRIMONIAL, { input: mario, key }));
      expect(extensions.code).toBe('BAD_USER_INPUT');
      expect(extensions.field).toBe('idempotencyKey');
    }
    expect((await t.calls('risk')).length).toBe(before);
  });

  it('a lost answer says the outcome is unknown; the retry under the key finds the request without buying it again', async () => {
    const key = newKey('lost');
    const path = '/IT-eredi-con-accettazione';
    const before = (await posts(path)).length;
    await t.control('faults', { area: 'risk', pathPrefix: path, delayAfterMs: LATE_MS, count: 1 });
    const { message, extensions } = onlyError(await t.gql(HEIRS, { input: mario, key }));
    expect(extensions.code).toBe('UPSTREAM_TIMEOUT');
    expect(extensions.outcome).toBe('unknown');
    expect(extensions.atRisk).toBeGreaterThan(0);
    expect(extensions.idempotencyKey).toBe(key);
    expect(message).toContain(`the order may have been created and charged; repeat the mutation with idempotencyKey "${key}"`);

    const [created] = (await awaitPosts(path, before + 1)).slice(before);
    expect(created.status).toBe(200);
    expect(created.price).toBeGreaterThan(0);

    const retry = data<{ id: string }>(await t.gql(HEIRS, { input: mario, key }), 'orderHeirsSearch');
    const listed = data<Array<{ id: string }>>(await t.gql(`{ riskRequests(family: HEIRS_ACCEPTED) { id } }`), 'riskRequests');
    expect(listed.map((r) => r.id)).toContain(retry.id);
    // And again: now from the store.
    expect(data<{ id: string }>(await t.gql(HEIRS, { input: mario, key }), 'orderHeirsSearch').id).toBe(retry.id);
    expect((await posts(path)).length - before).toBe(1);
  });

  it("a lost answer without a key gives a generated key that works like a caller's", async () => {
    const path = '/IT-patrimoniale-persona';
    const before = (await posts(path)).length;
    await t.control('faults', { area: 'risk', pathPrefix: path, delayAfterMs: LATE_MS, count: 1 });
    const { message, extensions } = onlyError(await t.gql(PATRIMONIAL, { input: anna }));
    expect(extensions.code).toBe('UPSTREAM_TIMEOUT');
    expect(extensions.outcome).toBe('unknown');
    const key = extensions.idempotencyKey;
    expect(typeof key).toBe('string');
    expect(message).toContain(`"${String(key)}"`);

    await awaitPosts(path, before + 1);
    const retry = data<{ id: string }>(await t.gql(PATRIMONIAL, { input: anna, key }), 'orderPatrimonialReport');
    expect(retry.id).toMatch(/^[0-9a-f]{24}$/);
    expect((await posts(path)).length - before).toBe(1);
    // The generated key is bound to that order like any other.
    expect(onlyError(await t.gql(PATRIMONIAL, { input: mario, key })).extensions.code).toBe('IDEMPOTENCY_KEY_REUSED');
  });

  it('while the unanswered order cannot be found the retry is OUTCOME_UNKNOWN and buys nothing; later it finds it', async () => {
    const key = newKey('hang');
    const path = '/IT-report-persona-top';
    const before = (await posts(path)).length;
    // The order is carried out only after the layer gave up waiting.
    await t.control('faults', { area: 'risk', pathPrefix: path, hangMs: LATE_MS + 500, count: 1 });
    const TOP = `mutation($input: PersonSubjectInput!, $key: String) { orderPersonReport(level: TOP, input: $input, idempotencyKey: $key) { id } }`;
    expect(onlyError(await t.gql(TOP, { input: anna, key })).extensions.outcome).toBe('unknown');

    const early = onlyError(await t.gql(TOP, { input: anna, key }));
    expect(early.extensions.code).toBe('OUTCOME_UNKNOWN');
    expect(early.extensions.retryAfter).toBeGreaterThan(0);
    expect(early.extensions.idempotencyKey).toBe(key);
    expect(early.message).toMatch(/retry later with the same idempotencyKey/);
    expect(early.message).toMatch(/new idempotencyKey to order again/);

    await awaitPosts(path, before + 1);
    const found = data<{ id: string }>(await t.gql(TOP, { input: anna, key }), 'orderPersonReport');
    expect(found.id).toMatch(/^[0-9a-f]{24}$/);
    expect((await posts(path)).length - before).toBe(1);
  });

  it('a callback that arrives after a lost answer binds the key: the retry needs no look-up', async () => {
    const key = newKey('callback');
    const path = '/IT-eredi-senza-accettazione';
    const SEARCH = `mutation($input: PersonSubjectInput!, $key: String) { orderHeirsSearch(acceptance: NOT_ACCEPTED, input: $input, idempotencyKey: $key) { id state } }`;
    const before = (await posts(path)).length;
    await t.control('faults', { area: 'risk', pathPrefix: path, delayAfterMs: LATE_MS, count: 1 });
    expect(onlyError(await t.gql(SEARCH, { input: anna, key })).extensions.outcome).toBe('unknown');
    await awaitPosts(path, before + 1);
    // Complete every pending request now: the callback reaches the layer.
    await t.control('risk/advance', {});
    await t.clearCalls();
    const got = data<{ id: string; state: string }>(await t.gql(SEARCH, { input: anna, key }), 'orderHeirsSearch');
    expect(got.state).toBe('COMPLETE');
    // Known from the callback: no list, no read, no order.
    expect(await t.calls('risk')).toEqual([]);
  });

  it('after a definite refusal (503) the key is free: the retry buys', async () => {
    const key = newKey('refused');
    const path = '/IT-negativita';
    const NEG = `mutation($input: NegativeRecordsInput!, $key: String) { orderNegativeRecordsCheck(input: $input, idempotencyKey: $key) { id } }`;
    const input = { taxCodeOrVat: CF };
    const before = (await posts(path)).length;
    await t.control('faults', { area: 'risk', pathPrefix: path, status: 503, count: 1 });
    const { extensions } = onlyError(await t.gql(NEG, { input, key }));
    expect(extensions.code).toBe('UPSTREAM_UNAVAILABLE');
    expect(extensions.outcome).toBeUndefined();
    const got = data<{ id: string }>(await t.gql(NEG, { input, key }), 'orderNegativeRecordsCheck');
    expect(got.id).toMatch(/^[0-9a-f]{24}$/);
    const seen = (await posts(path)).slice(before);
    expect(seen.map((c) => c.status)).toEqual([503, 200]);
  });
});

describe('a 502 or 504 on an order', () => {
  it('is an unknown outcome (a proxy lost the answer): money at risk, the key kept, nothing bought again', async () => {
    const key = newKey('proxy');
    const path = '/IT-negativita';
    const NEG = `mutation($input: NegativeRecordsInput!, $key: String) { orderNegativeRecordsCheck(input: $input, idempotencyKey: $key) { id } }`;
    const input = { taxCodeOrVat: CF2 };
    const before = (await posts(path)).length;
    await t.control('faults', { area: 'risk', pathPrefix: path, status: 502, count: 1 });
    const first = await t.gql(NEG, { input, key });
    const { extensions } = onlyError(first);
    expect(extensions).toMatchObject({ code: 'UPSTREAM_UNAVAILABLE', outcome: 'unknown', idempotencyKey: key, atRisk: 3 });
    expect(first.extensions?.cost).toMatchObject({ euro: 0, atRisk: 3 });
    // The emulator's 502 created nothing: the retry finds nothing and does not buy.
    const again = onlyError(await t.gql(NEG, { input, key }));
    expect(again.extensions.code).toBe('OUTCOME_UNKNOWN');
    expect((await posts(path)).slice(before).map((c) => c.status)).toEqual([502]);
  });
});

describe('the memory store of idempotency keys', () => {
  const record = (over: Partial<IdempotencyRecord> = {}): IdempotencyRecord => ({
    tenant: 't1',
    key: 'key-0001',
    family: 'PATRIMONIAL',
    fingerprint: 'f1',
    reservation: 'res-1',
    relay: null,
    state: 'pending',
    id: null,
    startedAt: 0,
    atRisk: 0,
    ...over,
  });

  it('claims once per tenant and key, settles, frees, and forgets after 24 hours', async () => {
    let now = 1_000_000;
    const store = new MemoryRequestStore({ now: () => now });
    expect(await store.claimIdempotencyKey(record())).toBeUndefined();
    expect((await store.claimIdempotencyKey(record({ fingerprint: 'f2' })))?.fingerprint).toBe('f1');
    expect(await store.claimIdempotencyKey(record({ tenant: 't2', reservation: 'res-2' }))).toBeUndefined();

    await store.settleIdempotencyKey('t1', 'key-0001', { state: 'unknown', atRisk: 15 });
    expect((await store.idempotencyRecord('t1', 'key-0001'))?.state).toBe('unknown');
    // A callback binding the reservation settles the key.
    await store.bindKey('res-1', 'AAAAAAAAAAAAAAAAAAAAAAAA');
    expect(await store.idempotencyRecord('t1', 'key-0001')).toMatchObject({ state: 'created', id: 'aaaaaaaaaaaaaaaaaaaaaaaa' });
    // `unknown` never replaces `created`.
    await store.settleIdempotencyKey('t1', 'key-0001', { state: 'unknown', atRisk: 15 });
    expect((await store.idempotencyRecord('t1', 'key-0001'))?.state).toBe('created');

    await store.releaseIdempotencyKey('t2', 'key-0001');
    expect(await store.claimIdempotencyKey(record({ tenant: 't2', fingerprint: 'f3', reservation: 'res-3' }))).toBeUndefined();

    now += 24 * 3600 * 1000 + 1;
    expect(await store.idempotencyRecord('t1', 'key-0001')).toBeUndefined();
    expect(await store.claimIdempotencyKey(record({ fingerprint: 'f9' }))).toBeUndefined();
  });
});
