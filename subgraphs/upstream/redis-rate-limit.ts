/**
 * Rate-limit bookings on Redis, shared by every replica: one sorted set per rule and tenant
 * (`rate:<rule key>|<tenant or *>` under the connection's prefix) holding the booked send times of
 * the last window and later. One Lua script, on the Redis clock (replicas' clocks may differ), does
 * what `MemoryRateLimitStore.book` does (`earliestSlot` in `rate-limits.ts`), atomically.
 */
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { defineScript } from '../../platform/redis.ts';
import type { RateBooking, RateLimitStore } from './rate-limits.ts';

/** KEYS: the bookings. ARGV: limit, windowMs, maxWaitMs, member. Returns {1, wait, at} or {0, wait needed}. */
const BOOK = defineScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local n = redis.call('ZCARD', KEYS[1])
local at = now
if n > 0 then
  at = math.max(at, tonumber(redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')[2]))
end
if n >= limit then
  at = math.max(at, tonumber(redis.call('ZRANGE', KEYS[1], -limit, -limit, 'WITHSCORES')[2]) + window)
end
local wait = at - now
if wait > tonumber(ARGV[3]) then return {0, wait} end
redis.call('ZADD', KEYS[1], at, ARGV[4])
redis.call('PEXPIRE', KEYS[1], wait + window + 1000)
return {1, wait, at}
`);

export class RedisRateLimitStore implements RateLimitStore {
  constructor(
    private readonly redis: Redis,
    private readonly ns = 'rate:',
  ) {}

  async book(key: string, limit: number, windowMs: number, maxWaitMs: number): Promise<RateBooking> {
    const reply = (await BOOK.run(this.redis, [this.ns + key], [limit, windowMs, Math.floor(maxWaitMs), randomUUID()])) as [1, number, number] | [0, number];
    return reply[0] === 1 ? { ok: true, waitMs: reply[1], at: reply[2] } : { ok: false, retryAfterMs: reply[1] };
  }
}
