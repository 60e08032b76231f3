/**
 * Long-lived work and the poller: monitors keep a callback URL that outlives them and are read
 * now and then (so a lost callback is noticed); reservations end with their request and a full
 * store evicts finished and short-lived ones first; the poller backs off on failures, stops after
 * a permanent refusal and reads old pending requests only at the slow rate.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type Client, type FormattedExecutionResult } from 'graphql-ws';
import WebSocket from 'ws';
import { request } from 'undici';
import { RiskPoller } from '../../../subgraphs/risk/poller.ts';
import { MemoryRequestStore, type TrackedRequest } from '../../../subgraphs/risk/store.ts';
import { FINISHED_RESERVATION_GRACE_S } from '../../../subgraphs/runtime/tracking/store.ts';
import { UpstreamError } from '../../../subgraphs/upstream/errors.ts';
import { CF, CF2 } from '../../support/risk.ts';
import { startTestStack, type TestStack } from '../../support/stack.ts';
import { withSafety as safety } from '../../support/safety.ts';
import type { Obj } from '../../../contract/values.ts';
import { waitFor } from '../../support/wait.ts';

const ENV = {
  LAYER_SECRET: 'risk-polling-test-secret-0123456789',
  // One-off callback URLs live a minute here; monitors' must not.
  RISK_CALLBACK_TTL_S: '60',
  RISK_POLL_INTERVAL_MS: '50',
  RISK_POLL_LATE_AFTER_MS: '200',
  RISK_POLL_MAX_CALLS_PER_MIN: '6000',
  RISK_POLL_MAX_BACKOFF_MS: '60000',
  RISK_MONITOR_POLL_MS: '400',
  // One poll, one upstream call.
  OPENAPI_MAX_RETRIES: '0',
};
const SAFETY_MS = 15_000;
const DAY = 24 * 3600 * 1000;

let t: TestStack;
const clients: Client[] = [];

async function gql<T = Obj>(query: string, variables: Obj = {}): Promise<T> {
  const res = await t.gql<T>(query, variables);
  expect(res.errors, JSON.stringify(res.errors)).toBeUndefined();
  return res.data as T;
}

async function emulator(method: 'GET' | 'DELETE', path: string): Promise<unknown> {
  const res = await request(`${t.stack.emulatorUrl}${path}`, { method, headers: { authorization: 'Bearer emulator-token' } });
  return res.body.json();
}

/** A safety limit on a wait an event ends (see `support/safety.ts`). */
const withSafety = <T>(p: Promise<T>, what: string): Promise<T> => safety(p, what, SAFETY_MS);

/** Reads of one record's path (GET) so far, with their arrival times. */
async function readsOf(path: string): Promise<number[]> {
  const calls = (await emulator('GET', '/_emulator/calls?area=risk')) as Array<{ method: string; path: string; at: string }>;
  return calls.filter((c) => c.method === 'GET' && c.path === path).map((c) => Date.parse(c.at));
}

const waitUntil = async (check: () => Promise<boolean>, what: string): Promise<void> => void (await waitFor(check, what, { deadline: SAFETY_MS, every: 25 }));

const ORDER_PATRIMONIAL = `mutation($input: PersonSubjectInput!) { orderPatrimonialReport(level: STANDARD, input: $input) { id state } }`;

beforeAll(async () => {
  t = await startTestStack(ENV);
  await t.control('risk/timing', { completeAfterMs: 0 });
});

afterAll(async () => {
  await Promise.allSettled(clients.map(async (c) => c.dispose()));
  await t?.close();
});

describe('monitors', () => {
  it('get a callback URL valid beyond their year, whatever RISK_CALLBACK_TTL_S says', async () => {
    const nowS = Math.floor(Date.now() / 1000);
    const expiryOf = (rec: Obj): number => Number(/\/callbacks\/risk\/[^.]+\.(\d+)\./.exec(String((rec.callback as Obj).url))?.[1]);

    const { startCreditScoreMonitor: m } = await gql<{ startCreditScoreMonitor: Obj }>(`mutation { startCreditScoreMonitor(input: { vatCode: "12485671007" }) { id } }`);
    const scoreMonitor = ((await emulator('GET', `/risk/IT-creditscore-top-monitor/${String(m.id)}`)) as { data: Obj }).data;
    expect(expiryOf(scoreMonitor)).toBeGreaterThan(Math.max(nowS + 365 * 24 * 3600, Number(scoreMonitor.expiryTimestamp)));

    const { startKycMonitor: k } = await gql<{ startKycMonitor: Obj }>(`mutation { startKycMonitor(input: { name: "watch", query: { name: "Mario Rossi" } }) { id } }`);
    const kycMonitor = ((await emulator('GET', `/risk/WW-kyc-full-monitor/${String(k.id)}`)) as { data: Obj }).data;
    expect(expiryOf(kycMonitor)).toBeGreaterThan(Math.max(nowS + 365 * 24 * 3600, Number(kycMonitor.expiryTimestamp)));

    // A one-off request keeps the configured lifetime.
    const { orderPatrimonialReport: p } = await gql<{ orderPatrimonialReport: Obj }>(ORDER_PATRIMONIAL, { input: { name: 'Mario', surname: 'Rossi', taxCode: CF } });
    const orderedS = Math.ceil(Date.now() / 1000);
    const report = ((await emulator('GET', `/risk/IT-patrimoniale-persona/${String(p.id)}`)) as { data: Obj }).data;
    expect(expiryOf(report)).toBeLessThanOrEqual(orderedS + 60);
  });

  it('a change whose callback is lost is noticed by the slow read of active monitors', async () => {
    await t.control('callbacks', { enabled: false });
    try {
      const { startKycMonitor: k } = await gql<{ startKycMonitor: Obj }>(`mutation { startKycMonitor(input: { name: "lost", query: { name: "Anna Bianchi" } }) { id } }`);
      const id = String(k.id);
      const client = createClient({ url: t.stack.gateway.wsUrl, webSocketImpl: WebSocket, retryAttempts: 0, lazy: true });
      clients.push(client);
      const it = client.iterate<Obj>({
        query: `subscription($id: ID!) { riskRequestUpdated(id: $id) { state updatedAt ... on KycMonitorRequest { evidences } } }`,
        variables: { id },
      });
      const next = async (): Promise<Obj> => {
        const r = await withSafety(it.next(), 'subscription event');
        expect(r.done).toBe(false);
        const v = r.value as FormattedExecutionResult<Obj, unknown>;
        expect(v.errors).toBeUndefined();
        return (v.data as Obj).riskRequestUpdated as Obj;
      };
      expect((await next()).state).toBe('PROCESSING');
      await t.control('risk/advance', { id });
      const active = await next();
      expect(active.state).toBe('ACTIVE');
      // A change upstream, whose callback never arrives.
      await t.control('risk/monitorEvent', { id });
      const changed = await next();
      expect(changed.state).toBe('ACTIVE');
      expect(Date.parse(String(changed.updatedAt))).toBeGreaterThan(Date.parse(String(active.updatedAt)));
      expect(changed.evidences).not.toEqual([]);
      await it.return?.();
    } finally {
      await t.control('callbacks', { enabled: true });
    }
  });
});

describe('the poller through the gateway', () => {
  it('stops polling a request the upstream answers 404 for, and backs off on 503', async () => {
    await t.control('callbacks', { enabled: false });
    try {
      const order = async (taxCode: string): Promise<string> =>
        String((await gql<{ orderPatrimonialReport: Obj }>(ORDER_PATRIMONIAL, { input: { name: 'Anna', surname: 'Bianchi', taxCode } })).orderPatrimonialReport.id);
      const gone = await order(CF2);
      const flaky = await order(CF);
      await t.control('faults', { area: 'risk', pathPrefix: `/IT-patrimoniale-persona/${gone}`, status: 404, count: 1000 });
      await t.control('faults', { area: 'risk', pathPrefix: `/IT-patrimoniale-persona/${flaky}`, status: 503, count: 1000 });

      await waitUntil(async () => (await readsOf(`/IT-patrimoniale-persona/${flaky}`)).length >= 1, 'a first poll');
      // The third read of the 503 record comes after waits of 400 and 800 ms (≥ 1.2 s of polling).
      await waitUntil(async () => (await readsOf(`/IT-patrimoniale-persona/${flaky}`)).length >= 3, 'a third poll of the 503 record');
      // Once 404: never again (every 200 ms before).
      expect(await readsOf(`/IT-patrimoniale-persona/${gone}`)).toHaveLength(1);
      // 503: waits of 400, 800, 1600 ms… so at most 3 reads in 2 s (about 10 before).
      const flakyReads = await readsOf(`/IT-patrimoniale-persona/${flaky}`);
      expect(flakyReads.length).toBeGreaterThanOrEqual(2);
      expect(flakyReads.length).toBeLessThanOrEqual(4);
      // Each wait at least the doubled one (a loaded machine makes waits longer, never shorter).
      const gaps = flakyReads.slice(1).map((at, i) => at - flakyReads[i]);
      for (let i = 0; i < gaps.length; i++) expect(gaps[i]).toBeGreaterThanOrEqual(390 * 2 ** i);
    } finally {
      await emulator('DELETE', '/_emulator/faults');
      await t.control('callbacks', { enabled: true });
    }
  });
});

describe('the poller', () => {
  function setup(opts: { slowEveryMs?: number; maxAgeMs?: number } = {}) {
    let now = 100 * DAY;
    const store = new MemoryRequestStore({ now: () => now });
    const read: string[] = [];
    let fail: ((e: TrackedRequest) => Error | null) | null = null;
    const poller = new RiskPoller(
      {
        unfinished: () => store.unfinished(),
        refresh: async (e) => {
          read.push(e.id);
          const err = fail?.(e) ?? null;
          if (err) throw err;
          await store.markChecked(e.tenant, e.id, now);
        },
        markChecked: (e, at) => store.markChecked(e.tenant, e.id, at),
      },
      { lateAfterMs: 1000, maxCallsPerMinute: 1000, now: () => now, ...opts },
    );
    return {
      store,
      poller,
      read,
      advance: (ms: number) => (now += ms),
      nowS: () => Math.floor(now / 1000),
      failWith: (f: (e: TrackedRequest) => Error | null) => (fail = f),
    };
  }
  const notFound = (): UpstreamError => new UpstreamError('http', 'no such request', 'risk', 'IT-patrimoniale-persona', 404, 302);

  it('reads pending requests older than the maximum age only at the slow rate', async () => {
    const s = setup({ slowEveryMs: DAY, maxAgeMs: 7 * DAY });
    const old = 'a'.repeat(24);
    const young = 'b'.repeat(24);
    await s.store.observe('A', 'PATRIMONIAL', { id: old, state: 'processing', creation_timestamp: s.nowS() - 8 * 24 * 3600 });
    await s.store.observe('A', 'PATRIMONIAL', { id: young, state: 'processing', creation_timestamp: s.nowS() });
    s.advance(1000);
    await s.poller.tick();
    expect(s.read).toEqual([young]);
    s.advance(DAY);
    await s.poller.tick();
    expect(s.read.filter((id) => id === old)).toHaveLength(1);
  });

  it('reads active monitors at the slow rate, and not between', async () => {
    const s = setup({ slowEveryMs: 10_000 });
    await s.store.observe('A', 'KYC_MONITOR', { id: 'c'.repeat(24), state: 'ACTIVATED', creationTimestamp: s.nowS() });
    s.advance(5000);
    await s.poller.tick();
    expect(s.read).toEqual([]);
    s.advance(5000);
    await s.poller.tick();
    expect(s.read).toHaveLength(1);
    s.advance(1000);
    await s.poller.tick();
    expect(s.read).toHaveLength(1);
  });

  it('backs off after failures, doubling, and resets once the request moves', async () => {
    const s = setup();
    const id = 'd'.repeat(24);
    await s.store.observe('A', 'PATRIMONIAL', { id, state: 'processing', creation_timestamp: s.nowS() });
    s.failWith(() => new UpstreamError('http', 'unavailable', 'risk', 'IT-patrimoniale-persona', 503));
    const readsAfter = async (ms: number): Promise<number> => {
      s.advance(ms);
      await s.poller.tick();
      return s.read.length;
    };
    expect(await readsAfter(1000)).toBe(1);
    expect(await readsAfter(1000)).toBe(1); // waits 2 s now
    expect(await readsAfter(1000)).toBe(2);
    expect(await readsAfter(3000)).toBe(2); // then 4 s
    expect(await readsAfter(1000)).toBe(3);
    // A callback moves it: polling starts afresh.
    s.failWith(() => null);
    await s.store.observe('A', 'PATRIMONIAL', { id, state: 'processing', creation_timestamp: s.nowS(), last_update_timestamp: s.nowS() + 5 });
    expect(await readsAfter(1000)).toBe(4);
  });

  it('gives up on a request after a permanent refusal, until something else changes it', async () => {
    const s = setup();
    const id = 'e'.repeat(24);
    await s.store.observe('A', 'PATRIMONIAL', { id, state: 'processing', creation_timestamp: s.nowS() });
    s.failWith(notFound);
    s.advance(1000);
    await s.poller.tick();
    expect(s.read).toHaveLength(1);
    expect(s.poller.gaveUpOn('A', id)).toMatch(/404/);
    s.advance(DAY);
    await s.poller.tick();
    expect(s.read).toHaveLength(1);
    await s.store.observe('A', 'PATRIMONIAL', { id, state: 'processing', creation_timestamp: s.nowS(), last_update_timestamp: s.nowS() + 5 });
    s.advance(1000);
    await s.poller.tick();
    expect(s.read).toHaveLength(2);
  });
});

describe('callback reservations', () => {
  const expiresIn = (s: number): number => Math.floor(Date.now() / 1000) + s;

  it('end a grace period after their request reaches a final state', async () => {
    let now = Date.now();
    const store = new MemoryRequestStore({ now: () => now });
    const id = 'f'.repeat(24);
    await store.reserve({ key: 'k', tenant: 'A', family: 'PATRIMONIAL', id: null, relay: null, expiresAt: expiresIn(60), token: 't' });
    await store.bindKey('k', id);
    await store.observe('A', 'PATRIMONIAL', { id, state: 'processing', lastUpdateTimestamp: 1 });
    expect(await store.reservation('k')).toMatchObject({ id });
    await store.observe('A', 'PATRIMONIAL', { id, state: 'complete', lastUpdateTimestamp: 2 });
    // A retried delivery of the final state is still answered for a while…
    expect(await store.reservation('k')).toMatchObject({ id });
    // …then the key is gone.
    now += (FINISHED_RESERVATION_GRACE_S + 1) * 1000;
    expect(await store.reservation('k')).toBeUndefined();
    expect(store.reservationCount).toBe(0);
  });

  it('when full, go finished first, then soonest-expiring: a monitor outlives newer one-off requests', async () => {
    const store = new MemoryRequestStore({ maxReservations: 3 });
    await store.reserve({ key: 'monitor', tenant: 'A', family: 'KYC_MONITOR', id: null, relay: null, expiresAt: expiresIn(5 * 365 * 24 * 3600), token: 't' });
    await store.reserve({ key: 'r1', tenant: 'A', family: 'PATRIMONIAL', id: null, relay: null, expiresAt: expiresIn(30 * 24 * 3600), token: 't' });
    await store.reserve({ key: 'r2', tenant: 'A', family: 'PATRIMONIAL', id: null, relay: null, expiresAt: expiresIn(30 * 24 * 3600 + 1), token: 't' });
    await store.reserve({ key: 'r3', tenant: 'A', family: 'PATRIMONIAL', id: null, relay: null, expiresAt: expiresIn(30 * 24 * 3600 + 2), token: 't' });
    expect(await store.reservation('monitor')).toBeDefined();
    expect(await store.reservation('r1')).toBeUndefined();
    expect(await store.reservation('r3')).toBeDefined();
  });
});
