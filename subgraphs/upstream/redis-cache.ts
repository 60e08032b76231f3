/**
 * The upstream client's per-key stores on Redis, shared by every replica: the answer cache, the
 * in-flight markers and the pending slow datasets. Keys live under the connection's prefix (see
 * `platform/redis.ts`), then `cache:`, `inflight:` or `pending:`, then the client's cache key (which
 * starts with the tenant).
 */
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { defineScript, unlinkMatching } from '../../platform/redis.ts';
import { sleep } from './sleep.ts';
import type { CacheEntry, CacheStore, InFlightLease, InFlightMarkers, PendingDataset, PendingStore } from './cache.ts';

/** What one cache key holds: the value and its freshness, on the clock of the writer. */
interface Stored {
  v: unknown;
  /** Fresh until (ms since epoch). */
  f: number;
  /** Kept (stale) until. */
  k: number;
}

export interface RedisCacheOptions {
  /** Namespace under the connection's prefix. @default 'cache:' */
  namespace?: string;
  /** Clock of freshness (tests move it forward); Redis expiry evicts on real time. @default Date.now */
  now?: () => number;
}

/**
 * The answer cache on Redis: JSON values with their `freshUntil`; Redis expiry (PX) = TTL + stale
 * window, so an entry leaves Redis when even a stale answer may no longer use it.
 */
export class RedisCacheStore implements CacheStore {
  private readonly ns: string;
  private readonly now: () => number;

  constructor(
    private readonly redis: Redis,
    opts: RedisCacheOptions = {},
  ) {
    this.ns = opts.namespace ?? 'cache:';
    this.now = opts.now ?? Date.now;
  }

  async get(key: string): Promise<CacheEntry | undefined> {
    const raw = await this.redis.get(this.ns + key);
    if (raw === null) return undefined;
    let e: Stored;
    try {
      e = JSON.parse(raw) as Stored;
    } catch {
      return undefined;
    }
    const now = this.now();
    if (typeof e.f !== 'number' || typeof e.k !== 'number' || e.k <= now) return undefined;
    return { value: e.v, fresh: e.f > now, staleForMs: Math.max(0, now - e.f) };
  }

  async set(key: string, value: unknown, ttlSeconds: number, staleSeconds = 0): Promise<void> {
    if (ttlSeconds <= 0) return;
    const keepMs = Math.ceil((ttlSeconds + Math.max(0, staleSeconds)) * 1000);
    const f = this.now() + ttlSeconds * 1000;
    const stored: Stored = { v: value, f, k: f + Math.max(0, staleSeconds) * 1000 };
    await this.redis.set(this.ns + key, JSON.stringify(stored), 'PX', keepMs);
  }

  async delete(key: string): Promise<void> {
    await this.redis.unlink(this.ns + key);
  }

  /** Drops this store's entries only (its prefix and namespace), never other keys of the Redis. */
  async clear(): Promise<void> {
    await unlinkMatching(this.redis, this.ns);
  }
}

/** Deletes the marker only if it is still this lease's (it may have expired and been taken over). */
const RELEASE = defineScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`);

/** Extends the marker only if it is still this lease's. */
const EXTEND = defineScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0
`);

export interface RedisMarkersOptions {
  /** @default 'inflight:' */
  namespace?: string;
  /** First interval of the followers' polling of a marker (it grows by half up to `maxPollMs`). @default 10 */
  minPollMs?: number;
  /** @default 100 */
  maxPollMs?: number;
}

/**
 * In-flight markers on Redis: a marker is `SET key <token> NX PX <lease>`; the leader deletes it
 * (compare-and-delete) once the answer is in the cache; followers poll it at a short, growing
 * interval (10 ms up to 100 ms), so they see the answer within one interval of its arrival.
 */
export class RedisInFlightMarkers implements InFlightMarkers {
  private readonly ns: string;
  private readonly minPollMs: number;
  private readonly maxPollMs: number;

  constructor(
    private readonly redis: Redis,
    opts: RedisMarkersOptions = {},
  ) {
    this.ns = opts.namespace ?? 'inflight:';
    this.minPollMs = opts.minPollMs ?? 10;
    this.maxPollMs = opts.maxPollMs ?? 100;
  }

  async acquire(key: string, leaseMs: number): Promise<InFlightLease | null> {
    const token = randomUUID();
    const k = this.ns + key;
    const px = Math.max(1, Math.ceil(leaseMs));
    const ok = await this.redis.set(k, token, 'PX', px, 'NX');
    if (ok !== 'OK') return null;
    return {
      extend: async () => (await EXTEND.run(this.redis, [k], [token, px])) === 1,
      release: async () => void (await RELEASE.run(this.redis, [k], [token])),
    };
  }

  async wait(key: string, timeoutMs: number, signal?: AbortSignal): Promise<void> {
    const deadline = Date.now() + Math.max(0, timeoutMs);
    let step = this.minPollMs;
    for (;;) {
      if (signal?.aborted) throw signal.reason as Error;
      if ((await this.redis.exists(this.ns + key)) === 0) return;
      const left = deadline - Date.now();
      if (left <= 0) return;
      await sleep(Math.min(step, left), signal);
      step = Math.min(this.maxPollMs, Math.ceil(step * 1.5));
    }
  }
}

/** Pending slow datasets on Redis: the request id under the cache key, expiring (PX) with its TTL. */
export class RedisPendingStore implements PendingStore {
  constructor(
    private readonly redis: Redis,
    private readonly ns = 'pending:',
  ) {}

  async get(key: string): Promise<PendingDataset | undefined> {
    const id = await this.redis.get(this.ns + key);
    return id === null ? undefined : { id };
  }

  async set(key: string, id: string, ttlMs: number): Promise<void> {
    if (ttlMs <= 0) return this.delete(key);
    await this.redis.set(this.ns + key, id, 'PX', Math.ceil(ttlMs));
  }

  async delete(key: string): Promise<void> {
    await this.redis.del(this.ns + key);
  }

  async deleteIf(key: string, id: string): Promise<boolean> {
    return (await this.redis.eval(DELETE_IF, 1, this.ns + key, id)) === 1;
  }
}

/** Deletes KEYS[1] if it holds ARGV[1]: 1 if deleted, else 0. */
const DELETE_IF = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0";
