/**
 * The one place an area gets its tracked-work stores: in the embedded database (the default without
 * `REDIS_URL`: `<DATA_DIR>/layer.db`, kept across restarts), on Redis (`REDIS_URL`: shared by every
 * replica, kept across restarts) or in memory (`STORE=memory`: one process, lost on restart).
 * The event bus is the process's own in the first and last case (subscribers re-attaching after a
 * restart get the latest state from the store first).
 *
 * ```ts
 * const stores = trackingStores({ redisUrl: env.REDIS_URL, secret: layerSecret(env), area: 'risk', policy: RISK_POLICY });
 * createRiskSubgraph({ env, ...stores });  // stores.close() on shutdown
 * ```
 */
import type { Redis } from 'ioredis';
import { MemoryEventBus, type EventBus } from '../../../platform/bus.ts';
import { closeRedis, connectRedis, DEFAULT_REDIS_PREFIX, redisPrefixFromEnv } from '../../../platform/redis.ts';
import { layerSecret } from '../../../platform/signing.ts';
import { MemoryReplayGuard, type ReplayGuard } from '../../../platform/signing.ts';
import { TokenCipher } from './cipher.ts';
import { MemoryFileGrantStore, type FileGrantStore } from './files.ts';
import type { StatePolicy } from './policy.ts';
import { MemoryPollBook, type PollBook } from './poller.ts';
import { RedisEventBus } from './redis-bus.ts';
import { RedisFileGrantStore, RedisReplayGuard } from './redis-kv.ts';
import { RedisPollBook, RedisTrackedStore } from './redis-store.ts';
import { MemoryTrackedStore, type TrackedRequest, type TrackedStore } from './store.ts';
import { SqliteFileGrantStore, SqlitePollBook, SqliteReplayGuard, SqliteTrackedStore } from './sqlite-store.ts';
import { durableStore, sharedDatabase } from '../../../platform/sqlite.ts';
import { storeChoiceFromEnv } from '../../../platform/store-choice.ts';
import { settingsOf, type SettingsSource } from '../../../platform/settings.ts';

export interface TrackingStoresOptions {
  /** `REDIS_URL`: Redis when set (and `sqliteFile` is not). */
  redisUrl?: string | undefined;
  /** The embedded database's file: the stores live there when given. */
  sqliteFile?: string | undefined;
  /** The layer secret (`LAYER_SECRET`): the key of the tokens the stores keep is derived from it. */
  secret: string | Buffer;
  /** The area (`risk`): its keys live under `<prefix><area>:`. */
  area: string;
  /** The area's state policy. */
  policy: StatePolicy;
  /** Key prefix of the deployment. @default DEFAULT_REDIS_PREFIX */
  prefix?: string;
}

export interface TrackingStores<F extends string = string> {
  kind: 'memory' | 'sqlite' | 'redis';
  store: TrackedStore<F>;
  bus: EventBus<TrackedRequest<F>>;
  replay: ReplayGuard;
  fileGrants: FileGrantStore;
  pollBook: PollBook;
  cipher: TokenCipher;
  /** Closes the connections (Redis, the database); nothing to do in memory. */
  close(): Promise<void>;
}

/** An area's stores as the environment configures them: `STORE`, `DATA_DIR`, `REDIS_URL`, `REDIS_PREFIX`, `LAYER_SECRET`. */
export function trackingStoresFromEnv<F extends string = string>(source: SettingsSource, area: string, policy: StatePolicy): TrackingStores<F> {
  const env = settingsOf(source);
  const choice = storeChoiceFromEnv(env);
  return trackingStores<F>({
    redisUrl: choice.kind === 'redis' ? choice.url : undefined,
    sqliteFile: choice.kind === 'sqlite' ? choice.file : undefined,
    secret: layerSecret(env),
    area,
    policy,
    prefix: redisPrefixFromEnv(env),
  });
}

export function trackingStores<F extends string = string>(opts: TrackingStoresOptions): TrackingStores<F> {
  const cipher = new TokenCipher(opts.secret, `openapi-supergraph ${opts.area} tokens v1`);
  if (opts.sqliteFile) {
    const db = sharedDatabase(opts.sqliteFile);
    const namespace = `${opts.area}:`;
    return {
      kind: 'sqlite',
      store: durableStore(db, new SqliteTrackedStore<F>(db, opts.policy, { cipher, namespace })),
      bus: new MemoryEventBus<TrackedRequest<F>>(),
      replay: durableStore(db, new SqliteReplayGuard(db, { namespace })),
      fileGrants: durableStore(db, new SqliteFileGrantStore(db, { namespace })),
      pollBook: durableStore(db, new SqlitePollBook(db, { namespace })),
      cipher,
      close: async () => db.release(),
    };
  }
  const url = opts.redisUrl?.trim();
  if (!url) {
    return {
      kind: 'memory',
      store: new MemoryTrackedStore<F>(opts.policy, { cipher }),
      bus: new MemoryEventBus<TrackedRequest<F>>(),
      replay: new MemoryReplayGuard(),
      fileGrants: new MemoryFileGrantStore(),
      pollBook: new MemoryPollBook(),
      cipher,
      close: async () => undefined,
    };
  }
  const redis: Redis = connectRedis(url, { prefix: `${opts.prefix ?? DEFAULT_REDIS_PREFIX}${opts.area}:`, name: `${opts.area}-tracking` });
  const bus = new RedisEventBus<TrackedRequest<F>>(redis, { ownConnections: false });
  return {
    kind: 'redis',
    store: new RedisTrackedStore<F>(redis, opts.policy, { cipher }),
    bus,
    replay: new RedisReplayGuard(redis),
    fileGrants: new RedisFileGrantStore(redis),
    pollBook: new RedisPollBook(redis),
    cipher,
    async close() {
      await bus.close();
      await closeRedis(redis);
    },
  };
}
