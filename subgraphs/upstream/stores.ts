/**
 * Builds the upstream side's shared state in one place: on Redis when `REDIS_URL` is set (every
 * replica then shares the cache, in-flight markers, pending slow datasets, rate bookings and the
 * cost ledger); else, with the embedded database (`sqliteFile`, the default of `npm start`), the
 * pending slow datasets and the cost ledger are kept in it (a restart neither buys a pending dataset
 * again nor forgets what was spent) and the rest in memory (answers, in-flight markers and rate
 * bookings: losing them costs a repeated read at most); or everything in memory (`STORE=memory`).
 *
 * ```ts
 * const stores = await upstreamStores(config, env.REDIS_URL, clock);
 * const upstream = new UpstreamClient(config, stores);       // cache, markers, pending, limiter
 * startSubgraphServer({ upstream, ledger: stores.ledger, … });
 * // on shutdown, after upstream.close():
 * await stores.close();
 * ```
 */
import type { Redis } from 'ioredis';
import { closeRedis, connectRedis, DEFAULT_REDIS_PREFIX } from '../../platform/redis.ts';
import { MemoryCacheStore, MemoryInFlightMarkers, MemoryPendingStore, type CacheStore, type InFlightMarkers, type PendingStore } from './cache.ts';
import type { UpstreamClientStores } from './client.ts';
import type { UpstreamConfig } from './config.ts';
import { MemoryCostLedger, type CostLedger } from './ledger.ts';
import { MemoryRateLimitStore, RateLimiter } from './rate-limits.ts';
import { RedisCacheStore, RedisInFlightMarkers, RedisPendingStore } from './redis-cache.ts';
import { RedisCostLedger } from './redis-ledger.ts';
import { RedisRateLimitStore } from './redis-rate-limit.ts';
import { MemoryGuardStore, RedisGuardStore } from './guard-store.ts';
import { SqliteCostLedger, SqlitePendingStore } from './sqlite-stores.ts';
import { MemorySettlementStore, type SettlementStore } from './settlement.ts';
import { RedisSettlementStore, SqliteSettlementStore } from './settlement-stores.ts';
import { durableStore, sharedDatabase } from '../../platform/sqlite.ts';

export interface UpstreamStores extends Required<UpstreamClientStores> {
  cache: CacheStore;
  markers: InFlightMarkers;
  pending: PendingStore;
  limiter: RateLimiter;
  /** The cost ledger every subgraph of the process charges (`startSubgraphServer({ ledger })`). */
  ledger: CostLedger;
  /** Paid calls whose outcome is unknown, until settled (`settlement.ts`). */
  settlements: SettlementStore;
  /** `redis`, `sqlite` or `memory`. */
  kind: 'redis' | 'sqlite' | 'memory';
  /** The Redis connection of these stores, null in memory. */
  redis: Redis | null;
  /** Closes the Redis connection (when these stores opened it); a no-op in memory. */
  close(): Promise<void>;
}

export interface UpstreamStoresOptions {
  /** Key prefix on Redis. @default DEFAULT_REDIS_PREFIX (`openapi-supergraph:`) */
  prefix?: string;
  /**
   * An open connection to use instead of opening one from the URL (it is not closed by `close`).
   * Its own key prefix applies.
   */
  redis?: Redis;
  /** The embedded database's file (without a Redis URL): pending datasets and the ledger are kept there. */
  sqliteFile?: string;
}

/**
 * The stores of the upstream client and the cost ledger. With `redisUrl` (`REDIS_URL`), one Redis
 * connection is opened and checked (PING): an unreachable Redis fails here, at start, with a
 * message saying so. `clock` drives cache freshness and the ledger's day (tests move it forward).
 */
export async function upstreamStores(config: UpstreamConfig, redisUrl?: string | null, clock: () => number = Date.now, opts: UpstreamStoresOptions = {}): Promise<UpstreamStores> {
  const url = redisUrl?.trim();
  if (!url && !opts.redis && opts.sqliteFile) {
    const db = sharedDatabase(opts.sqliteFile);
    return {
      kind: 'sqlite',
      redis: null,
      cache: new MemoryCacheStore(config.cacheMaxEntries, clock),
      markers: new MemoryInFlightMarkers(),
      pending: durableStore(db, new SqlitePendingStore(db, clock)),
      limiter: new RateLimiter(new MemoryRateLimitStore(), config.rateLimits, config.rateMaxWaitMs),
      ledger: durableStore(db, new SqliteCostLedger(db, { now: clock })),
      settlements: durableStore(db, new SqliteSettlementStore(db, clock)),
      clock,
      guard: () => new MemoryGuardStore({ now: clock }),
      close: async () => db.release(),
    };
  }
  if (!url && !opts.redis) {
    return {
      kind: 'memory',
      redis: null,
      cache: new MemoryCacheStore(config.cacheMaxEntries, clock),
      markers: new MemoryInFlightMarkers(),
      pending: new MemoryPendingStore(config.cacheMaxEntries),
      limiter: new RateLimiter(new MemoryRateLimitStore(), config.rateLimits, config.rateMaxWaitMs),
      ledger: new MemoryCostLedger({ now: clock }),
      settlements: new MemorySettlementStore(clock),
      clock,
      guard: () => new MemoryGuardStore({ now: clock }),
      close: async () => undefined,
    };
  }
  const owned = !opts.redis;
  const redis = opts.redis ?? connectRedis(url ?? '', { prefix: opts.prefix ?? DEFAULT_REDIS_PREFIX, name: 'upstream' });
  try {
    await redis.ping();
  } catch (err) {
    if (owned) await closeRedis(redis);
    throw new Error(`REDIS_URL: Redis is unreachable (${(err as Error).message})`, { cause: err });
  }
  return {
    kind: 'redis',
    redis,
    cache: new RedisCacheStore(redis, { now: clock }),
    markers: new RedisInFlightMarkers(redis),
    pending: new RedisPendingStore(redis),
    limiter: new RateLimiter(new RedisRateLimitStore(redis), config.rateLimits, config.rateMaxWaitMs),
    ledger: new RedisCostLedger(redis, { now: clock }),
    settlements: new RedisSettlementStore(redis),
    clock,
    guard: (account) => new RedisGuardStore(redis, account, { now: clock }),
    close: async () => {
      if (owned) await closeRedis(redis);
    },
  };
}
