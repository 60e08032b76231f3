/**
 * One spec, every implementation: `describeStores` runs the same tests once against the memory
 * implementation of a store, once against the Redis one and, when the store has one, once against
 * the embedded (SQLite) one.
 *
 * ```ts
 * describeStores('cost ledger', {
 *   memory: () => new MemoryCostLedger({ now }),
 *   redis: (redis) => new RedisCostLedger(redis, { now }),
 * }, (stores) => {
 *   it('…', async () => {
 *     const a = await stores.make();          // a fresh, empty store
 *     const b = await stores.replica(a);      // another "replica" sharing a's state
 *   });
 * });
 * ```
 *
 * Redis runs use `REDIS_URL` (default `redis://127.0.0.1:6379`) with a key prefix unique to the
 * run (`test:<random>:<name>:<n>:`), removed in `afterAll`; every world (`make()`) gets its own
 * prefix, so tests never see each other's keys. An unreachable Redis FAILS the Redis runs (it is
 * never skipped).
 *
 * SQLite runs: every world is a fresh database file in a temp directory (removed in `afterAll`); a
 * replica is a new store on a new connection to the same file (as another process would have).
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import { afterAll, describe } from 'vitest';
import { closeRedis, connectRedis, unlinkMatching } from '../../platform/redis.ts';
import { openDatabase, type SqliteDatabase } from '../../platform/sqlite.ts';

export const TEST_REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

export type StoreKind = 'memory' | 'sqlite' | 'redis';

export interface StoreImplementations<S> {
  /** A new, empty store. Called once per world: the replicas of a memory world share it. */
  memory: () => S | Promise<S>;
  /**
   * A store on `redis`, a connection whose key prefix is the world's. Called once per replica, each
   * replica with its own connection (as separate processes would have).
   */
  redis: (redis: Redis) => S | Promise<S>;
  /**
   * A store on `db`, a connection of its own to the world's database file. Called once per
   * replica. Stores without an embedded implementation (caches, markers) leave it out.
   */
  sqlite?: (db: SqliteDatabase) => S | Promise<S>;
}

export interface StoreKit<S> {
  kind: StoreKind;
  /** A fresh, empty world, and its first store. */
  make(): Promise<S>;
  /** Another replica of `store`'s world: memory, the same store; Redis and SQLite, a new store on its own connection, same keys or file. */
  replica(store: S): Promise<S>;
  /** A raw connection under `store`'s world prefix (Redis only; null in memory), e.g. to look at keys. */
  connection(store: S): Redis | null;
}

/**
 * Declares `describe('<name> (memory)')` and `describe('<name> (redis)')`, each running `body`
 * with a kit making stores of that implementation.
 */
export function describeStores<S>(name: string, impls: StoreImplementations<S>, body: (stores: StoreKit<S>) => void): void {
  describe(`${name} (memory)`, () => {
    body({
      kind: 'memory',
      make: async () => impls.memory(),
      replica: async (store) => store,
      connection: () => null,
    });
  });

  const sqlite = impls.sqlite;
  if (sqlite) {
    describe(`${name} (sqlite)`, () => {
      const dir = mkdtempSync(join(tmpdir(), 'store-spec-'));
      const open: SqliteDatabase[] = [];
      const fileOf = new WeakMap<object, string>();
      let worlds = 0;
      const make = async (file: string): Promise<S> => {
        const db = openDatabase(file);
        open.push(db);
        const store = await sqlite(db);
        if (typeof store === 'object' && store !== null) fileOf.set(store, file);
        return store;
      };
      afterAll(() => {
        for (const db of open) db.release();
        rmSync(dir, { recursive: true, force: true });
      });
      body({
        kind: 'sqlite',
        make: () => make(join(dir, `world-${++worlds}.db`)),
        async replica(store) {
          const file = typeof store === 'object' && store !== null ? fileOf.get(store) : undefined;
          if (!file) throw new Error('replica() needs a store made by this kit');
          return make(file);
        },
        connection: () => null,
      });
    });
  }

  describe(`${name} (redis)`, () => {
    const runPrefix = `test:${randomBytes(6).toString('hex')}:${name.replace(/[^\w-]+/g, '-')}:`;
    const connections: Redis[] = [];
    const worldOf = new WeakMap<object, string>();
    const redisOf = new WeakMap<object, Redis>();
    let worlds = 0;

    const open = async (prefix: string): Promise<Redis> => {
      const redis = connectRedis(TEST_REDIS_URL, { prefix, name: 'test', log: () => undefined });
      connections.push(redis);
      try {
        await redis.ping();
      } catch (err) {
        throw new Error(`Redis at ${TEST_REDIS_URL} is unreachable: the Redis runs of the store spec need it (${(err as Error).message})`, { cause: err });
      }
      return redis;
    };
    const remember = (store: S, prefix: string, redis: Redis): S => {
      if (typeof store === 'object' && store !== null) {
        worldOf.set(store, prefix);
        redisOf.set(store, redis);
      }
      return store;
    };

    afterAll(async () => {
      const cleaner = connectRedis(TEST_REDIS_URL, { prefix: runPrefix, name: 'test-clean', log: () => undefined });
      try {
        await unlinkMatching(cleaner);
      } finally {
        await closeRedis(cleaner);
        await Promise.all(connections.map((c) => closeRedis(c)));
      }
    });

    body({
      kind: 'redis',
      async make() {
        const prefix = `${runPrefix}${++worlds}:`;
        const redis = await open(prefix);
        return remember(await impls.redis(redis), prefix, redis);
      },
      async replica(store) {
        const prefix = typeof store === 'object' && store !== null ? worldOf.get(store) : undefined;
        if (!prefix) throw new Error('replica() needs a store made by this kit');
        const redis = await open(prefix);
        return remember(await impls.redis(redis), prefix, redis);
      },
      connection(store) {
        return typeof store === 'object' && store !== null ? (redisOf.get(store) ?? null) : null;
      },
    });
  });
}
