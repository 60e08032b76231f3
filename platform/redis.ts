/**
 * The one way to get a Redis connection (ioredis) for the layer's shared stores: from a URL, with a
 * key prefix, bounded retries and timeouts, connection errors logged once (not once per command),
 * and `quit` on close.
 *
 * - Keys: every command's keys get the connection's prefix (ioredis `keyPrefix`), Lua scripts' KEYS
 *   included. Two things are NOT prefixed by ioredis: the MATCH pattern of SCAN (and the keys SCAN
 *   returns carry the prefix) and pub/sub channel names. Use `unlinkMatching` and `channelOf`.
 * - Pub/sub: a connection in subscriber mode can run no other command; take a second connection
 *   with `duplicateRedis` (same URL, prefix and options) for subscribing.
 * - Failures: while Redis is unreachable, commands fail after `maxRetriesPerRequest` reconnection
 *   attempts (a second or so) instead of hanging; the connection keeps reconnecting in the
 *   background and says so once when it is back.
 */
import { createHash } from 'node:crypto';
import { Redis, type RedisOptions } from 'ioredis';
import { log as processLog } from './log.ts';
import { settingsOf, type SettingsSource } from './settings.ts';

/** Key prefix of the layer's keys unless one is given. */
export const DEFAULT_REDIS_PREFIX = 'openapi-supergraph:';

export interface RedisConnectOptions {
  /** Prefix of every key (`<prefix><key>`); end it with a separator. @default DEFAULT_REDIS_PREFIX */
  prefix?: string;
  /** Name in log lines and `CLIENT LIST` (e.g. `upstream`, `bus-sub`). @default 'layer' */
  name?: string;
  /** @default 5000 */
  connectTimeoutMs?: number;
  /** A command without an answer within this fails; 0 = no limit (blocking commands). @default 5000 */
  commandTimeoutMs?: number;
  /** Reconnection attempts a command waits for before failing. @default 2 */
  maxRetriesPerRequest?: number;
  /** Where connection problems are reported. @default the process logger, at `warn` */
  log?: (line: string) => void;
}

const settings = new WeakMap<Redis, { name: string; log: (line: string) => void; opts: RedisConnectOptions }>();

/** A connection to `url` (`redis://[user:password@]host:port[/db]`, `rediss://` for TLS). */
export function connectRedis(url: string, opts: RedisConnectOptions = {}): Redis {
  const options: RedisOptions = {
    keyPrefix: opts.prefix ?? DEFAULT_REDIS_PREFIX,
    connectionName: opts.name ?? 'layer',
    connectTimeout: opts.connectTimeoutMs ?? 5_000,
    maxRetriesPerRequest: opts.maxRetriesPerRequest ?? 2,
    // Reconnect forever, backing off to 2 s: a Redis restart must not need a layer restart.
    retryStrategy: (times: number) => Math.min(50 * 2 ** Math.min(times, 6), 2_000),
    enableOfflineQueue: true,
  };
  const commandTimeout = opts.commandTimeoutMs ?? 5_000;
  if (commandTimeout > 0) options.commandTimeout = commandTimeout;
  const redis = new Redis(url, options);
  watch(redis, opts);
  return redis;
}

/**
 * A second connection like `redis` (same server, prefix and options): for a pub/sub subscriber, or
 * a replica's own connection in tests.
 */
export function duplicateRedis(redis: Redis, name?: string): Redis {
  const s = settings.get(redis);
  const copy = redis.duplicate(name ? { connectionName: name } : {});
  watch(copy, { ...s?.opts, name: name ?? `${s?.name ?? 'layer'}-dup`, log: s?.log });
  return copy;
}

/** Logs the first error of an outage and the recovery, not every failed command or reconnection. */
function watch(redis: Redis, opts: RedisConnectOptions): void {
  const name = opts.name ?? 'layer';
  const log = opts.log ?? ((line: string) => processLog.warn({ area: 'redis', name: opts.name ?? 'layer' }, line));
  settings.set(redis, { name, log, opts });
  let failing = false;
  redis.on('error', (err: Error) => {
    if (failing) return;
    failing = true;
    log(`[redis:${name}] ${err.message}; reconnecting (further errors are not logged until it is back)`);
  });
  redis.on('ready', () => {
    if (!failing) return;
    failing = false;
    log(`[redis:${name}] connected again`);
  });
}

/**
 * Closes a connection: `QUIT` when connected (pending replies arrive first), else at once; resolves
 * once the connection has ended (or after a second, disconnecting it).
 */
export async function closeRedis(redis: Redis): Promise<void> {
  if (redis.status === 'end') return;
  if (redis.status !== 'ready') {
    // Not connected (connecting, or waiting to reconnect): nothing to flush; stop trying now.
    redis.disconnect();
    return;
  }
  const ended = new Promise<void>((resolve) => {
    const timer = setTimeout(() => {
      redis.disconnect();
      resolve();
    }, 1_000);
    timer.unref();
    redis.once('end', () => {
      clearTimeout(timer);
      resolve();
    });
  });
  try {
    await redis.quit();
  } catch {
    redis.disconnect();
  }
  await ended;
}

/** The connection's key prefix ('' when none). */
export const prefixOf = (redis: Redis): string => redis.options.keyPrefix ?? '';

/** A pub/sub channel name under the connection's prefix (ioredis does not prefix channels). */
export const channelOf = (redis: Redis, name: string): string => `${prefixOf(redis)}${name}`;

/** Escapes glob characters for SCAN MATCH. */
const globEscape = (s: string): string => s.replace(/[*?[\]\\]/g, (c) => `\\${c}`);

/**
 * Removes every key under the connection's prefix that starts with `under` (SCAN + UNLINK, never
 * FLUSHDB: other prefixes on the same Redis are left alone). Returns how many were removed.
 */
export async function unlinkMatching(redis: Redis, under = ''): Promise<number> {
  const prefix = prefixOf(redis);
  const pattern = `${globEscape(prefix + under)}*`;
  let cursor = '0';
  let removed = 0;
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 500);
    cursor = next;
    // SCAN returns full names; UNLINK adds the prefix again, so it is taken off first.
    const own = keys.filter((k) => k.startsWith(prefix)).map((k) => k.slice(prefix.length));
    if (own.length > 0) removed += await redis.unlink(...own);
  } while (cursor !== '0');
  return removed;
}

/** A Lua script run by its SHA (loaded again after a Redis restart); its KEYS get the prefix. */
export interface RedisScript {
  run(redis: Redis, keys: string[], args: Array<string | number>): Promise<unknown>;
}

export function defineScript(lua: string): RedisScript {
  const sha = createHash('sha1').update(lua).digest('hex');
  return {
    async run(redis, keys, args) {
      try {
        return await redis.evalsha(sha, keys.length, ...keys, ...args);
      } catch (err) {
        if (!(err instanceof Error) || !err.message.startsWith('NOSCRIPT')) throw err;
        return redis.eval(lua, keys.length, ...keys, ...args);
      }
    },
  };
}

/**
 * `REDIS_PREFIX`: the prefix of every key and channel of this deployment on Redis, so several
 * deployments (or test runs) can share one server; undefined when unset (`DEFAULT_REDIS_PREFIX`).
 */
export function redisPrefixFromEnv(env: SettingsSource): string | undefined {
  return settingsOf(env).REDIS_PREFIX ?? undefined;
}
