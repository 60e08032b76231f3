/**
 * `Query.spending`: what the caller's tenant has committed upstream today and this month, per
 * upstream area, against its budgets, from the cost ledger the budgets are checked on
 * (`upstream/ledger.ts`, `CostLedger.spending`). No upstream call.
 */
import type { BudgetLimits, SpendingRow, TenantSpending } from '../upstream/ledger.ts';
import { round4 } from '../upstream/cost.ts';

export interface AreaSpendingValue {
  area: string;
  euro: number;
}

export interface SpendingPeriodValue {
  period: string;
  total: number;
  byArea: AreaSpendingValue[];
}

export interface SpendingValue {
  tenant: string;
  today: SpendingPeriodValue;
  month: SpendingPeriodValue;
  days: SpendingPeriodValue[];
  budgets: { operation: number | null; day: number | null; dayCommitted: number; dayRemaining: number | null };
}

/** One period from its rows: per area, largest first; the total is their sum. */
export function spendingPeriod(period: string, rows: readonly SpendingRow[]): SpendingPeriodValue {
  const byArea = new Map<string, number>();
  for (const r of rows) byArea.set(r.area, (byArea.get(r.area) ?? 0) + r.euro);
  const areas = [...byArea]
    .map(([area, euro]) => ({ area, euro: round4(euro) }))
    .filter((a) => a.euro > 0)
    .sort((a, b) => b.euro - a.euro || a.area.localeCompare(b.area));
  return { period, total: round4(areas.reduce((s, a) => s + a.euro, 0)), byArea: areas };
}

/** The GraphQL value of a tenant's spending (`limits`: the budgets its operations are held to). */
export function spendingValue(tenant: string, s: TenantSpending, limits: BudgetLimits): SpendingValue {
  const days = [...new Set(s.rows.map((r) => r.day))].sort().map((d) =>
    spendingPeriod(
      d,
      s.rows.filter((r) => r.day === d),
    ),
  );
  const dayCommitted = round4(s.dayCommitted);
  return {
    tenant,
    today: spendingPeriod(
      s.today,
      s.rows.filter((r) => r.day === s.today),
    ),
    month: spendingPeriod(s.month, s.rows),
    days,
    budgets: {
      operation: limits.operation,
      day: limits.day,
      dayCommitted,
      dayRemaining: limits.day === null ? null : round4(Math.max(0, limits.day - dayCommitted)),
    },
  };
}
