/**
 * Where bulk sendings live between rounds, restarts and replicas: the sending, what is left of its
 * queue, the receipt codes still read, and the caller's upstream token and mailbox credentials
 * sealed (AES-256-GCM under `LAYER_SECRET`, the kit's `TokenCipher`) — never in clear, never in an
 * event. A batch is claimed once (`claimBatch`, SET NX in Redis) before it is sent: whatever
 * restarts or runs twice, a batch is never sent twice. In the embedded database by default
 * (`SqliteBulkStore`, namespace `pecmassiva`, the same lives); in memory with `STORE=memory`; Redis with `REDIS_URL`
 * (keys under `<REDIS_PREFIX>pecmassiva:`, a week of life), with the kit's poll book (read budget,
 * leases: `poll:*`) beside it, and the Redis event bus on the kit's channels (`<REDIS_PREFIX>bus:`).
 */
import type { Redis } from 'ioredis';
import { LRUCache } from 'lru-cache';
import { entriesAtMost } from '../../platform/lru.ts';
import { MemoryEventBus, type EventBus } from '../../platform/bus.ts';
import { closeRedis, connectRedis, DEFAULT_REDIS_PREFIX } from '../../platform/redis.ts';
import { TokenCipher } from '../runtime/tracking/cipher.ts';
import { MemoryPollBook, type PollBook } from '../runtime/tracking/poller.ts';
import { RedisEventBus } from '../runtime/tracking/redis-bus.ts';
import { RedisPollBook } from '../runtime/tracking/redis-store.ts';
import { SqlitePollBook } from '../runtime/tracking/sqlite-store.ts';
import { durableStore, sharedDatabase, SqliteKv, type SqliteDatabase } from '../../platform/sqlite.ts';
import type { Sending, SendRequest } from './bulk.ts';

/** A sending with its queue, as stored (secrets sealed). */
export interface StoredSending {
  sending: Sending;
  /** The mailbox username (the queue it waits in). */
  username: string;
  /** Sealed upstream token, mailbox password and the message: kept only while the sending is not done. */
  sealedToken?: string;
  sealedPassword?: string;
  request?: SendRequest;
  /** Batches (recipient indexes) not yet claimed. */
  batches: number[][];
  codes: string[];
  /** Per code still read: not before `at` (epoch ms), after `misses` empty reads; kept so a takeover keeps the backoff. */
  waits?: Record<string, { at: number; misses: number }>;
  startedAt: number;
}

export interface BulkStore {
  save(s: StoredSending): Promise<void>;
  load(id: string): Promise<StoredSending | null>;
  /** Sendings not done yet (resumed on start). */
  unfinished(): Promise<StoredSending[]>;
  /** Binds an idempotency key of a tenant to a sending id; the id already bound when taken. */
  claimKey(tenant: string, key: string, id: string): Promise<string | null>;
  /** Replaces what a claimed key holds (the outcome of the order under it); keeps a day of life. */
  setKey(tenant: string, key: string, value: string): Promise<void>;
  /** Frees a key whose order certainly did nothing. */
  releaseKey(tenant: string, key: string): Promise<void>;
  /** True once per (sending, batch): the caller may send it. */
  claimBatch(id: string, first: number): Promise<boolean>;
  /** Gives a claim back (the batch was refused before it was sent, e.g. a 429). */
  releaseBatch?(id: string, first: number): Promise<void>;
  /** Marks a sending cancelled: whichever process holds its queue sends no further batch. */
  cancel(id: string): Promise<void>;
  isCancelled(id: string): Promise<boolean>;
  close(): Promise<void>;
}

const WEEK_S = 7 * 24 * 3600;
const DAY_S = 24 * 3600;

export interface MemoryBulkStoreOptions {
  /** Entries kept at most per kind (sendings, keys, batch claims); least recently used go first. @default 100000 */
  max?: number;
  /** Clock of the expiries (ms). @default Date.now */
  now?: () => number;
}

/**
 * One process's store, with the lives Redis gives (a week for sendings, batch claims and cancel
 * marks, a day for idempotency keys) and a bound on entries, so a long-running layer does not grow.
 */
export class MemoryBulkStore implements BulkStore {
  private readonly items: LRUCache<string, string>;
  private readonly keys: LRUCache<string, string>;
  private readonly batches: LRUCache<string, true>;
  private readonly cancelled: LRUCache<string, true>;

  constructor(opts: MemoryBulkStoreOptions = {}) {
    const max = opts.max ?? 100_000;
    const perf = { now: opts.now ?? Date.now };
    this.items = new LRUCache({ ...entriesAtMost(max), ttl: WEEK_S * 1000, ttlResolution: 0, perf });
    this.keys = new LRUCache({ ...entriesAtMost(max), ttl: DAY_S * 1000, ttlResolution: 0, perf });
    this.batches = new LRUCache({ ...entriesAtMost(max), ttl: WEEK_S * 1000, ttlResolution: 0, perf });
    this.cancelled = new LRUCache({ ...entriesAtMost(max), ttl: WEEK_S * 1000, ttlResolution: 0, perf });
  }

  async save(s: StoredSending): Promise<void> {
    this.items.set(s.sending.id, JSON.stringify(s));
  }
  async load(id: string): Promise<StoredSending | null> {
    const v = this.items.get(id);
    return v ? (JSON.parse(v) as StoredSending) : null;
  }
  async unfinished(): Promise<StoredSending[]> {
    return [...this.items.values()].map((v) => JSON.parse(v) as StoredSending).filter((s) => !s.sending.done);
  }
  async claimKey(tenant: string, key: string, id: string): Promise<string | null> {
    const k = `${tenant}\u0000${key}`;
    const held = this.keys.get(k);
    if (held) return held;
    this.keys.set(k, id);
    return null;
  }
  async setKey(tenant: string, key: string, value: string): Promise<void> {
    this.keys.set(`${tenant}\u0000${key}`, value);
  }
  async releaseKey(tenant: string, key: string): Promise<void> {
    this.keys.delete(`${tenant}\u0000${key}`);
  }
  async claimBatch(id: string, first: number): Promise<boolean> {
    const k = `${id}:${first}`;
    if (this.batches.has(k)) return false;
    this.batches.set(k, true);
    return true;
  }
  async releaseBatch(id: string, first: number): Promise<void> {
    this.batches.delete(`${id}:${first}`);
  }
  async cancel(id: string): Promise<void> {
    this.cancelled.set(id, true);
  }
  async isCancelled(id: string): Promise<boolean> {
    return this.cancelled.has(id);
  }
  async close(): Promise<void> {}
}

export class RedisBulkStore implements BulkStore {
  constructor(private readonly redis: Redis) {}

  async save(s: StoredSending): Promise<void> {
    const m = this.redis.multi().set(`s:${s.sending.id}`, JSON.stringify(s), 'EX', WEEK_S);
    if (s.sending.done) m.srem('unfinished', s.sending.id);
    else m.sadd('unfinished', s.sending.id);
    await m.exec();
  }
  async load(id: string): Promise<StoredSending | null> {
    const v = await this.redis.get(`s:${id}`);
    return v ? (JSON.parse(v) as StoredSending) : null;
  }
  async unfinished(): Promise<StoredSending[]> {
    const ids = await this.redis.smembers('unfinished');
    const out: StoredSending[] = [];
    for (const id of ids) {
      const s = await this.load(id);
      if (s && !s.sending.done) out.push(s);
      else await this.redis.srem('unfinished', id);
    }
    return out;
  }
  async claimKey(tenant: string, key: string, id: string): Promise<string | null> {
    const k = `k:${tenant}:${key}`;
    const ok = await this.redis.set(k, id, 'EX', DAY_S, 'NX');
    return ok === 'OK' ? null : await this.redis.get(k);
  }
  async setKey(tenant: string, key: string, value: string): Promise<void> {
    await this.redis.set(`k:${tenant}:${key}`, value, 'EX', DAY_S);
  }
  async releaseKey(tenant: string, key: string): Promise<void> {
    await this.redis.del(`k:${tenant}:${key}`);
  }
  async claimBatch(id: string, first: number): Promise<boolean> {
    return (await this.redis.set(`b:${id}:${first}`, '1', 'EX', WEEK_S, 'NX')) === 'OK';
  }
  async releaseBatch(id: string, first: number): Promise<void> {
    await this.redis.del(`b:${id}:${first}`);
  }
  async cancel(id: string): Promise<void> {
    await this.redis.set(`c:${id}`, '1', 'EX', WEEK_S);
  }
  async isCancelled(id: string): Promise<boolean> {
    return (await this.redis.exists(`c:${id}`)) === 1;
  }
  async close(): Promise<void> {}
}

/** Sendings in the embedded database (one transaction per change): `s:` sendings (tagged `u` while not done), `k:` keys, `b:` batch claims, `c:` cancel marks. */
export class SqliteBulkStore implements BulkStore {
  private readonly kv: SqliteKv;
  private readonly now: () => number;

  constructor(
    private readonly db: SqliteDatabase,
    opts: { now?: () => number; namespace?: string } = {},
  ) {
    this.now = opts.now ?? Date.now;
    this.kv = new SqliteKv(db, opts.namespace ?? 'pecmassiva', () => this.now());
  }

  private week = (): number => this.now() + WEEK_S * 1000;
  private day = (): number => this.now() + DAY_S * 1000;

  async save(s: StoredSending): Promise<void> {
    this.kv.set(`s:${s.sending.id}`, JSON.stringify(s), { exp: this.week(), tag: s.sending.done ? null : 'u' });
  }
  async load(id: string): Promise<StoredSending | null> {
    const v = this.kv.get(`s:${id}`);
    return v ? (JSON.parse(v) as StoredSending) : null;
  }
  async unfinished(): Promise<StoredSending[]> {
    return this.kv
      .tagged('u')
      .map((r) => JSON.parse(r.v) as StoredSending)
      .filter((s) => !s.sending.done);
  }
  async claimKey(tenant: string, key: string, id: string): Promise<string | null> {
    const k = `k:${tenant}\u0000${key}`;
    return this.db.tx(() => (this.kv.setNx(k, id, { exp: this.day() }) ? null : (this.kv.get(k) ?? null)));
  }
  async setKey(tenant: string, key: string, value: string): Promise<void> {
    this.kv.set(`k:${tenant}\u0000${key}`, value, { exp: this.day() });
  }
  async releaseKey(tenant: string, key: string): Promise<void> {
    this.kv.delete(`k:${tenant}\u0000${key}`);
  }
  async claimBatch(id: string, first: number): Promise<boolean> {
    return this.kv.setNx(`b:${id}:${first}`, '1', { exp: this.week() });
  }
  async releaseBatch(id: string, first: number): Promise<void> {
    this.kv.delete(`b:${id}:${first}`);
  }
  async cancel(id: string): Promise<void> {
    this.kv.set(`c:${id}`, '1', { exp: this.week() });
  }
  async isCancelled(id: string): Promise<boolean> {
    return this.kv.get(`c:${id}`) !== undefined;
  }
  async close(): Promise<void> {}
}

export interface BulkStores {
  store: BulkStore;
  bus: EventBus<Sending>;
  cipher: TokenCipher;
  /**
   * The kit's per-minute read budget (receipt and inbox reads) and its leases (one process runs a
   * sending's queue at a time): shared by every replica on Redis.
   */
  book: PollBook;
  close(): Promise<void>;
}

/** The embedded database's stores when `sqliteFile` is given (the bus stays the process's), Redis ones when `redisUrl` is set, else memory. */
export function bulkStores(opts: { redisUrl?: string; sqliteFile?: string; secret: string | Buffer; prefix?: string }): BulkStores {
  const cipher = new TokenCipher(opts.secret, 'openapi-supergraph pecmassiva secrets v1');
  if (opts.sqliteFile) {
    const db = sharedDatabase(opts.sqliteFile);
    return {
      store: durableStore(db, new SqliteBulkStore(db)),
      bus: new MemoryEventBus<Sending>(),
      cipher,
      book: durableStore(db, new SqlitePollBook(db, { namespace: 'pecmassiva:' })),
      close: async () => db.release(),
    };
  }
  const url = opts.redisUrl?.trim();
  if (!url) return { store: new MemoryBulkStore(), bus: new MemoryEventBus<Sending>(), cipher, book: new MemoryPollBook(), close: async () => undefined };
  const prefix = opts.prefix ?? DEFAULT_REDIS_PREFIX;
  const redis = connectRedis(url, { prefix: `${prefix}pecmassiva:`, name: 'pecmassiva' });
  // The bus under the layer's prefix, as the kit's (`<prefix>bus:pecmassiva:<tenant>:<id>`): every
  // gateway replica's response cache hears the kit's channels there and forgets the tenant's answers.
  const busRedis = connectRedis(url, { prefix, name: 'pecmassiva-bus' });
  const bus = new RedisEventBus<Sending>(busRedis, { ownConnections: false });
  return {
    store: new RedisBulkStore(redis),
    bus,
    cipher,
    book: new RedisPollBook(redis),
    async close() {
      await bus.close();
      await Promise.all([closeRedis(redis), closeRedis(busRedis)]);
    },
  };
}
