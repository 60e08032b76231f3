/**
 * The cost ledger on Redis, shared by every replica: an operation's budget and a tenant's day hold
 * however many gateways and subgraph processes serve them.
 *
 * Amounts are kept as integer micro-euros (INCRBY, not INCRBYFLOAT), so that thousands of small
 * charges and releases never drift: €0.05 is 50000. Keys, under the connection's prefix:
 * `ledger:op:<operationId>` (expires an hour after its last charge, as the memory ledger forgets an
 * operation) and `ledger:day:<tenant>:<YYYY-MM-DD>` (Italian calendar day of the injectable clock,
 * expires after 2 days), and the free-tier counters `ledger:free:<tenant>|<endpoint>|<period>:<YYYY-MM-DD|YYYY-MM|YYYY>`
 * (kept a little longer than their period), and a tenant's month per day and area, a hash
 * `ledger:spend:<tenant>:<YYYY-MM>` of `<YYYY-MM-DD>|<area>` → micro-euros (kept 40 days after its
 * last change: every day of the current month is there).
 */
import type { Redis } from 'ioredis';
import { defineScript } from '../../platform/redis.ts';
import { periodOf, type FreePeriod, type FreeTier } from '../../contract/prices.ts';
import {
  CostLimitError,
  freeCounterKey,
  freeUseOf,
  type BudgetLimits,
  type CostLedger,
  type FreeClaim,
  type FreeTierUse,
  type LedgerAccount,
  type LedgerBalance,
  OTHER_AREA,
  SPEND_DAY_TTL_MS,
  spendingRows,
  type TenantSpending,
} from './ledger.ts';

const MICRO = 1_000_000;
const toMicro = (euro: number): number => Math.round(euro * MICRO);
const toEuro = (micro: number): number => micro / MICRO;

const OPERATION_TTL_MS = 3_600_000;
const DAY_TTL_MS = 2 * 86_400_000;

/**
 * KEYS: operation, day, the tenant's spending month. ARGV: price, operation limit (-1 = none), day
 * limit (-1 = none), TTLs, the spending field (`day|area`) and its TTL. Returns {0, 0} when committed
 * (the day's area counted in the same step), {1, committed} past the operation's limit, {2,
 * committed} past the day's.
 */
const RESERVE = defineScript(`
local price = tonumber(ARGV[1])
local op = tonumber(redis.call('GET', KEYS[1]) or '0')
local day = tonumber(redis.call('GET', KEYS[2]) or '0')
local opLimit = tonumber(ARGV[2])
local dayLimit = tonumber(ARGV[3])
if opLimit >= 0 and op + price > opLimit then return {1, op} end
if dayLimit >= 0 and day + price > dayLimit then return {2, day} end
redis.call('INCRBY', KEYS[1], price)
redis.call('PEXPIRE', KEYS[1], ARGV[4])
redis.call('INCRBY', KEYS[2], price)
redis.call('PEXPIRE', KEYS[2], ARGV[5])
redis.call('HINCRBY', KEYS[3], ARGV[6], price)
redis.call('PEXPIRE', KEYS[3], ARGV[7])
return {0, 0}
`);

/** KEYS: operation, day, spending month. ARGV: price, TTLs, the spending field and its TTL. Never below zero. */
const RELEASE = defineScript(`
for i = 1, 2 do
  local v = redis.call('DECRBY', KEYS[i], ARGV[1])
  if v < 0 then redis.call('SET', KEYS[i], 0) end
  redis.call('PEXPIRE', KEYS[i], ARGV[i + 1])
end
local s = redis.call('HINCRBY', KEYS[3], ARGV[4], -tonumber(ARGV[1]))
if s <= 0 then redis.call('HDEL', KEYS[3], ARGV[4]) end
redis.call('PEXPIRE', KEYS[3], ARGV[5])
return 0
`);

/** KEYS: one counter per tier. ARGV: their TTLs in ms. Counts one call on each; returns the counts. */
const CLAIM_FREE = defineScript(`
local out = {}
for i = 1, #KEYS do
  out[i] = redis.call('INCR', KEYS[i])
  redis.call('PEXPIRE', KEYS[i], ARGV[i])
end
return out
`);

/** KEYS: one counter per tier. Takes one call back from each that exists, never below zero. */
const UNCLAIM_FREE = defineScript(`
for i = 1, #KEYS do
  local v = tonumber(redis.call('GET', KEYS[i]) or '0')
  if v > 0 then redis.call('DECR', KEYS[i]) end
end
return 0
`);

/** How long a free-tier counter outlives the start of its period. */
const FREE_TTL_MS: Record<FreePeriod, number> = { day: 2 * 86_400_000, month: 32 * 86_400_000, year: 367 * 86_400_000 };

export interface RedisLedgerOptions {
  /** Clock for the day of a charge. @default Date.now */
  now?: () => number;
  /** @default 'ledger:' */
  namespace?: string;
}

export class RedisCostLedger implements CostLedger {
  private readonly now: () => number;
  private readonly ns: string;

  constructor(
    private readonly redis: Redis,
    opts: RedisLedgerOptions = {},
  ) {
    this.now = opts.now ?? Date.now;
    this.ns = opts.namespace ?? 'ledger:';
  }

  private keys(account: LedgerAccount): [string, string] {
    return [`${this.ns}op:${account.operationId}`, `${this.ns}day:${account.tenant}:${periodOf('day', this.now())}`];
  }

  /** The keys a reservation moves (operation, day, the tenant's spending month) and its spending field. */
  private moved(account: LedgerAccount, area: string | undefined): { keys: string[]; field: string } {
    const day = periodOf('day', this.now());
    return { keys: [...this.keys(account), this.spendKey(account.tenant, day.slice(0, 7))], field: `${day}|${area ?? OTHER_AREA}` };
  }

  private spendKey(tenant: string, month: string): string {
    return `${this.ns}spend:${tenant}:${month}`;
  }

  async spending(tenant: string): Promise<TenantSpending> {
    const today = periodOf('day', this.now());
    const month = today.slice(0, 7);
    const [hash, day] = await Promise.all([this.redis.hgetall(this.spendKey(tenant, month)), this.redis.get(`${this.ns}day:${tenant}:${today}`)]);
    const rows = Object.entries(hash).map(([field, v]) => {
      const at = field.indexOf('|');
      return { day: field.slice(0, at), area: field.slice(at + 1), euro: toEuro(Number(v)) };
    });
    return { today, month, dayCommitted: toEuro(Number(day ?? 0)), rows: spendingRows(rows) };
  }

  async reserve(account: LedgerAccount, price: number, limits: BudgetLimits, endpoint: string, area?: string): Promise<void> {
    if (price <= 0) return;
    const limit = (l: number | null): number => (l === null ? -1 : toMicro(l));
    const { keys, field } = this.moved(account, area);
    const out = (await RESERVE.run(this.redis, keys, [toMicro(price), limit(limits.operation), limit(limits.day), OPERATION_TTL_MS, DAY_TTL_MS, field, SPEND_DAY_TTL_MS])) as [
      number,
      number,
    ];
    const [verdict, committed] = out;
    if (verdict === 1) throw new CostLimitError('operation', limits.operation ?? 0, toEuro(committed), price, endpoint);
    if (verdict === 2) throw new CostLimitError('day', limits.day ?? 0, toEuro(committed), price, endpoint);
  }

  async release(account: LedgerAccount, price: number, area?: string): Promise<void> {
    if (price <= 0) return;
    const { keys, field } = this.moved(account, area);
    await RELEASE.run(this.redis, keys, [toMicro(price), OPERATION_TTL_MS, DAY_TTL_MS, field, SPEND_DAY_TTL_MS]);
  }

  async balance(account: LedgerAccount): Promise<LedgerBalance> {
    const [op, day] = await this.redis.mget(...this.keys(account));
    return { operation: toEuro(Number(op ?? 0)), day: toEuro(Number(day ?? 0)) };
  }

  private freeKeys(tenant: string, endpoint: string, tiers: readonly FreeTier[], now = this.now()): string[] {
    return tiers.map((t) => `${this.ns}free:${freeCounterKey(tenant, endpoint, t, now)}`);
  }

  async claimFree(tenant: string, endpoint: string, tiers: readonly FreeTier[]): Promise<FreeClaim> {
    if (tiers.length === 0) return { free: false, use: [] };
    const at = this.now();
    const counts = (
      (await CLAIM_FREE.run(
        this.redis,
        this.freeKeys(tenant, endpoint, tiers, at),
        tiers.map((t) => FREE_TTL_MS[t.period]),
      )) as number[]
    ).map(Number);
    return { free: tiers.every((t, i) => counts[i] <= t.calls), use: freeUseOf(tiers, counts), at };
  }

  async unclaimFree(tenant: string, endpoint: string, tiers: readonly FreeTier[], at: number): Promise<void> {
    if (tiers.length === 0) return;
    await UNCLAIM_FREE.run(this.redis, this.freeKeys(tenant, endpoint, tiers, at), []);
  }

  async freeUse(tenant: string, endpoint: string, tiers: readonly FreeTier[]): Promise<FreeTierUse[]> {
    if (tiers.length === 0) return [];
    const counts = (await this.redis.mget(...this.freeKeys(tenant, endpoint, tiers))).map((v) => Number(v ?? 0));
    return freeUseOf(tiers, counts);
  }
}
