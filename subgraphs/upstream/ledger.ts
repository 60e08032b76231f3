/**
 * The cost ledger: what every client operation and every tenant's day has committed upstream, in
 * euro, shared by every subgraph (and, on Redis, every replica). The gateway gives each client
 * operation an id; every subgraph request of that operation charges the same ledger entry, so one
 * budget holds across the whole query plan (every entity fetch, every subgraph).
 *
 * A reservation is made before a paid call is sent and given back when the call was certainly not
 * charged (an error answer, a connection never made). A call whose outcome is unknown keeps its
 * reservation: the money may be spent.
 */
import { LRUCache } from 'lru-cache';
import { entriesAtMost } from '../../platform/lru.ts';
import { periodOf, type FreePeriod, type FreeTier } from '../../contract/prices.ts';

const round4 = (n: number): number => Math.round(n * 10000) / 10000;

export type BudgetScope = 'operation' | 'day';

/** A paid call refused because it would take the operation (or the tenant's day) past its budget. */
export class CostLimitError extends Error {
  override readonly name = 'CostLimitError';
  constructor(
    readonly scope: BudgetScope,
    readonly budget: number,
    readonly committed: number,
    readonly price: number,
    readonly endpoint: string,
  ) {
    super(
      scope === 'operation'
        ? `this operation would spend more than its budget of €${budget} (€${round4(committed)} committed, ${endpoint} costs €${price})`
        : `this call would take today's spending past the daily budget of €${budget} (€${round4(committed)} committed today, ${endpoint} costs €${price})`,
    );
  }
}

/** The budgets a reservation is checked against; null means no limit. */
export interface BudgetLimits {
  /** Euro one client operation may commit (`OPENAPI_MAX_EURO_PER_OPERATION`). */
  operation: number | null;
  /** Euro one tenant may commit per calendar day, Italian time (`OPENAPI_MAX_EURO_PER_DAY`). */
  day: number | null;
}

/** Who is charged: one client operation of one tenant. */
export interface LedgerAccount {
  operationId: string;
  tenant: string;
}

/** What is committed now. */
export interface LedgerBalance {
  operation: number;
  day: number;
}

export interface CostLedger {
  /**
   * Commits `price` to the operation and to the tenant's day, or throws `CostLimitError` (and
   * commits nothing) when either would pass its limit. Atomic.
   */
  reserve(account: LedgerAccount, price: number, limits: BudgetLimits, endpoint: string, area?: string): Promise<void>;
  /** Gives back a reservation whose call was certainly not charged (`area`: the one it was reserved under). */
  release(account: LedgerAccount, price: number, area?: string): Promise<void>;
  balance(account: LedgerAccount): Promise<LedgerBalance>;
  /**
   * Counts one call of `endpoint` (`cap GET cerca_comuni`) by `tenant` in the current period of each
   * of its free tiers, and says whether it is free: every tier still had room for it. Atomic.
   */
  claimFree(tenant: string, endpoint: string, tiers: readonly FreeTier[]): Promise<FreeClaim>;
  /**
   * Takes back a `claimFree` whose call was not sent after all (refused before sending, or never
   * left): the counters of the claim's periods (`claim.at`) go down by one, never below zero.
   */
  unclaimFree(tenant: string, endpoint: string, tiers: readonly FreeTier[], at: number): Promise<void>;
  /** Where `tenant`'s free tiers of `endpoint` stand, without counting anything. */
  freeUse(tenant: string, endpoint: string, tiers: readonly FreeTier[]): Promise<FreeTierUse[]>;
  /**
   * What `tenant` has committed per day and upstream area in the current calendar month (Italian
   * time) and today, from the same reservations and releases as the day budget: each `reserve` and
   * `release` given an `area` moves that area's day too (one without an area counts as `other`).
   * Area days are kept `SPEND_DAY_TTL_MS` (40 days), so every day of the current month is there.
   */
  spending(tenant: string): Promise<TenantSpending>;
}

/** How long a tenant's day per area is kept: longer than any month, so a month's days add up. */
export const SPEND_DAY_TTL_MS = 40 * 86_400_000;

/** The bucket of a reservation made without its area. */
export const OTHER_AREA = 'other';

/** One day and area of a tenant's spending. */
export interface SpendingRow {
  /** `YYYY-MM-DD`, Italian calendar day. */
  day: string;
  /** The upstream area (`company`, `risk`, …), or `other`. */
  area: string;
  /** Euro committed (spent and at risk). */
  euro: number;
}

/** What `CostLedger.spending` answers. */
export interface TenantSpending {
  /** Today, `YYYY-MM-DD` (Italian calendar). */
  today: string;
  /** This month, `YYYY-MM`. */
  month: string;
  /** Euro committed today in all (the day budget's own counter). */
  dayCommitted: number;
  /** Each day and area of this month with euro committed, by day then area. */
  rows: SpendingRow[];
}

/** `rows` sorted by day then area, dropping zeros. */
export function spendingRows(rows: Iterable<SpendingRow>): SpendingRow[] {
  return [...rows].filter((r) => r.euro > 0).sort((a, b) => (a.day === b.day ? a.area.localeCompare(b.area) : a.day < b.day ? -1 : 1));
}

/** One free tier of one endpoint for one tenant, in its current period. */
export interface FreeTierUse {
  period: FreePeriod;
  /** Free calls per period. */
  limit: number;
  /** Calls counted in this period (free and paid). */
  used: number;
  /** Free calls left in this period. */
  remaining: number;
}

/** The outcome of `claimFree`. */
export interface FreeClaim {
  free: boolean;
  use: FreeTierUse[];
  /** When it was counted (ms): the periods `unclaimFree` takes it back from. */
  at?: number;
}

/** Where the tiers stand for these counts (one per tier, in order). */
export function freeUseOf(tiers: readonly FreeTier[], counts: readonly number[]): FreeTierUse[] {
  return tiers.map((t, i) => ({ period: t.period, limit: t.calls, used: counts[i] ?? 0, remaining: Math.max(0, t.calls - (counts[i] ?? 0)) }));
}

/** The counter key of one tier's current period. */
export const freeCounterKey = (tenant: string, endpoint: string, tier: FreeTier, now: number): string => `${tenant}|${endpoint}|${tier.period}:${periodOf(tier.period, now)}`;

const EPSILON = 1e-9;
const cents = (n: number): number => Math.round(n * 1e6) / 1e6;

export interface MemoryLedgerOptions {
  /** Operations remembered at once (the least recently charged are forgotten first). @default 100000 */
  maxOperations?: number;
  /** Clock for the day of a charge. @default Date.now */
  now?: () => number;
}

/** The in-process ledger (the default: one process, `npm start`). */
export class MemoryCostLedger implements CostLedger {
  /** Operations with euro committed (one back at zero is dropped, as a day is). */
  private readonly operations: LRUCache<string, { committed: number }>;
  /**
   * Tenants' days with euro committed: a day is never evicted before it ends (bounded by the tenants
   * spending × 2 days). A day back at zero (every call given back, e.g. refused upstream) is
   * dropped at once: it reads the same as no day, and a caller per request cannot grow the map.
   */
  private readonly days = new Map<string, { committed: number }>();
  /** The day the ended days were last swept on (one sweep per day, not per new tenant). */
  private sweptOn = '';
  private readonly now: () => number;

  constructor(opts: MemoryLedgerOptions = {}) {
    // An operation lives seconds to minutes; an hour without a charge means it is over.
    this.operations = new LRUCache({ ...entriesAtMost(opts.maxOperations ?? 100_000), ttl: 3_600_000, updateAgeOnGet: true });
    this.now = opts.now ?? Date.now;
  }

  private dayKey(tenant: string): string {
    return `${tenant}|${periodOf('day', this.now())}`;
  }

  private entries(account: LedgerAccount): { op: { committed: number }; day: { committed: number }; dayKey: string } {
    let op = this.operations.get(account.operationId);
    if (!op) this.operations.set(account.operationId, (op = { committed: 0 }));
    const dayKey = this.dayKey(account.tenant);
    let day = this.days.get(dayKey);
    if (!day) {
      this.sweepDays();
      this.days.set(dayKey, (day = { committed: 0 }));
    }
    return { op, day, dayKey };
  }

  /** Drops an operation and a day back at zero (nothing committed: the same as no entry). */
  private settle(account: LedgerAccount, entries: { op: { committed: number }; day: { committed: number }; dayKey: string }): void {
    if (entries.op.committed <= 0 && this.operations.peek(account.operationId) === entries.op) this.operations.delete(account.operationId);
    if (entries.day.committed <= 0 && this.days.get(entries.dayKey) === entries.day) this.days.delete(entries.dayKey);
  }

  /** Drops the days that are over (kept one day past, for what remains to be said of them), once a day. */
  private sweepDays(): void {
    const today = periodOf('day', this.now());
    if (today === this.sweptOn) return;
    this.sweptOn = today;
    const yesterday = periodOf('day', this.now() - 86_400_000);
    for (const key of this.days.keys()) {
      const day = key.slice(key.lastIndexOf('|') + 1);
      if (day < yesterday) this.days.delete(key);
    }
    const oldest = periodOf('day', this.now() - SPEND_DAY_TTL_MS);
    for (const [tenant, days] of this.areaDays) {
      for (const key of days.keys()) if (key < oldest) days.delete(key);
      if (days.size === 0) this.areaDays.delete(tenant);
    }
  }

  /** Each tenant's days per area (`YYYY-MM-DD|area` → euro), kept `SPEND_DAY_TTL_MS`. */
  private readonly areaDays = new Map<string, Map<string, number>>();

  private moveArea(tenant: string, area: string | undefined, delta: number): void {
    const key = `${periodOf('day', this.now())}|${area ?? OTHER_AREA}`;
    const days = this.areaDays.get(tenant) ?? new Map<string, number>();
    const committed = Math.max(0, cents((days.get(key) ?? 0) + delta));
    if (committed > 0) days.set(key, committed);
    else days.delete(key);
    if (days.size > 0) this.areaDays.set(tenant, days);
    else this.areaDays.delete(tenant);
  }

  async spending(tenant: string): Promise<TenantSpending> {
    const today = periodOf('day', this.now());
    const month = today.slice(0, 7);
    const rows: SpendingRow[] = [];
    for (const [key, euro] of this.areaDays.get(tenant) ?? []) {
      const [day, area] = key.split('|');
      if (day.startsWith(month)) rows.push({ day, area, euro });
    }
    return { today, month, dayCommitted: this.days.get(this.dayKey(tenant))?.committed ?? 0, rows: spendingRows(rows) };
  }

  async reserve(account: LedgerAccount, price: number, limits: BudgetLimits, endpoint: string, area?: string): Promise<void> {
    if (price <= 0) return;
    const entries = this.entries(account);
    const { op, day } = entries;
    if (limits.operation !== null && op.committed + price > limits.operation + EPSILON) {
      this.settle(account, entries);
      throw new CostLimitError('operation', limits.operation, op.committed, price, endpoint);
    }
    if (limits.day !== null && day.committed + price > limits.day + EPSILON) {
      this.settle(account, entries);
      throw new CostLimitError('day', limits.day, day.committed, price, endpoint);
    }
    op.committed = cents(op.committed + price);
    day.committed = cents(day.committed + price);
    this.moveArea(account.tenant, area, price);
  }

  async release(account: LedgerAccount, price: number, area?: string): Promise<void> {
    if (price <= 0) return;
    const entries = this.entries(account);
    const { op, day } = entries;
    op.committed = Math.max(0, cents(op.committed - price));
    day.committed = Math.max(0, cents(day.committed - price));
    this.moveArea(account.tenant, area, -price);
    this.settle(account, entries);
  }

  async balance(account: LedgerAccount): Promise<LedgerBalance> {
    const op = this.operations.get(account.operationId);
    const day = this.days.get(this.dayKey(account.tenant));
    return { operation: op?.committed ?? 0, day: day?.committed ?? 0 };
  }

  /** Free-tier counters by tenant, endpoint and period (a past period is simply never read again). */
  private readonly freeCounts = new LRUCache<string, { n: number }>({ ...entriesAtMost(200_000) });

  async claimFree(tenant: string, endpoint: string, tiers: readonly FreeTier[]): Promise<FreeClaim> {
    if (tiers.length === 0) return { free: false, use: [] };
    const now = this.now();
    const counts = tiers.map((t) => {
      const key = freeCounterKey(tenant, endpoint, t, now);
      let c = this.freeCounts.get(key);
      if (!c) this.freeCounts.set(key, (c = { n: 0 }));
      return ++c.n;
    });
    return { free: tiers.every((t, i) => counts[i] <= t.calls), use: freeUseOf(tiers, counts), at: now };
  }

  async unclaimFree(tenant: string, endpoint: string, tiers: readonly FreeTier[], at: number): Promise<void> {
    for (const t of tiers) {
      const c = this.freeCounts.get(freeCounterKey(tenant, endpoint, t, at));
      if (c && c.n > 0) c.n--;
    }
  }

  async freeUse(tenant: string, endpoint: string, tiers: readonly FreeTier[]): Promise<FreeTierUse[]> {
    const now = this.now();
    return freeUseOf(
      tiers,
      tiers.map((t) => this.freeCounts.get(freeCounterKey(tenant, endpoint, t, now))?.n ?? 0),
    );
  }
}
