/**
 * The upstream side's shared stores, one spec run against memory and against Redis: the answer
 * cache, the cost ledger, in-flight markers (two clients — "replicas" — sharing them buy once), the
 * pending slow datasets, and the request-rate limiter.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { MemoryCacheStore, MemoryInFlightMarkers, MemoryPendingStore, type CacheStore, type InFlightMarkers, type PendingStore } from '../../../subgraphs/upstream/cache.ts';
import { UpstreamClient } from '../../../subgraphs/upstream/client.ts';
import { loadUpstreamConfig } from '../../../subgraphs/upstream/config.ts';
import { CostMeter } from '../../../subgraphs/upstream/cost.ts';
import type { Endpoint } from '../../../subgraphs/upstream/endpoint.ts';
import { UpstreamError } from '../../../subgraphs/upstream/errors.ts';
import { periodOf } from '../../../contract/prices.ts';
import { CostLimitError, MemoryCostLedger, type CostLedger } from '../../../subgraphs/upstream/ledger.ts';
import {
  MemoryRateLimitStore,
  RateLimitedError,
  RateLimiter,
  rateLimitsFor,
  ruleMatches,
  type RateLimitRule,
  type RateLimitStore,
} from '../../../subgraphs/upstream/rate-limits.ts';
import { RedisCacheStore, RedisInFlightMarkers, RedisPendingStore } from '../../../subgraphs/upstream/redis-cache.ts';
import { RedisCostLedger } from '../../../subgraphs/upstream/redis-ledger.ts';
import { RedisRateLimitStore } from '../../../subgraphs/upstream/redis-rate-limit.ts';
import { upstreamStores } from '../../../subgraphs/upstream/stores.ts';
import { tenantOf } from '../../../subgraphs/upstream/tenant.ts';
import { describeStores, TEST_REDIS_URL } from '../../support/store-spec.ts';
import { SqliteCostLedger, SqlitePendingStore } from '../../../subgraphs/upstream/sqlite-stores.ts';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { json, startStub, type Stub } from '../../support/stub.ts';
import { nextTurn, waitFor } from '../../support/wait.ts';

/**
 * Real time passing, where it is the subject (a lease or TTL running out on the store's own clock:
 * Redis's for the Redis stores); never a way to wait for something to happen.
 */
const elapse = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The clock of cache freshness and of the ledger's day, moved by the tests. */
let now = Date.UTC(2026, 0, 15, 10, 0, 0);
const clock = () => now;

// ---------------------------------------------------------------------------------------------
// Cache

describeStores<CacheStore>('upstream cache', { memory: () => new MemoryCacheStore(100, clock), redis: (redis) => new RedisCacheStore(redis, { now: clock }) }, (stores) => {
  it('is fresh for its TTL, then stale for the stale window, then gone (on the clock)', async () => {
    const cache = await stores.make();
    await cache.set('t|company|envelope|/IT-start/1', { companyName: 'ACME', n: [1, null] }, 60, 120);
    expect(await cache.get('t|company|envelope|/IT-start/1')).toEqual({ value: { companyName: 'ACME', n: [1, null] }, fresh: true, staleForMs: 0 });
    now += 60_000 + 500;
    expect(await cache.get('t|company|envelope|/IT-start/1')).toEqual({ value: { companyName: 'ACME', n: [1, null] }, fresh: false, staleForMs: 500 });
    now += 120_000;
    expect(await cache.get('t|company|envelope|/IT-start/1')).toBeUndefined();
    expect(await cache.get('never set')).toBeUndefined();
  });

  it('stores nothing with a TTL of 0, and keeps no stale copy without a stale window', async () => {
    const cache = await stores.make();
    await cache.set('a', 1, 0, 100);
    expect(await cache.get('a')).toBeUndefined();
    await cache.set('b', null, 10);
    expect(await cache.get('b')).toEqual({ value: null, fresh: true, staleForMs: 0 });
    now += 10_001;
    expect(await cache.get('b')).toBeUndefined();
  });

  it('is shared by the replicas of one store', async () => {
    const a = await stores.make();
    const b = await stores.replica(a);
    await a.set('k', { x: 1 }, 30);
    expect((await b.get('k'))?.value).toEqual({ x: 1 });
    const other = await stores.make();
    expect(await other.get('k')).toBeUndefined();
  });

  it('clears its own entries only', async () => {
    const cache = await stores.make();
    const other = await stores.make();
    await cache.set('a', 1, 60);
    await cache.set('b*[x]?', 2, 60);
    await other.set('a', 3, 60);
    const raw = stores.connection(cache);
    await raw?.set('ledger:op:x', '5');
    await cache.clear();
    expect(await cache.get('a')).toBeUndefined();
    expect(await cache.get('b*[x]?')).toBeUndefined();
    expect((await other.get('a'))?.value).toBe(3);
    if (raw) expect(await raw.get('ledger:op:x')).toBe('5');
  });

  it('lets Redis expire an entry after its TTL plus stale window (PX)', async () => {
    const cache = await stores.make();
    await cache.set('px', 'v', 30, 90);
    const raw = stores.connection(cache);
    if (!raw) return expect(stores.kind).toBe('memory');
    const pttl = await raw.pttl('cache:px');
    expect(pttl).toBeGreaterThan(110_000);
    expect(pttl).toBeLessThanOrEqual(120_000);
  });
});

// ---------------------------------------------------------------------------------------------
// Cost ledger

const limits = (operation: number | null, day: number | null) => ({ operation, day });

describeStores<CostLedger>(
  'cost ledger',
  { memory: () => new MemoryCostLedger({ now: clock }), redis: (redis) => new RedisCostLedger(redis, { now: clock }), sqlite: (db) => new SqliteCostLedger(db, { now: clock }) },
  (stores) => {
    const acct = (operationId: string, tenant = 't1') => ({ operationId, tenant });

    it('commits to the operation and the day, and gives back a release (never below zero)', async () => {
      const ledger = await stores.make();
      await ledger.reserve(acct('op1'), 0.9, limits(50, null), 'GET IT-aml');
      await ledger.reserve(acct('op2'), 3, limits(50, null), 'GET IT-creditscore-top');
      expect(await ledger.balance(acct('op1'))).toEqual({ operation: 0.9, day: 3.9 });
      await ledger.release(acct('op2'), 3);
      expect(await ledger.balance(acct('op2'))).toEqual({ operation: 0, day: 0.9 });
      await ledger.release(acct('op2'), 3);
      expect(await ledger.balance(acct('op2'))).toEqual({ operation: 0, day: 0 });
      await ledger.reserve(acct('op3'), 0, limits(0.01, 0.01), 'free');
      expect(await ledger.balance(acct('op3'))).toEqual({ operation: 0, day: 0 });
    });

    it("refuses a charge past the operation's budget, saying what is committed, and commits nothing", async () => {
      const ledger = await stores.make();
      await ledger.reserve(acct('op'), 0.9, limits(1, null), 'GET IT-aml');
      const err = await ledger.reserve(acct('op'), 0.15, limits(1, null), 'GET IT-full').catch((e: unknown) => e);
      expect(err).toBeInstanceOf(CostLimitError);
      expect(err).toMatchObject({ scope: 'operation', budget: 1, committed: 0.9, price: 0.15, endpoint: 'GET IT-full' });
      expect(await ledger.balance(acct('op'))).toEqual({ operation: 0.9, day: 0.9 });
      await ledger.reserve(acct('op'), 0.1, limits(1, null), 'GET IT-start');
      expect((await ledger.balance(acct('op'))).operation).toBe(1);
    });

    it("refuses a charge past the tenant's day across operations; another tenant and the next day are apart", async () => {
      const ledger = await stores.make();
      await ledger.reserve(acct('a', 't1'), 6, limits(null, 10), 'x');
      const err = await ledger.reserve(acct('b', 't1'), 5, limits(null, 10), 'y').catch((e: unknown) => e);
      expect(err).toMatchObject({ name: 'CostLimitError', scope: 'day', budget: 10, committed: 6 });
      expect(await ledger.balance(acct('b', 't1'))).toEqual({ operation: 0, day: 6 });
      await ledger.reserve(acct('c', 't2'), 5, limits(null, 10), 'y');
      now += 86_400_000;
      await ledger.reserve(acct('d', 't1'), 9, limits(null, 10), 'z');
      expect(await ledger.balance(acct('d', 't1'))).toEqual({ operation: 9, day: 9 });
    });

    it('does not drift over a thousand small charges and releases', async () => {
      const ledger = await stores.make();
      const a = acct('many');
      await Promise.all(Array.from({ length: 1000 }, () => ledger.reserve(a, 0.001, limits(null, null), 'GET x')));
      expect(await ledger.balance(a)).toEqual({ operation: 1, day: 1 });
      await Promise.all(Array.from({ length: 300 }, () => ledger.release(a, 0.001)));
      expect(await ledger.balance(a)).toEqual({ operation: 0.7, day: 0.7 });
    });

    it('never passes a limit under 50 concurrent reserves from two replicas', async () => {
      const a = await stores.make();
      const b = await stores.replica(a);
      const results = await Promise.allSettled(Array.from({ length: 50 }, (_, i) => (i % 2 ? a : b).reserve(acct('burst', 'tb'), 0.05, limits(1, null), 'GET IT-start')));
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(20);
      expect(results.filter((r) => r.status === 'rejected' && r.reason instanceof CostLimitError && r.reason.scope === 'operation')).toHaveLength(30);
      expect(await a.balance(acct('burst', 'tb'))).toEqual({ operation: 1, day: 1 });

      const day = await Promise.allSettled(Array.from({ length: 50 }, (_, i) => (i % 2 ? a : b).reserve(acct(`op${i}`, 'tday'), 0.3, limits(null, 3), 'GET IT-aml')));
      expect(day.filter((r) => r.status === 'fulfilled')).toHaveLength(10);
      expect((await b.balance(acct('x', 'tday'))).day).toBe(3);
    });

    it('lets operation keys expire after an hour and day keys after two days (Redis)', async () => {
      const ledger = await stores.make();
      await ledger.reserve(acct('ttl', 'tt'), 1, limits(null, null), 'x');
      const raw = stores.connection(ledger);
      if (stores.kind === 'sqlite') {
        // An hour without a charge: the operation is forgotten, its day is not.
        const start = now;
        now += 3_600_001;
        expect(await ledger.balance(acct('ttl', 'tt'))).toEqual({ operation: 0, day: periodOf('day', now) === periodOf('day', start) ? 1 : 0 });
        now = start;
        return;
      }
      if (!raw) return expect(stores.kind).toBe('memory');
      const op = await raw.pttl('ledger:op:ttl');
      expect(op).toBeGreaterThan(3_590_000);
      expect(op).toBeLessThanOrEqual(3_600_000);
      const day = await raw.pttl(`ledger:day:tt:${periodOf('day', now)}`);
      expect(day).toBeGreaterThan(2 * 86_400_000 - 10_000);
      expect(await raw.get('ledger:op:ttl')).toBe('1000000');
    });
  },
);

describe('cost ledger (memory): per-tenant days', () => {
  const acct = (operationId: string, tenant: string) => ({ operationId, tenant });
  const daysOf = (ledger: MemoryCostLedger): number => (ledger as unknown as { days: Map<string, unknown> }).days.size;
  const operationsOf = (ledger: MemoryCostLedger): number => (ledger as unknown as { operations: { size: number } }).operations.size;

  it('keeps an operation and a day only while euro are committed on them (calls given back leave nothing), and drops ended days', async () => {
    const ledger = new MemoryCostLedger({ now: clock });
    for (let i = 0; i < 1000; i++) {
      await ledger.reserve(acct(`op${i}`, `t${i}`), 0.04, limits(null, null), 'GET cap');
      await ledger.release(acct(`op${i}`, `t${i}`), 0.04);
    }
    await ledger.reserve(acct('over', 't-over'), 5, limits(null, 1), 'GET x').catch(() => undefined);
    expect(daysOf(ledger)).toBe(0);
    expect(operationsOf(ledger)).toBe(0);
    await ledger.reserve(acct('kept', 'payer'), 0.5, limits(null, null), 'GET x');
    expect(daysOf(ledger)).toBe(1);
    expect(operationsOf(ledger)).toBe(1);
    expect(await ledger.balance(acct('kept', 'payer'))).toEqual({ operation: 0.5, day: 0.5 });
    // Two days on, the payer's day (unsettled while it lasted) is over and swept by the next new day.
    now += 2 * 86_400_000;
    await ledger.reserve(acct('later', 'other'), 0.1, limits(null, null), 'GET x');
    expect(daysOf(ledger)).toBe(1);
  });
});

// ---------------------------------------------------------------------------------------------
// In-flight markers, directly

describeStores<InFlightMarkers>('in-flight markers', { memory: () => new MemoryInFlightMarkers(), redis: (redis) => new RedisInFlightMarkers(redis) }, (stores) => {
  it('gives the lead to one holder at a time, and to the next once released', async () => {
    const a = await stores.make();
    const b = await stores.replica(a);
    const [la, lb] = await Promise.all([a.acquire('k', 5_000), b.acquire('k', 5_000)]);
    expect([la, lb].filter(Boolean)).toHaveLength(1);
    expect(await a.acquire('other', 5_000)).not.toBeNull();
    await (la ?? lb)!.release();
    const next = await b.acquire('k', 5_000);
    expect(next).not.toBeNull();
    await next!.release();
  });

  it('wakes a waiter when the marker is released, and when its lease expires', async () => {
    const a = await stores.make();
    const b = await stores.replica(a);
    const lease = (await a.acquire('w', 5_000))!;
    const t0 = Date.now();
    const waiting = b.wait('w', 3_000);
    // Still waiting while the marker is held.
    expect(await Promise.race([waiting.then(() => 'woken'), nextTurn().then(() => 'waiting')])).toBe('waiting');
    await lease.release();
    await waiting;
    // Woken by the release, long before its 3 s timeout (wide bounds: a loaded machine is slow, not 3 s slow).
    expect(Date.now() - t0).toBeLessThan(1_500);

    await a.acquire('x', 150);
    const t1 = Date.now();
    await b.wait('x', 3_000);
    expect(Date.now() - t1).toBeLessThan(1_500);
    expect(await b.acquire('x', 1_000)).not.toBeNull();
  });

  it('returns from a wait at its timeout while the marker is held; a renewed lease is kept', async () => {
    const a = await stores.make();
    const b = await stores.replica(a);
    // Renewed twice, it outlives its 1 s lease (the pauses add up to more), with 400 ms to spare each time.
    const lease = (await a.acquire('h', 1_000))!;
    const t0 = Date.now();
    await b.wait('h', 100);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(90);
    expect(await lease.extend()).toBe(true);
    await elapse(600);
    expect(await lease.extend()).toBe(true);
    await elapse(600);
    expect(await b.acquire('h', 1_000)).toBeNull();
    await lease.release();
    expect(await lease.extend()).toBe(false);
  });

  it('does not let an expired lease release the next holder', async () => {
    const a = await stores.make();
    const old = (await a.acquire('e', 50))!;
    // The next holder takes the key once the old lease has expired.
    const current = await waitFor(() => a.acquire('e', 5_000), 'the expired lease to free the key', { deadline: 5_000 });
    expect(current).not.toBeNull();
    await old.release();
    expect(await a.acquire('e', 5_000)).toBeNull();
    await current.release();
  });
});

// ---------------------------------------------------------------------------------------------
// Pending slow datasets, directly

describeStores<PendingStore>(
  'pending slow datasets',
  { memory: () => new MemoryPendingStore(100), redis: (redis) => new RedisPendingStore(redis), sqlite: (db) => new SqlitePendingStore(db) },
  (stores) => {
    it('remembers an id for its TTL, per key, until deleted', async () => {
      const a = await stores.make();
      const b = await stores.replica(a);
      await a.set('t|company|envelope|/IT-aml/1', 'r1', 5_000);
      expect(await b.get('t|company|envelope|/IT-aml/1')).toEqual({ id: 'r1' });
      expect(await b.get('t2|company|envelope|/IT-aml/1')).toBeUndefined();
      await b.set('t|company|envelope|/IT-aml/1', 'r2', 5_000);
      expect(await a.get('t|company|envelope|/IT-aml/1')).toEqual({ id: 'r2' });
      await a.delete('t|company|envelope|/IT-aml/1');
      expect(await b.get('t|company|envelope|/IT-aml/1')).toBeUndefined();
      await a.set('short', 'r3', 500);
      expect(await a.get('short')).toEqual({ id: 'r3' });
      await waitFor(async () => (await a.get('short')) === undefined, "the 500 ms entry's expiry", { deadline: 5_000 });
      expect(await a.get('short')).toBeUndefined();
    });

    it('deletes a mark only if it still holds the id given (a newer mark stays)', async () => {
      const a = await stores.make();
      const b = await stores.replica(a);
      await a.set('k', '?sent c1', 5_000);
      await b.set('k', '?sent c2', 5_000);
      expect(await a.deleteIf('k', '?sent c1')).toBe(false);
      expect(await b.get('k')).toEqual({ id: '?sent c2' });
      expect(await a.deleteIf('k', '?sent c2')).toBe(true);
      expect(await b.get('k')).toBeUndefined();
      expect(await a.deleteIf('missing', 'x')).toBe(false);
    });
  },
);

// ---------------------------------------------------------------------------------------------
// Two upstream clients ("replicas") sharing the stores

interface Shared {
  cache: CacheStore;
  markers: InFlightMarkers;
  pending: PendingStore;
}

describeStores<Shared>(
  'upstream clients sharing stores',
  {
    memory: () => ({ cache: new MemoryCacheStore(100), markers: new MemoryInFlightMarkers(), pending: new MemoryPendingStore(100) }),
    redis: (redis) => ({ cache: new RedisCacheStore(redis), markers: new RedisInFlightMarkers(redis), pending: new RedisPendingStore(redis) }),
  },
  (stores) => {
    let stub: Stub | undefined;
    const clients: UpstreamClient[] = [];
    /** Waits on the shared in-flight markers: a replica waiting for another's answer. */
    let markerWaits = 0;
    const counted = (markers: InFlightMarkers): InFlightMarkers => ({
      acquire: (key, leaseMs) => markers.acquire(key, leaseMs),
      wait: (key, timeoutMs, signal) => {
        markerWaits++;
        return markers.wait(key, timeoutMs, signal);
      },
    });
    /** Holds a stub's answer until a replica waits on the leader's marker (the leader is in flight meanwhile). */
    const untilAReplicaWaits = () => waitFor(() => markerWaits > 0, 'a replica waiting on the in-flight marker', { deadline: 5_000 });
    afterEach(async () => {
      await Promise.all(clients.splice(0).map((c) => c.close()));
      await stub?.close();
      stub = undefined;
    });

    const ok = (data: unknown) => ({ data, success: true, message: '', error: null });
    const ctxFor = (token = 'tok-a') => ({ auth: { token, tenant: tenantOf(token) }, meter: new CostMeter() });
    const start: Endpoint = { area: 'company', method: 'GET', path: '/IT-start/{id}', ttl: 60 };
    const twoReplicas = async (url: string, extra: NodeJS.ProcessEnv = {}): Promise<[UpstreamClient, UpstreamClient, Shared]> => {
      const config = loadUpstreamConfig({ OPENAPI_ENV: 'sandbox', OPENAPI_COMPANY_URL: url, OPENAPI_RETRY_BASE_MS: '5', OPENAPI_POLL_MIN_MS: '10', ...extra });
      markerWaits = 0;
      const a = await stores.make();
      const b = await stores.replica(a);
      const pair: [UpstreamClient, UpstreamClient] = [
        new UpstreamClient(config, { ...a, markers: counted(a.markers) }),
        new UpstreamClient(config, { ...b, markers: counted(b.markers) }),
      ];
      clients.push(...pair);
      return [...pair, b];
    };

    it('buys an answer once when two replicas are asked for it at the same moment', async () => {
      stub = await startStub(async (_req, res) => {
        await untilAReplicaWaits();
        json(res, 200, ok([{ vatCode: '1' }]));
      });
      const [a, b] = await twoReplicas(stub.url);
      const ctxs = [ctxFor(), ctxFor(), ctxFor(), ctxFor()];
      const answers = await Promise.all(ctxs.map((ctx, i) => (i % 2 ? b : a).call(ctx, start, { params: { id: '1' } })));
      expect(answers).toEqual(Array(4).fill([{ vatCode: '1' }]));
      expect(stub.requests).toHaveLength(1);
      const sum = ctxs
        .map((c) => c.meter.summary())
        .reduce((s, m) => ({ up: s.up + m.upstreamCalls, dedup: s.dedup + m.dedupHits, euro: s.euro + m.euro }), { up: 0, dedup: 0, euro: 0 });
      expect(sum).toEqual({ up: 1, dedup: 3, euro: 0.05 });

      const later = ctxFor();
      await b.call(later, start, { params: { id: '1' } });
      expect(later.meter.summary()).toMatchObject({ upstreamCalls: 0, cacheHits: 1 });
      await a.call(ctxFor('tok-b'), start, { params: { id: '1' } });
      expect(stub.requests).toHaveLength(2);
    });

    it('shares a "not found" the same way: bought once, thrown on both replicas', async () => {
      stub = await startStub(async (_req, res) => {
        await untilAReplicaWaits();
        json(res, 404, { success: false, message: 'company not found', error: 302, data: null });
      });
      const [a, b] = await twoReplicas(stub.url);
      const ca = ctxFor();
      const cb = ctxFor();
      const results = await Promise.allSettled([a.call(ca, start, { params: { id: '9' } }), b.call(cb, start, { params: { id: '9' } })]);
      for (const r of results) expect(r.status === 'rejected' && r.reason instanceof UpstreamError && r.reason.graphqlCode === 'UPSTREAM_NOT_FOUND').toBe(true);
      expect(stub.requests).toHaveLength(1);
      expect(ca.meter.summary().dedupHits + cb.meter.summary().dedupHits).toBe(1);
      expect([...ca.meter.calls, ...cb.meter.calls].find((c) => c.source === 'dedup')?.status).toBe(404);
    });

    it('lets a waiting replica lead when the leader fails without an answer', async () => {
      let n = 0;
      stub = await startStub(async (_req, res) => {
        if (++n === 1) await untilAReplicaWaits();
        if (n === 1) json(res, 503, { success: false, message: 'busy', error: 1, data: null });
        else json(res, 200, ok([{ vatCode: '2' }]));
      });
      const [a, b] = await twoReplicas(stub.url, { OPENAPI_MAX_RETRIES: '0' });
      const first = a.call(ctxFor(), start, { params: { id: '2' } }).catch((e: unknown) => e);
      await waitFor(() => stub!.requests.length === 1, 'the leader in flight');
      const second = await b.call(ctxFor(), start, { params: { id: '2' } });
      expect(await first).toMatchObject({ graphqlCode: 'UPSTREAM_UNAVAILABLE' });
      expect(second).toEqual([{ vatCode: '2' }]);
      expect(stub.requests).toHaveLength(2);
    });

    it('takes over from a leader that died (its lease expires)', async () => {
      stub = await startStub((_req, res) => json(res, 200, ok([{ vatCode: '3' }])));
      const [a, , shared] = await twoReplicas(stub.url, { OPENAPI_TIMEOUT_MS: '2000' });
      // A replica that took the lead and vanished: its marker is never released.
      const dead = await shared.markers.acquire(`${tenantOf('tok-a')}|company|envelope|/IT-start/3`, 300);
      expect(dead).not.toBeNull();
      const t0 = Date.now();
      expect(await a.call(ctxFor(), start, { params: { id: '3' } })).toEqual([{ vatCode: '3' }]);
      expect(Date.now() - t0).toBeGreaterThanOrEqual(250);
      expect(stub.requests).toHaveLength(1);
    });

    it('resumes on one replica a slow dataset another replica paid for', async () => {
      let ready = false;
      stub = await startStub((req, res) => {
        if (req.path.startsWith('/IT-aml/')) json(res, 302, ok({ state: 'PENDING', id: 'r1' }), { 'retry-after': '0' });
        else json(res, 200, ready ? ok({ rae: 'x' }) : ok({ state: 'PENDING', id: 'r1' }));
      });
      const [a, b] = await twoReplicas(stub.url, { OPENAPI_SLOW_BUDGET_MS: '100' });
      const aml: Endpoint = { area: 'company', method: 'GET', path: '/IT-aml/{id}', slow: true, ttl: 60 };
      const first = ctxFor();
      await expect(a.call(first, aml, { params: { id: '1' } })).rejects.toMatchObject({ graphqlCode: 'UPSTREAM_PENDING' });
      expect(first.meter.summary().euro).toBe(0.9);
      ready = true;
      const second = ctxFor();
      expect(await b.call(second, aml, { params: { id: '1' } })).toEqual({ rae: 'x' });
      expect(second.meter.summary().euro).toBe(0);
      expect(stub.requests.filter((r) => r.path.startsWith('/IT-aml/'))).toHaveLength(1);
    });
  },
);

// ---------------------------------------------------------------------------------------------
// Request rates

const rule = (limit: number, windowMs: number, scope: 'tenant' | 'global' = 'tenant'): RateLimitRule => ({
  key: 'company',
  area: 'company',
  limit,
  windowMs,
  scope,
  source: 'test',
});
const call = (tenant = 't1') => ({ area: 'company' as const, method: 'GET', path: '/IT-start/1', tenant });

describeStores<RateLimitStore>('rate limiter', { memory: () => new MemoryRateLimitStore(), redis: (redis) => new RedisRateLimitStore(redis) }, (stores) => {
  it('spreads a burst above the rate instead of refusing it', async () => {
    // The slots the store booked, on its own clock (Redis's for the Redis store): exact.
    const store = await stores.make();
    const slots: number[] = [];
    const recording: RateLimitStore = {
      async book(...args) {
        const booking = await store.book(...args);
        if (booking.ok) slots.push(booking.at);
        return booking;
      },
    };
    const limiter = new RateLimiter(recording, [rule(4, 300)], 2_000);
    const t0 = Date.now();
    const went = await Promise.all(Array.from({ length: 10 }, () => limiter.take(call()).then(() => Date.now() - t0)));
    slots.sort((x, y) => x - y);
    expect(slots).toHaveLength(10);
    // Four at once, then never more than 4 in any 300 ms.
    expect(slots[3] - slots[0]).toBeLessThan(150);
    for (let i = 4; i < slots.length; i++) expect(slots[i] - slots[i - 4]).toBeGreaterThanOrEqual(300);
    expect(slots[9] - slots[0]).toBeLessThan(900);
    // Each call waited for its slot: a timer fires late on a busy machine, never early (1 ms of rounding).
    went.sort((x, y) => x - y);
    expect(went[4]).toBeGreaterThanOrEqual(slots[4] - slots[0] - 1);
    expect(went[8]).toBeGreaterThanOrEqual(slots[8] - slots[0] - 1);
    expect(went[8]).toBeGreaterThanOrEqual(580);
  });

  it('refuses with RATE_LIMITED and a retryAfter beyond the longest wait, booking nothing', async () => {
    const store = await stores.make();
    // The next slot is 2.95 s away: retryAfter 3 for as long as the second call comes within 950 ms.
    const limiter = new RateLimiter(store, [rule(1, 2_950)], 200);
    await limiter.take(call());
    const err = await limiter.take(call()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RateLimitedError);
    expect(err).toMatchObject({ graphqlCode: 'RATE_LIMITED', status: 429, retryAfter: 3, neverSent: true });
    const patient = new RateLimiter(store, [rule(1, 300)], 1_000);
    await patient.take(call('t9'));
    const t0 = Date.now();
    await patient.take(call('t9'));
    expect(Date.now() - t0).toBeGreaterThanOrEqual(250);
  });

  it('shares the budget between two limiters (replicas), per tenant unless global', async () => {
    const a = await stores.make();
    const b = await stores.replica(a);
    // Windows far longer than the test: none passes while it runs.
    const la = new RateLimiter(a, [rule(3, 10_000)], 0);
    const lb = new RateLimiter(b, [rule(3, 10_000)], 0);
    await Promise.all([la.take(call()), lb.take(call()), la.take(call())]);
    await expect(lb.take(call())).rejects.toBeInstanceOf(RateLimitedError);
    await expect(la.take(call())).rejects.toBeInstanceOf(RateLimitedError);
    await lb.take(call('another tenant'));

    const ga = new RateLimiter(a, [rule(2, 10_000, 'global')], 0);
    const gb = new RateLimiter(b, [rule(2, 10_000, 'global')], 0);
    await ga.take(call('x'));
    await gb.take(call('y'));
    await expect(ga.take(call('z'))).rejects.toMatchObject({ graphqlCode: 'RATE_LIMITED' });
  });

  it('holds an upstream client to the rate: queued within the wait, refused past it with nothing sent', async () => {
    const stub = await startStub((_req, res) => json(res, 200, { data: [{}], success: true, message: '', error: null }));
    const store = await stores.make();
    const config = loadUpstreamConfig({
      OPENAPI_ENV: 'sandbox',
      OPENAPI_COMPANY_URL: stub.url,
      OPENAPI_RATE_LIMITS: JSON.stringify({ company: { limit: 2, windowMs: 300 } }),
      OPENAPI_RATE_MAX_WAIT_MS: '1000',
    });
    const client = new UpstreamClient(config, { limiter: new RateLimiter(store, config.rateLimits, config.rateMaxWaitMs) });
    const ep: Endpoint = { area: 'company', method: 'GET', path: '/IT-start/{id}' };
    const ctx = () => ({ auth: { token: 'tok-r', tenant: tenantOf('tok-r') }, meter: new CostMeter() });
    try {
      const t0 = Date.now();
      await Promise.all(['1', '2', '3', '4', '5'].map((id) => client.call(ctx(), ep, { params: { id } })));
      expect(stub.requests).toHaveLength(5);
      expect(Date.now() - t0).toBeGreaterThanOrEqual(550);

      const hurried = new UpstreamClient({ ...config, rateMaxWaitMs: 50 }, { limiter: new RateLimiter(store, config.rateLimits, 50) });
      try {
        const results = await Promise.allSettled(['6', '7', '8'].map((id) => hurried.call(ctx(), ep, { params: { id } })));
        const refused = results.filter((r) => r.status === 'rejected');
        expect(refused.length).toBeGreaterThanOrEqual(1);
        for (const r of refused) expect(r.status === 'rejected' && r.reason).toMatchObject({ graphqlCode: 'RATE_LIMITED', status: 429 });
        expect(stub.requests).toHaveLength(5 + results.length - refused.length);
      } finally {
        await hurried.close();
      }
    } finally {
      await client.close();
      await stub.close();
    }
  });
});

describe('rate-limit table', () => {
  it("holds the contract's and the vendor's rates, each where it applies", () => {
    const prod = rateLimitsFor('production');
    expect(prod.find((r) => r.key === 'risk')).toMatchObject({ area: 'risk', limit: 10_000, windowMs: 60_000, scope: 'tenant' });
    expect(prod.find((r) => r.key === 'pecmassiva POST send')).toMatchObject({ limit: 1, windowMs: 1_000 });
    expect(rateLimitsFor('sandbox').map((r) => r.key)).toEqual(['pecmassiva POST send']);
    const send = rateLimitsFor('emulator')[0];
    expect(ruleMatches(send, 'pecmassiva', 'POST', '/send')).toBe(true);
    expect(ruleMatches(send, 'pecmassiva', 'GET', '/send/123')).toBe(false);
    expect(ruleMatches(prod[0], 'risk', 'GET', '/IT-creditscore-top/1')).toBe(true);
  });

  it('is changed per deployment by OPENAPI_RATE_LIMITS (replace, add, drop) and refuses a bad one', () => {
    const rules = rateLimitsFor(
      'production',
      JSON.stringify({ risk: { limit: 600, per: 'minute' }, 'pecmassiva post /send': null, 'company GET IT-start': { limit: 5, per: 'second', scope: 'global' } }),
    );
    expect(rules.map((r) => [r.key, r.limit, r.windowMs, r.scope])).toEqual([
      ['risk', 600, 60_000, 'tenant'],
      ['company GET IT-start', 5, 1_000, 'global'],
    ]);
    expect(() => rateLimitsFor('sandbox', '{"nowhere": {"limit": 1, "per": "second"}}')).toThrow(/area/);
    expect(() => rateLimitsFor('sandbox', '{"risk": {"limit": 0, "per": "second"}}')).toThrow(/limit/);
    expect(() => rateLimitsFor('sandbox', '{"risk": {"limit": 1}}')).toThrow(/per/);
    expect(() => rateLimitsFor('sandbox', '/no/such/file.json')).toThrow(/OPENAPI_RATE_LIMITS/);
    expect(loadUpstreamConfig({ OPENAPI_ENV: 'sandbox' }).rateMaxWaitMs).toBe(5_000);
  });
});

// ---------------------------------------------------------------------------------------------
// Building the stores

describe('upstreamStores', () => {
  const config = loadUpstreamConfig({ OPENAPI_ENV: 'sandbox' });

  it('builds memory stores without REDIS_URL', async () => {
    const stores = await upstreamStores(config, undefined, clock);
    expect(stores.kind).toBe('memory');
    expect(stores.ledger).toBeInstanceOf(MemoryCostLedger);
    await stores.close();
  });

  it('builds embedded stores on a database file: pending datasets and the ledger in it, the rest in memory', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'upstream-stores-'));
    try {
      const stores = await upstreamStores(config, undefined, clock, { sqliteFile: join(dir, 'layer.db') });
      expect(stores.kind).toBe('sqlite');
      expect(stores.ledger).toBeInstanceOf(SqliteCostLedger);
      expect(stores.pending).toBeInstanceOf(SqlitePendingStore);
      expect(stores.cache).toBeInstanceOf(MemoryCacheStore);
      await stores.ledger.reserve({ operationId: 'o', tenant: 't' }, 2, { operation: null, day: null }, 'x');
      await stores.close();
      // Another process on the same file finds what was spent.
      const again = await upstreamStores(config, undefined, clock, { sqliteFile: join(dir, 'layer.db') });
      expect((await again.ledger.balance({ operationId: 'o', tenant: 't' })).day).toBe(2);
      await again.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('builds Redis stores from REDIS_URL, and fails at once when Redis is unreachable', async () => {
    const prefix = `test:${Math.random().toString(36).slice(2)}:stores:`;
    const stores = await upstreamStores(config, TEST_REDIS_URL, clock, { prefix });
    try {
      expect(stores.kind).toBe('redis');
      expect(stores.ledger).toBeInstanceOf(RedisCostLedger);
      await stores.cache.set('k', 1, 5);
      expect(await stores.redis!.pttl('cache:k')).toBeGreaterThan(0);
      await stores.cache.clear();
    } finally {
      await stores.close();
    }
    expect(stores.redis!.status).toBe('end');
    await expect(upstreamStores(config, 'redis://127.0.0.1:1', clock)).rejects.toThrow(/REDIS_URL: Redis is unreachable/);
  });
});
