/**
 * One spec for the async-work kit's stores, run against memory and Redis (`test/support/store-spec.ts`):
 * reservations (bound to a request, to a configuration, expiring), idempotency keys claimed once
 * across replicas, the replay guard across replicas, file grants, the event bus latest-first across
 * replicas, the poller's lease (two pollers, one read) and sealed tokens. Redis runs fail, never
 * skip, when Redis (`REDIS_URL`, default 127.0.0.1:6379) is unreachable.
 */
import type { Redis } from 'ioredis';
import { afterAll, expect, it } from 'vitest';
import { MemoryEventBus, type EventBus } from '../../../platform/bus.ts';
import { MemoryReplayGuard, Signer, type ReplayGuard } from '../../../platform/signing.ts';
import { connectRedis } from '../../../platform/redis.ts';
import { TokenCipher } from '../../../subgraphs/runtime/tracking/cipher.ts';
import { FileGrants, MemoryFileGrantStore, type FileGrantStore } from '../../../subgraphs/runtime/tracking/files.ts';
import type { StatePolicy } from '../../../subgraphs/runtime/tracking/policy.ts';
import { MemoryPollBook, Poller, type PollBook } from '../../../subgraphs/runtime/tracking/poller.ts';
import { RedisEventBus } from '../../../subgraphs/runtime/tracking/redis-bus.ts';
import { RedisFileGrantStore, RedisReplayGuard } from '../../../subgraphs/runtime/tracking/redis-kv.ts';
import { RedisPollBook, RedisTrackedStore } from '../../../subgraphs/runtime/tracking/redis-store.ts';
import { FINISHED_RESERVATION_GRACE_S, MemoryTrackedStore, type IdempotencyRecord, type TrackedStore } from '../../../subgraphs/runtime/tracking/store.ts';
import { SqliteFileGrantStore, SqlitePollBook, SqliteReplayGuard, SqliteTrackedStore } from '../../../subgraphs/runtime/tracking/sqlite-store.ts';
import type { SqliteDatabase } from '../../../platform/sqlite.ts';
import { describeStores } from '../../support/store-spec.ts';
import { within } from '../../support/wait.ts';

type Fam = 'REPORT' | 'MONITOR';
type Kind = 'Report' | 'Monitor';

const POLICY: StatePolicy<Kind> = {
  stateOf: (r) => (typeof r.state === 'string' ? r.state : null),
  timestampsOf: (r) => ({ createdAt: typeof r.created === 'number' ? r.created : null, updatedAt: typeof r.updated === 'number' ? r.updated : null }),
  isFinal: (s) => s === 'done',
  awaitsUpstream: (_k, s) => s === 'pending',
  isActiveMonitor: (k, s) => k === 'Monitor' && s === 'active',
};
const ep = (path: string) => ({ area: 'risk' as const, method: 'GET' as const, path });
const FAMILIES = {
  REPORT: { family: 'REPORT' as const, kind: 'Report' as const, create: ep('/r'), get: ep('/r/{id}'), list: ep('/r') },
  MONITOR: { family: 'MONITOR' as const, kind: 'Monitor' as const, create: ep('/m'), get: ep('/m/{id}'), list: ep('/m'), remove: ep('/m/{id}') },
};
const SECRET = 'tracking-stores-spec-secret-0123456789';
const cipher = new TokenCipher(SECRET);

interface Ev {
  id: string;
  seq: number;
}

interface World {
  store: TrackedStore<Fam>;
  replay: ReplayGuard;
  grants: FileGrantStore;
  bus: EventBus<Ev>;
  book: PollBook;
  /** The stores' clock (ms): tests move it instead of sleeping. */
  clock: { now: number };
  /** The raw value of a key (Redis) or the sealed token (memory, SQLite). */
  rawToken(tenant: string, id: string): Promise<string | undefined>;
  /** Every value the world's database holds, as text (SQLite only): to check nothing is kept in clear. */
  dump?: () => string;
}

const buses: Array<EventBus<Ev>> = [];
afterAll(async () => {
  for (const b of buses) await b.close();
});

function memoryWorld(): World {
  const clock = { now: Date.now() };
  const store = new MemoryTrackedStore<Fam>(POLICY, { cipher, now: () => clock.now });
  return {
    clock,
    store,
    replay: new MemoryReplayGuard(),
    grants: new MemoryFileGrantStore(),
    bus: new MemoryEventBus<Ev>(),
    book: new MemoryPollBook({ now: () => clock.now }),
    rawToken: async (t, id) => store.sealedTokenOf(t, id),
  };
}

function redisWorld(redis: Redis): World {
  const bus = new RedisEventBus<Ev>(redis, { ownConnections: false });
  buses.push(bus);
  const clock = { now: Date.now() };
  return {
    clock,
    store: new RedisTrackedStore<Fam>(redis, POLICY, { cipher, now: () => clock.now }),
    replay: new RedisReplayGuard(redis),
    grants: new RedisFileGrantStore(redis),
    bus,
    book: new RedisPollBook(redis),
    rawToken: async (t, id) => (await redis.get(`req:${t}:${id}`)) ?? undefined,
  };
}

/** One process's bus per database file: the replicas of a SQLite world are one process's connections (the embedded store serves one machine). */
const sqliteBuses = new Map<string, EventBus<Ev>>();

function sqliteWorld(db: SqliteDatabase): World {
  const clock = { now: Date.now() };
  const now = () => clock.now;
  const store = new SqliteTrackedStore<Fam>(db, POLICY, { cipher, namespace: 'risk:', now });
  let bus = sqliteBuses.get(db.file);
  if (!bus) {
    sqliteBuses.set(db.file, (bus = new MemoryEventBus<Ev>()));
    buses.push(bus);
  }
  return {
    clock,
    store,
    replay: new SqliteReplayGuard(db, { namespace: 'risk:', now }),
    grants: new SqliteFileGrantStore(db, { namespace: 'risk:', now }),
    bus,
    book: new SqlitePollBook(db, { namespace: 'risk:', now }),
    rawToken: async (t, id) => store.sealedTokenOf(t, id),
    dump: () =>
      db
        .all('SELECT v FROM kv')
        .map((r) => String(r.v))
        .join('\n'),
  };
}

const inSeconds = (s: number): number => Math.floor(Date.now() / 1000) + s;
const ID = 'a'.repeat(24);
const idem = (over: Partial<IdempotencyRecord<Fam>> = {}): IdempotencyRecord<Fam> => ({
  tenant: 'T',
  key: 'key-1',
  family: 'REPORT',
  fingerprint: 'f1',
  reservation: 'res-1',
  relay: null,
  state: 'pending',
  id: null,
  startedAt: 0,
  atRisk: 0,
  ...over,
});

describeStores<World>('tracking stores', { memory: memoryWorld, redis: redisWorld, sqlite: sqliteWorld }, (stores) => {
  it('binds a reservation to its request once, and keeps it only a grace period once the request is final', async () => {
    const world = await stores.make();
    const { store } = world;
    await store.reserve({ key: 'k1', tenant: 'T', family: 'REPORT', id: null, relay: null, expiresAt: inSeconds(30 * 24 * 3600), token: 'tok' });
    await store.bindKey('k1', ID);
    await store.bindKey('k1', 'b'.repeat(24));
    expect(await store.reservation('k1')).toMatchObject({ id: ID, tenant: 'T', token: 'tok' });
    await store.observe('T', 'REPORT', { id: ID, state: 'pending', updated: 1 });
    expect(await store.reservation('k1')).toBeDefined();
    await store.observe('T', 'REPORT', { id: ID, state: 'done', updated: 2 });
    // A retried delivery of the final state is still answered, for the grace period only.
    const kept = await store.reservation('k1');
    expect(kept).toMatchObject({ id: ID });
    if (stores.kind !== 'redis') expect(kept!.expiresAt).toBeLessThanOrEqual(inSeconds(FINISHED_RESERVATION_GRACE_S));
    else expect(await stores.connection(world)!.pttl('res:k1')).toBeLessThanOrEqual(FINISHED_RESERVATION_GRACE_S * 1000);
  });

  it('binds a reservation to a configuration: never to one request, found by configuration, outliving final requests', async () => {
    const { store } = await stores.make();
    await store.reserve({ key: 'cfg-key', tenant: 'T', family: 'REPORT', id: null, config: 'notifications', relay: null, expiresAt: inSeconds(60), token: 'tok' });
    await store.bindKey('cfg-key', ID);
    expect(await store.reservation('cfg-key')).toMatchObject({ id: null, config: 'notifications' });
    expect((await store.configReservation('T', 'notifications'))?.key).toBe('cfg-key');
    expect(await store.configReservation('U', 'notifications')).toBeUndefined();
    await store.observe('T', 'REPORT', { id: ID, state: 'done', updated: 2 });
    expect(await store.reservation('cfg-key')).toBeDefined();
    await store.dropReservation('cfg-key');
    expect(await store.configReservation('T', 'notifications')).toBeUndefined();
  });

  it('forgets an expired reservation', async () => {
    const { store, clock } = await stores.make();
    await store.reserve({ key: 'old', tenant: 'T', family: 'REPORT', id: null, relay: null, expiresAt: inSeconds(60), token: 'tok' });
    expect(await store.reservation('old')).toBeDefined();
    clock.now += 61_000;
    expect(await store.reservation('old')).toBeUndefined();
  });

  it('observes: a change bumps seq, an older record is ignored, a final state moves the request out of unfinished', async () => {
    const { store } = await stores.make();
    const first = await store.observe('T', 'REPORT', { id: ID, state: 'pending', updated: 10 });
    expect(first).toMatchObject({ changed: true, entry: { seq: 1, rawState: 'pending' } });
    expect((await store.unfinished()).map((e) => e.id)).toEqual([ID]);
    const older = await store.observe('T', 'REPORT', { id: ID, state: 'done', updated: 5 });
    expect(older).toMatchObject({ changed: false, entry: { seq: 1, rawState: 'pending' } });
    const same = await store.observe('T', 'REPORT', { id: ID, state: 'pending', updated: 10, extra: 'x' });
    expect(same).toMatchObject({ changed: false, entry: { seq: 1, record: { extra: 'x' } } });
    const done = await store.observe('T', 'REPORT', { id: ID, state: 'done', updated: 11 });
    expect(done).toMatchObject({ changed: true, entry: { seq: 2, rawState: 'done' } });
    expect(await store.unfinished()).toEqual([]);
    // A move away from a final state is ignored.
    expect(await store.observe('T', 'REPORT', { id: ID, state: 'pending', updated: 12 })).toMatchObject({ changed: false, entry: { rawState: 'done' } });
    expect(await store.unfinished()).toEqual([]);
    expect((await store.get('T', ID))?.seq).toBe(2);
  });

  it("lists a tenant's requests, oldest change first, optionally of one family", async () => {
    const { store, clock } = await stores.make();
    const B = 'b'.repeat(24);
    const C = 'c'.repeat(24);
    await store.observe('T', 'REPORT', { id: B, state: 'pending' });
    clock.now += 10;
    await store.observe('T', 'MONITOR', { id: C, state: 'active' });
    clock.now += 10;
    await store.observe('T', 'REPORT', { id: ID, state: 'pending' });
    await store.observe('U', 'REPORT', { id: 'd'.repeat(24), state: 'pending' });
    clock.now += 10;
    await store.observe('T', 'REPORT', { id: B, state: 'done' });
    expect((await store.list('T')).map((e) => e.id)).toEqual([C, ID, B]);
    expect((await store.list('T', 'REPORT')).map((e) => e.id)).toEqual([ID, B]);
    expect(await store.list('V')).toEqual([]);
    expect((await store.unfinished()).map((e) => e.id).sort()).toEqual([ID, C, 'd'.repeat(24)].sort());
  });

  it('relays a delivery once per nonce across two replicas', async () => {
    const a = await stores.make();
    const b = await stores.replica(a);
    expect(await a.store.markRelayed('T', ID, 'n1')).toBe(false); // unknown request
    await a.store.observe('T', 'REPORT', { id: ID, state: 'pending' });
    const first = await Promise.all([a.store.markRelayed('T', ID, 'n1'), b.store.markRelayed('T', ID.toUpperCase(), 'n1'), b.store.markRelayed('T', ID, 'n1')]);
    expect(first.filter(Boolean)).toHaveLength(1);
    expect(await b.store.markRelayed('T', ID, 'n2')).toBe(true);
    const conn = stores.connection(a);
    if (conn) expect(await conn.pttl(`relayed:T:${ID}`)).toBeGreaterThan(0);
  });

  it('loses no update when two replicas observe one request at once', async () => {
    const a = await stores.make();
    const b = await stores.replica(a);
    await a.store.observe('T', 'REPORT', { id: ID, state: 'pending', updated: 0 });
    for (let i = 1; i <= 20; i++) {
      // One replica sees a newer pending state, the other the final one.
      const [x, y] = await Promise.all([
        a.store.observe('T', 'REPORT', { id: ID, state: 'pending', updated: 2 * i - 1, [`a${i}`]: true }),
        b.store.observe('T', 'REPORT', { id: ID, state: i === 20 ? 'done' : 'pending', updated: 2 * i, [`b${i}`]: true }),
      ]);
      expect(x.changed || y.changed).toBe(true);
    }
    const entry = await a.store.get('T', ID);
    expect(entry?.rawState).toBe('done');
    expect(entry?.updatedAt).toBe(40);
    // Both replicas' records are merged: neither write was lost (the older one only when it came first).
    expect(entry?.record).toMatchObject({ b20: true });
    expect(await b.store.unfinished()).toEqual([]);
    const conn = stores.connection(a);
    if (conn) expect(await conn.sismember('unfinished', `T\u0000${ID}`)).toBe(0);
  });

  it('bounds its keys on Redis: entries, lists and reservation lists expire; expired entries leave unfinished and list', async () => {
    const w = await stores.make();
    const conn = stores.connection(w);
    if (!conn) return; // memory: bounded by maxEntries / maxReservations (LRU)
    await w.store.reserve({ key: 'kb', tenant: 'T', family: 'REPORT', id: ID, relay: null, expiresAt: inSeconds(30 * 24 * 3600), token: 'tok' });
    await w.store.observe('T', 'REPORT', { id: ID, state: 'pending' });
    const pttl = await conn.pttl(`req:T:${ID}`);
    // Unfinished: as long as its reservation (30 days) at least.
    expect(pttl).toBeGreaterThan(29 * 24 * 3600 * 1000);
    expect(await conn.pttl(`reskeys:T:${ID}`)).toBeGreaterThan(29 * 24 * 3600 * 1000);
    expect(await conn.pttl('list:T')).toBeGreaterThan(0);
    const B = 'b'.repeat(24);
    await w.store.observe('T', 'REPORT', { id: B, state: 'pending' });
    const unbound = await conn.pttl(`req:T:${B}`);
    expect(unbound).toBeGreaterThan(0);
    expect(unbound).toBeLessThanOrEqual(8 * 24 * 3600 * 1000);
    // B expires: the poller's set and the list forget it.
    await conn.del(`req:T:${B}`);
    expect((await w.store.unfinished()).map((e) => e.id)).toEqual([ID]);
    expect(await conn.sismember('unfinished', `T\u0000${B}`)).toBe(0);
    expect((await w.store.list('T')).map((e) => e.id)).toEqual([ID]);
    expect(await conn.zscore('list:T', B)).toBeNull();
    await w.store.observe('T', 'REPORT', { id: ID, state: 'done' });
    expect(await conn.pttl(`req:T:${ID}`)).toBeLessThanOrEqual(30 * 24 * 3600 * 1000);
    expect(await conn.pttl(`reskeys:T:${ID}`)).toBeLessThanOrEqual(FINISHED_RESERVATION_GRACE_S * 1000);
    expect(await conn.pttl(`relayed:T:${ID}`)).toBe(-2);
  });

  it('claims an idempotency key once across replicas, and a binding callback settles it', async () => {
    const a = await stores.make();
    const b = await stores.replica(a);
    const results = await Promise.all([
      a.store.claimIdempotencyKey(idem()),
      b.store.claimIdempotencyKey(idem({ fingerprint: 'f2' })),
      a.store.claimIdempotencyKey(idem({ fingerprint: 'f3' })),
    ]);
    expect(results.filter((r) => r === undefined)).toHaveLength(1);
    await a.store.reserve({ key: 'res-1', tenant: 'T', family: 'REPORT', id: null, relay: null, expiresAt: inSeconds(60), token: 'tok' });
    await b.store.bindKey('res-1', ID.toUpperCase());
    expect(await a.store.idempotencyRecord('T', 'key-1')).toMatchObject({ state: 'created', id: ID });
    await a.store.settleIdempotencyKey('T', 'key-1', { state: 'unknown', atRisk: 3 });
    expect((await b.store.idempotencyRecord('T', 'key-1'))?.state).toBe('created');
    await b.store.releaseIdempotencyKey('T', 'key-1');
    expect(await a.store.claimIdempotencyKey(idem())).toBeUndefined();
  });

  it('accepts a delivery once across replicas (replay guard)', async () => {
    const a = await stores.make();
    const b = await stores.replica(a);
    expect(await b.replay.seen('scope', 'n1')).toBe(false);
    expect(await a.replay.accept('scope', 'n1', inSeconds(60))).toBe(true);
    expect(await b.replay.seen('scope', 'n1')).toBe(true);
    expect(await b.replay.accept('scope', 'n1', inSeconds(60))).toBe(false);
    expect(await b.replay.accept('scope', 'n2', inSeconds(60))).toBe(true);
  });

  it('issues a file grant on one replica that another resolves, its token sealed', async () => {
    const a = await stores.make();
    const b = await stores.replica(a);
    const signer = new Signer(SECRET);
    const ga = new FileGrants({ signer, area: 'risk', store: a.grants, cipher });
    const gb = new FileGrants({ signer, area: 'risk', store: b.grants, cipher });
    const file = await ga.issue('https://layer.example', { tenant: 'T', token: 'upstream-token-123' }, ep('/r/{id}/download'), { id: ID }, 'r.pdf');
    expect(file.url).toMatch(/^https:\/\/layer\.example\/files\/risk\//);
    const token = decodeURIComponent(file.url.split('/files/risk/')[1]?.split('/')[0] ?? '');
    expect((await gb.resolve(token))?.auth.token).toBe('upstream-token-123');
    const again = await gb.issue('https://layer.example', { tenant: 'T', token: 'upstream-token-123' }, ep('/r/{id}/download'), { id: ID }, 'r.pdf');
    expect(again.url).toBe(file.url);
    const raw = await a.grants.get(token.split('.')[0] ?? '');
    expect(JSON.stringify(raw)).not.toContain('upstream-token-123');
  });

  it('gives a subscriber on one replica the latest event first, then live ones published on another', async () => {
    const a = await stores.make();
    const b = await stores.replica(a);
    await a.bus.publish('topic', { id: 'r', seq: 1 });
    await a.bus.publish('topic', { id: 'r', seq: 2 });
    const it = b.bus.subscribe('topic', { identity: (e) => e.id, version: (e) => e.seq });
    expect((await it.next()).value).toEqual({ id: 'r', seq: 2 });
    const next = it.next();
    await a.bus.publish('topic', { id: 'r', seq: 3 });
    expect((await next).value).toEqual({ id: 'r', seq: 3 });
    await it.return?.();
  });

  it('delivers an event published while the subscriber connection was reconnecting', async () => {
    const a = await stores.make();
    const b = await stores.replica(a);
    if (!(b.bus instanceof RedisEventBus)) return; // memory: no connection to lose
    const it = b.bus.subscribe('topic', { identity: (e) => e.id, version: (e) => e.seq });
    const first = it.next();
    await a.bus.publish('topic', { id: 'r', seq: 1 });
    expect((await first).value).toEqual({ id: 'r', seq: 1 });
    const sub = (b.bus as unknown as { sub: Redis }).sub;
    const closed = new Promise<void>((resolve) => sub.once('close', () => resolve()));
    const back = new Promise<void>((resolve) => sub.once('ready', () => resolve()));
    sub.disconnect(true);
    await closed;
    await a.bus.publish('topic', { id: 'r', seq: 2 });
    await back;
    const next = await within(it.next(), 'the message published while the subscriber reconnected');
    expect(next).toEqual({ value: { id: 'r', seq: 2 }, done: false });
    await it.return?.();
  });

  it('fails a subscription instead of hanging while Redis is unreachable', async () => {
    const w = await stores.make();
    if (!stores.connection(w)) return; // memory: nothing to reach
    const down = connectRedis('redis://127.0.0.1:1', { name: 'test-down', connectTimeoutMs: 100, log: () => undefined });
    const bus = new RedisEventBus<Ev>(down, { readyTimeoutMs: 300 });
    try {
      await expect(bus.subscribe('topic').next()).rejects.toThrow(/could not reach Redis|connection/);
    } finally {
      await bus.close();
    }
  });

  const latePoller = (w: World, reads: string[], name: string, now: () => number, book: PollBook = w.book) =>
    new Poller<Fam, Kind>(
      FAMILIES,
      POLICY,
      {
        unfinished: () => w.store.unfinished(),
        refresh: async (e) => {
          reads.push(`${name}:${e.id}`);
        },
        markChecked: (e, at) => w.store.markChecked(e.tenant, e.id, at),
      },
      { lateAfterMs: 1000, maxCallsPerMinute: 100, book, now },
    );

  it(
    stores.kind !== 'memory'
      ? 'reads a late request once across two pollers (lease)'
      : 'reads a late request once when two rounds overlap (one process: the round is shared, no lease needed)',
    async () => {
      const a = await stores.make();
      const b = await stores.replica(a);
      let now = Date.now();
      await a.store.observe('T', 'REPORT', { id: ID, state: 'pending', created: Math.floor(now / 1000) });
      now += 5000;
      const reads: string[] = [];
      const pa = latePoller(a, reads, 'a', () => now);
      // Memory: one process has one poller; two overlapping ticks must not read twice.
      const pb = stores.kind !== 'memory' ? latePoller(b, reads, 'b', () => now) : pa;
      await Promise.all([pa.tick(), pb.tick()]);
      expect(reads).toHaveLength(1);
    },
  );

  it('gives the lease back when the budget refuses the read, so another replica reads the entry', async () => {
    const a = await stores.make();
    const b = await stores.replica(a);
    let now = Date.now();
    await a.store.observe('T', 'REPORT', { id: ID, state: 'pending', created: Math.floor(now / 1000) });
    now += 5000;
    const reads: string[] = [];
    const broke: PollBook = {
      budgetLeft: (t, max) => a.book.budgetLeft(t, max),
      spend: async () => false,
      state: (k) => a.book.state(k),
      setState: (k, st, ttl) => a.book.setState(k, st, ttl),
      clearState: (k) => a.book.clearState(k),
      retain: (live) => a.book.retain(live),
      lease: (k, ms) => a.book.lease(k, ms),
      release: (k) => a.book.release(k),
    };
    await latePoller(a, reads, 'a', () => now, broke).tick();
    expect(reads).toEqual([]);
    await latePoller(b, reads, 'b', () => now).tick();
    expect(reads).toEqual([`b:${ID}`]);
  });

  it('forgets a poll state after its ttl ("gave up" does not last forever)', async () => {
    const w = await stores.make();
    const st = { seq: 1, failures: 1, nextAt: null, gaveUp: 'upstream answered 404' };
    await w.book.setState('k', st, 5000);
    expect(await w.book.state('k')).toEqual(st);
    const conn = stores.connection(w);
    if (conn) {
      const pttl = await conn.pttl('poll:state:k');
      expect(pttl).toBeGreaterThan(0);
      expect(pttl).toBeLessThanOrEqual(5000);
    } else {
      w.clock.now += 5001;
      expect(await w.book.state('k')).toBeUndefined();
    }
  });

  it('settles an idempotency key by the one rule, keeping its expiry', async () => {
    const { store, clock } = await stores.make();
    expect(await store.claimIdempotencyKey(idem({ reservation: null }))).toBeUndefined();
    clock.now += 3600_000;
    await store.settleIdempotencyKey('T', 'key-1', { state: 'unknown', atRisk: 2 });
    expect(await store.idempotencyRecord('T', 'key-1')).toMatchObject({ state: 'unknown', atRisk: 2 });
    await store.settleIdempotencyKey('T', 'key-1', { state: 'created', id: ID.toUpperCase() });
    await store.settleIdempotencyKey('T', 'key-1', { state: 'unknown', atRisk: 5 });
    expect(await store.idempotencyRecord('T', 'key-1')).toMatchObject({ state: 'created', id: ID, atRisk: 2 });
  });

  it("keeps the caller's callback header values sealed, opening them for relays", async () => {
    const w = await stores.make();
    const relay = { url: 'https://hook.example/cb', method: 'JSON' as const, field: 'data', headers: { Authorization: 'Bearer hook-secret-42' }, retry: 1 };
    await w.store.reserve({ key: 'k-relay', tenant: 'T', family: 'REPORT', id: ID, relay, expiresAt: inSeconds(60), token: 'tok' });
    await w.store.observe('T', 'REPORT', { id: ID, state: 'pending' }, { relay, token: 'tok' });
    expect(await w.store.claimIdempotencyKey(idem({ relay }))).toBeUndefined();
    expect((await w.store.reservation('k-relay'))?.relay).toEqual(relay);
    expect((await w.store.get('T', ID))?.relay).toEqual(relay);
    expect((await w.store.list('T'))[0]?.relay).toEqual(relay);
    expect((await w.store.unfinished())[0]?.relay).toEqual(relay);
    expect((await w.store.idempotencyRecord('T', 'key-1'))?.relay).toEqual(relay);
    // A later observation without a relay keeps the one held (still sealed, still opening).
    expect((await w.store.observe('T', 'REPORT', { id: ID, state: 'done' })).entry.relay).toEqual(relay);
    const conn = stores.connection(w);
    if (conn) {
      const raws = await Promise.all(['res:k-relay', `req:T:${ID}`, 'idem:T:key-1'].map((k) => conn.get(k)));
      for (const raw of raws) {
        expect(raw).toContain('Authorization');
        expect(raw).not.toContain('hook-secret-42');
      }
    }
    if (w.dump) {
      expect(w.dump()).toContain('Authorization');
      expect(w.dump()).not.toContain('hook-secret-42');
    }
  });

  it('keeps the upstream token sealed, never in clear', async () => {
    const w = await stores.make();
    await w.store.observe('T', 'REPORT', { id: ID, state: 'pending' }, { token: 'very-secret-upstream-token' });
    expect(await w.store.tokenOf('T', ID)).toBe('very-secret-upstream-token');
    const raw = await w.rawToken('T', ID);
    expect(raw).toBeDefined();
    expect(raw).not.toContain('very-secret-upstream-token');
    await w.store.reserve({ key: 'k-sealed', tenant: 'T', family: 'REPORT', id: null, relay: null, expiresAt: inSeconds(60), token: 'very-secret-upstream-token' });
    const conn = stores.connection(w);
    if (conn) expect(await conn.get('res:k-sealed')).not.toContain('very-secret-upstream-token');
    expect((await w.store.reservation('k-sealed'))?.token).toBe('very-secret-upstream-token');
    if (w.dump) expect(w.dump()).not.toContain('very-secret-upstream-token');
  });
});
