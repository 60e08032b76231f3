/**
 * The upstream side's durable state on the embedded database (`platform/sqlite.ts`), for the layer
 * without Redis: the pending slow datasets (`pending` namespace: a dataset paid for and still being
 * prepared is resumed, not bought again, after a restart) and the cost ledger (`ledger`: budgets
 * remember what was spent). Answers, in-flight markers and rate bookings stay in memory: after a
 * restart, data bought before it is bought again when next asked (as when its cache entry expires);
 * nothing in flight or already paid for is bought twice.
 */
import { SqliteKv, type SqliteDatabase } from '../../platform/sqlite.ts';
import { periodOf, type FreePeriod, type FreeTier } from '../../contract/prices.ts';
import type { PendingDataset, PendingStore } from './cache.ts';
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

/** Pending slow datasets: the request id under the cache key, until its TTL. */
export class SqlitePendingStore implements PendingStore {
  private readonly kv: SqliteKv;

  constructor(
    private readonly db: SqliteDatabase,
    private readonly now: () => number = Date.now,
  ) {
    this.kv = new SqliteKv(db, 'pending', now);
  }

  async get(key: string): Promise<PendingDataset | undefined> {
    const id = this.kv.get(key);
    return id === undefined ? undefined : { id };
  }

  async set(key: string, id: string, ttlMs: number): Promise<void> {
    if (ttlMs <= 0) return this.delete(key);
    this.kv.set(key, id, { exp: this.now() + Math.ceil(ttlMs) });
  }

  async delete(key: string): Promise<void> {
    this.kv.delete(key);
  }

  async deleteIf(key: string, id: string): Promise<boolean> {
    return this.db.run("DELETE FROM kv WHERE ns = 'pending' AND k = ? AND v = ? AND (exp IS NULL OR exp > ?)", key, id, this.now()) === 1;
  }
}

const MICRO = 1_000_000;
const toMicro = (euro: number): number => Math.round(euro * MICRO);
const toEuro = (micro: number): number => micro / MICRO;
const OPERATION_TTL_MS = 3_600_000;
const DAY_TTL_MS = 2 * 86_400_000;
/** How long a free-tier counter outlives the start of its period. */
const FREE_TTL_MS: Record<FreePeriod, number> = { day: 2 * 86_400_000, month: 32 * 86_400_000, year: 367 * 86_400_000 };

/**
 * The cost ledger in the database, as the Redis one keeps it: integer micro-euros (no drift),
 * `op:<operationId>` (an hour after its last charge), `day:<tenant>:<YYYY-MM-DD>` (Italian day of
 * the clock, two days), `free:<tenant>|<endpoint>|<period>` counters, `spend:<tenant>:<YYYY-MM-DD>:<area>`
 * (a day per area, 40 days: every day of the current month); each change one transaction.
 */
export class SqliteCostLedger implements CostLedger {
  private readonly kv: SqliteKv;
  private readonly now: () => number;

  constructor(
    private readonly db: SqliteDatabase,
    opts: { now?: () => number } = {},
  ) {
    this.now = opts.now ?? Date.now;
    this.kv = new SqliteKv(db, 'ledger', () => this.now());
  }

  private keys(account: LedgerAccount): [string, string] {
    return [`op:${account.operationId}`, `day:${account.tenant}:${periodOf('day', this.now())}`];
  }

  private read(k: string): number {
    return Number(this.kv.get(k) ?? 0);
  }

  /** Moves the tenant's day of `area` by `micro` (inside a transaction), never below zero. */
  private moveSpend(tenant: string, area: string | undefined, micro: number, now: number): void {
    const k = `spend:${tenant}:${periodOf('day', now)}:${area ?? OTHER_AREA}`;
    this.kv.set(k, String(Math.max(0, this.read(k) + micro)), { exp: now + SPEND_DAY_TTL_MS });
  }

  async spending(tenant: string): Promise<TenantSpending> {
    const today = periodOf('day', this.now());
    const month = today.slice(0, 7);
    const prefix = `spend:${tenant}:${month}`;
    const rows = this.kv.scan(prefix).map((r) => {
      const [day, area] = r.k.slice(`spend:${tenant}:`.length).split(':');
      return { day, area, euro: toEuro(Number(r.v)) };
    });
    return { today, month, dayCommitted: toEuro(this.read(`day:${tenant}:${today}`)), rows: spendingRows(rows) };
  }

  async reserve(account: LedgerAccount, price: number, limits: BudgetLimits, endpoint: string, area?: string): Promise<void> {
    if (price <= 0) return;
    const [opKey, dayKey] = this.keys(account);
    const p = toMicro(price);
    this.db.tx(() => {
      const op = this.read(opKey);
      const day = this.read(dayKey);
      if (limits.operation !== null && op + p > toMicro(limits.operation)) throw new CostLimitError('operation', limits.operation, toEuro(op), price, endpoint);
      if (limits.day !== null && day + p > toMicro(limits.day)) throw new CostLimitError('day', limits.day, toEuro(day), price, endpoint);
      const now = this.now();
      this.kv.set(opKey, String(op + p), { exp: now + OPERATION_TTL_MS });
      this.kv.set(dayKey, String(day + p), { exp: now + DAY_TTL_MS });
      this.moveSpend(account.tenant, area, p, now);
    });
  }

  async release(account: LedgerAccount, price: number, area?: string): Promise<void> {
    if (price <= 0) return;
    const p = toMicro(price);
    this.db.tx(() => {
      const now = this.now();
      const [opKey, dayKey] = this.keys(account);
      this.kv.set(opKey, String(Math.max(0, this.read(opKey) - p)), { exp: now + OPERATION_TTL_MS });
      this.kv.set(dayKey, String(Math.max(0, this.read(dayKey) - p)), { exp: now + DAY_TTL_MS });
      this.moveSpend(account.tenant, area, -p, now);
    });
  }

  async balance(account: LedgerAccount): Promise<LedgerBalance> {
    const [opKey, dayKey] = this.keys(account);
    return { operation: toEuro(this.read(opKey)), day: toEuro(this.read(dayKey)) };
  }

  async claimFree(tenant: string, endpoint: string, tiers: readonly FreeTier[]): Promise<FreeClaim> {
    if (tiers.length === 0) return { free: false, use: [] };
    const at = this.now();
    const counts = this.db.tx(() =>
      tiers.map((t) => {
        const k = `free:${freeCounterKey(tenant, endpoint, t, at)}`;
        const n = this.read(k) + 1;
        this.kv.set(k, String(n), { exp: at + FREE_TTL_MS[t.period] });
        return n;
      }),
    );
    return { free: tiers.every((t, i) => counts[i] <= t.calls), use: freeUseOf(tiers, counts), at };
  }

  async unclaimFree(tenant: string, endpoint: string, tiers: readonly FreeTier[], at: number): Promise<void> {
    this.db.tx(() => {
      for (const t of tiers) {
        const k = `free:${freeCounterKey(tenant, endpoint, t, at)}`;
        const n = this.read(k);
        if (n > 0) this.kv.set(k, String(n - 1), { keepExp: true });
      }
    });
  }

  async freeUse(tenant: string, endpoint: string, tiers: readonly FreeTier[]): Promise<FreeTierUse[]> {
    const now = this.now();
    return freeUseOf(
      tiers,
      tiers.map((t) => this.read(`free:${freeCounterKey(tenant, endpoint, t, now)}`)),
    );
  }
}
