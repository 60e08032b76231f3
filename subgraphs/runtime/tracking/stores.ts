/**
 * The one place an area gets its tracked-work stores: in memory (the default: one process, lost on
 * restart) or on Redis (`REDIS_URL`: shared by every replica, kept across restarts).
 *
 * ```ts
 * const stores = trackingStores({ redisUrl: env.REDIS_URL, secret: layerSecret(env), area: 'risk', policy: RISK_POLICY });
 * createRiskSubgraph({ env, ...stores });  // stores.close() on shutdown
 * ```
 */
import type { Redis } from 'ioredis';
import { MemoryEventBus, type EventBus } from '../bus.ts';
import { closeRedis, connectRedis, DEFAULT_REDIS_PREFIX, redisPrefixFromEnv } from '../redis.ts';
import { layerSecret } from '../signing.ts';
import { MemoryReplayGuard, type ReplayGuard } from '../signing.ts';
import { TokenCipher } from './cipher.ts';
import { MemoryFileGrantStore, type FileGrantStore } from './files.ts';
import type { StatePolicy } from './policy.ts';
import { MemoryPollBook, type PollBook } from './poller.ts';
import { RedisEventBus } from './redis-bus.ts';
import { RedisFileGrantStore, RedisReplayGuard } from './redis-kv.ts';
import { RedisPollBook, RedisTrackedStore } from './redis-store.ts';
import { MemoryTrackedStore, type TrackedRequest, type TrackedStore } from './store.ts';

export interface TrackingStoresOptions {
  /** `REDIS_URL`: Redis when set, memory when not. */
  redisUrl?: string | undefined;
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
  kind: 'memory' | 'redis';
  store: TrackedStore<F>;
  bus: EventBus<TrackedRequest<F>>;
  replay: ReplayGuard;
  fileGrants: FileGrantStore;
  pollBook: PollBook;
  cipher: TokenCipher;
  /** Closes the connections (Redis); nothing to do in memory. */
  close(): Promise<void>;
}

/** An area's stores as the environment configures them: `REDIS_URL`, `REDIS_PREFIX`, `LAYER_SECRET`. */
export function trackingStoresFromEnv<F extends string = string>(env: NodeJS.ProcessEnv, area: string, policy: StatePolicy): TrackingStores<F> {
  return trackingStores<F>({ redisUrl: env.REDIS_URL, secret: layerSecret(env), area, policy, prefix: redisPrefixFromEnv(env) });
}

export function trackingStores<F extends string = string>(opts: TrackingStoresOptions): TrackingStores<F> {
  const cipher = new TokenCipher(opts.secret, `openapi-supergraph ${opts.area} tokens v1`);
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
