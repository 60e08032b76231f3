/**
 * What the precheck guard (`account-guard.ts`) knows of the account, shared by every replica with
 * `REDIS_URL`: the scopes of each token read (by the token's hash, never the token), the latest
 * wallet reading with the calls sent since taken off it, and the active subscriptions with the
 * requests each replica took from them since they were read. In memory (one process) or on Redis;
 * one spec for both (`test/account/unit/guard-store.test.ts`).
 *
 * Redis keys (under the connection's prefix and `guard:<account>:`):
 * - `scopes:<sha256(token)>` JSON `{scopes, until}` (PX to its expiry);
 * - `wallet` hash `{c: credit in micro-euro, u: until}` (PX), spent with HINCRBY only while it exists;
 * - `subs` JSON `{list, until}` (PX); `use:<until>:<id>` the requests taken from one subscription
 *   since that reading (INCR under its `left`, PX with the list).
 */
import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import { LRUCache } from 'lru-cache';
import { entriesAtMost } from '../../platform/lru.ts';

/** An active subscription as the guard prices by it. */
export interface ActiveSubscription {
  id: string;
  scope: string;
  /** Requests available when the list was read. */
  left: number;
  pricePerRequest: number;
}

export interface GuardStore {
  /** A token's scopes (null: the account does not own it), while trusted; undefined when unknown. */
  scopes(token: string): Promise<string[] | null | undefined>;
  setScopes(token: string, scopes: string[] | null, ttlMs: number): Promise<void>;
  forgetScopes(token: string): Promise<void>;
  /** The wallet's credit as last read, less what was spent since, while trusted; undefined when unknown. */
  credit(): Promise<number | undefined>;
  setCredit(credit: number, ttlMs: number): Promise<void>;
  /** Takes `price` off the reading (nothing when there is none); a negative `price` gives it back. */
  spend(price: number): Promise<void>;
  /** The active subscriptions as last read (with when they were read: `until`), while trusted. */
  subscriptions(): Promise<{ list: ActiveSubscription[]; until: number } | undefined>;
  setSubscriptions(list: ActiveSubscription[], ttlMs: number): Promise<number>;
  /** Takes one request of a subscription of the reading `until`; false when its `left` is used up. */
  useSubscription(until: number, sub: ActiveSubscription): Promise<boolean>;
  /** Gives back a request `useSubscription` took (the call was not sent, or not charged). */
  returnSubscription(until: number, sub: ActiveSubscription): Promise<void>;
}

const MICRO = 1e6;

export interface GuardStoreOptions {
  /** @default Date.now */
  now?: () => number;
}

/** One process's guard knowledge. */
export class MemoryGuardStore implements GuardStore {
  private readonly tokens: LRUCache<string, { scopes: string[] | null; until: number }>;
  private wallet: { credit: number; until: number } | null = null;
  private subs: { list: ActiveSubscription[]; until: number } | null = null;
  private readonly used = new Map<string, number>();
  private readonly now: () => number;

  constructor(opts: GuardStoreOptions & { maxTokens?: number } = {}) {
    this.now = opts.now ?? Date.now;
    this.tokens = new LRUCache({ ...entriesAtMost(opts.maxTokens ?? 10_000) });
  }

  async scopes(token: string): Promise<string[] | null | undefined> {
    const hit = this.tokens.get(token);
    return hit && hit.until > this.now() ? hit.scopes : undefined;
  }

  async setScopes(token: string, scopes: string[] | null, ttlMs: number): Promise<void> {
    this.tokens.set(token, { scopes, until: this.now() + ttlMs });
  }

  async forgetScopes(token: string): Promise<void> {
    this.tokens.delete(token);
  }

  async credit(): Promise<number | undefined> {
    return this.wallet && this.wallet.until > this.now() ? this.wallet.credit : undefined;
  }

  async setCredit(credit: number, ttlMs: number): Promise<void> {
    this.wallet = { credit, until: this.now() + ttlMs };
  }

  async spend(price: number): Promise<void> {
    if (this.wallet) this.wallet.credit = Math.round((this.wallet.credit - price) * MICRO) / MICRO;
  }

  async subscriptions(): Promise<{ list: ActiveSubscription[]; until: number } | undefined> {
    return this.subs && this.subs.until > this.now() ? this.subs : undefined;
  }

  async setSubscriptions(list: ActiveSubscription[], ttlMs: number): Promise<number> {
    this.used.clear();
    this.subs = { list, until: this.now() + ttlMs };
    return this.subs.until;
  }

  async useSubscription(until: number, sub: ActiveSubscription): Promise<boolean> {
    const key = `${until}:${sub.id}`;
    const used = this.used.get(key) ?? 0;
    if (used >= sub.left) return false;
    this.used.set(key, used + 1);
    return true;
  }

  async returnSubscription(until: number, sub: ActiveSubscription): Promise<void> {
    const key = `${until}:${sub.id}`;
    const used = this.used.get(key) ?? 0;
    if (used > 0) this.used.set(key, used - 1);
  }
}

const SPEND = `if redis.call('exists', KEYS[1]) == 1 then return redis.call('hincrby', KEYS[1], 'c', ARGV[1]) end return false`;
const USE = `local used = redis.call('incr', KEYS[1])
if used == 1 then redis.call('pexpire', KEYS[1], ARGV[2]) end
if used > tonumber(ARGV[1]) then redis.call('decr', KEYS[1]) return 0 end
return 1`;
const RETURN = `if tonumber(redis.call('get', KEYS[1]) or '0') > 0 then return redis.call('decr', KEYS[1]) end return 0`;

/** The guard's knowledge on Redis: every replica reads and spends the same. */
export class RedisGuardStore implements GuardStore {
  private readonly now: () => number;
  private readonly ns: string;

  /** `account`: the account's tenant (two accounts sharing one Redis keep apart). */
  constructor(
    private readonly redis: Redis,
    account: string,
    opts: GuardStoreOptions = {},
  ) {
    this.now = opts.now ?? Date.now;
    this.ns = `guard:${account}:`;
  }

  private tokenKey(token: string): string {
    return `${this.ns}scopes:${createHash('sha256').update(token).digest('base64url')}`;
  }

  async scopes(token: string): Promise<string[] | null | undefined> {
    const raw = await this.redis.get(this.tokenKey(token));
    if (!raw) return undefined;
    const v = JSON.parse(raw) as { scopes: string[] | null; until: number };
    return v.until > this.now() ? v.scopes : undefined;
  }

  async setScopes(token: string, scopes: string[] | null, ttlMs: number): Promise<void> {
    await this.redis.set(this.tokenKey(token), JSON.stringify({ scopes, until: this.now() + ttlMs }), 'PX', Math.max(1, Math.ceil(ttlMs)));
  }

  async forgetScopes(token: string): Promise<void> {
    await this.redis.del(this.tokenKey(token));
  }

  async credit(): Promise<number | undefined> {
    const [c, u] = await this.redis.hmget(`${this.ns}wallet`, 'c', 'u');
    if (c === null || u === null || Number(u) <= this.now()) return undefined;
    return Number(c) / MICRO;
  }

  async setCredit(credit: number, ttlMs: number): Promise<void> {
    const key = `${this.ns}wallet`;
    await this.redis
      .multi()
      .del(key)
      .hset(key, 'c', String(Math.round(credit * MICRO)), 'u', String(this.now() + ttlMs))
      .pexpire(key, Math.max(1, Math.ceil(ttlMs)))
      .exec();
  }

  async spend(price: number): Promise<void> {
    if (price !== 0) await this.redis.eval(SPEND, 1, `${this.ns}wallet`, String(-Math.round(price * MICRO)));
  }

  async subscriptions(): Promise<{ list: ActiveSubscription[]; until: number } | undefined> {
    const raw = await this.redis.get(`${this.ns}subs`);
    if (!raw) return undefined;
    const v = JSON.parse(raw) as { list: ActiveSubscription[]; until: number };
    return v.until > this.now() ? v : undefined;
  }

  async setSubscriptions(list: ActiveSubscription[], ttlMs: number): Promise<number> {
    const until = this.now() + ttlMs;
    await this.redis.set(`${this.ns}subs`, JSON.stringify({ list, until }), 'PX', Math.max(1, Math.ceil(ttlMs)));
    return until;
  }

  async useSubscription(until: number, sub: ActiveSubscription): Promise<boolean> {
    // Kept a while past the list's expiry on Redis's clock: the counter must outlive the reading.
    const ttl = Math.max(60_000, until - this.now() + 60_000);
    return (await this.redis.eval(USE, 1, `${this.ns}use:${until}:${sub.id}`, String(sub.left), String(ttl))) === 1;
  }

  async returnSubscription(until: number, sub: ActiveSubscription): Promise<void> {
    await this.redis.eval(RETURN, 1, `${this.ns}use:${until}:${sub.id}`);
  }
}
