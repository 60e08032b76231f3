/**
 * The cost meter of one GraphQL operation: every upstream call made, every call answered by the
 * cache or by in-flight de-duplication, and the euro spent. Subgraphs put it in
 * `extensions.cost`; the gateway sums the subgraphs' meters into the client's response.
 */
import type { Area } from '../../contract/areas.ts';
import { freeTierOf, type FreePeriod } from '../../contract/prices.ts';
import { CostLimitError, type BudgetLimits, type CostLedger, type FreeTierUse, type LedgerAccount, type TenantSpending } from './ledger.ts';
import { routeOf } from '../../contract/prices.ts';
import { countBudgetRefused, countUpstreamCall } from '../../platform/metrics.ts';
import { traceUpstreamCall } from '../../platform/tracing.ts';

export interface CostCall {
  area: Area;
  method: string;
  /** Path without query, tokens never included. */
  path: string;
  /** HTTP status of the final attempt (0 when no answer arrived). */
  status: number;
  euro: number;
  ms: number;
  /**
   * How it was answered: `upstream` (paid or free call made), `cache`, `dedup` (joined an identical
   * call in flight), `stale` (the upstream failed and an expired copy within the allowed staleness
   * answered).
   */
  source: 'upstream' | 'cache' | 'dedup' | 'stale';
  /**
   * Euro this call may have cost although no answer arrived (timeout, connection lost after the
   * request was sent): the upstream may have carried it out and charged. Absent when known.
   */
  atRisk?: number;
}

/** Where a budget stands after the operation (what `extensions.cost.budget` says). */
export interface BudgetState {
  /** The limit; null when there is none. */
  limit: number | null;
  /** Euro committed against it (spent and at risk). */
  committed: number;
  /** What is left; null when there is no limit. */
  remaining: number | null;
}

/** What `extensions.cost` holds. */
export interface CostSummary {
  /** Calls sent to the REST suite (every attempt, retries and polls included). */
  upstreamCalls: number;
  /** Calls answered from the per-tenant cache. */
  cacheHits: number;
  /** Calls that joined an identical call already in flight. */
  dedupHits: number;
  /** Calls answered from an expired copy because the upstream failed. */
  staleHits: number;
  /** Euro spent by this operation, rounded to 1/10000. */
  euro: number;
  /** Euro of paid calls whose outcome is unknown (no answer arrived): possibly spent as well. */
  atRisk: number;
  /** The operation's budget and the tenant's day, when known. */
  budget?: { operation: BudgetState; day: BudgetState };
  /**
   * The tenant's free tiers of the endpoints this operation called (those that have one), where they
   * stand after it: free calls left in the current day, month or year.
   */
  freeTier?: FreeTierState[];
  calls: CostCall[];
}

/** One free tier of one endpoint, after the operation. */
export interface FreeTierState {
  /** The endpoint as the price table names it, e.g. `cap GET cerca_comuni`. */
  endpoint: string;
  period: FreePeriod;
  limit: number;
  used: number;
  remaining: number;
}

export { CostLimitError, type BudgetScope } from './ledger.ts';

/** Where a call's free tier is counted when not on its operation's tenant (see `CostMeter.claimFreeTier`). */
export interface FreeTierCounter {
  ledger: CostLedger;
  tenant: string;
}

/** Where a meter charges its reservations (see `ledger.ts`). */
export interface MeterLedger {
  ledger: CostLedger;
  account: LedgerAccount;
  limits: BudgetLimits;
  /** The operation's worst-case euro as the gateway estimated it, when known. */
  estimate?: number | null;
  /** The scopes the whole operation may need (production form), as the gateway's estimate found them, when known. */
  scopes?: readonly string[] | null;
}

export class CostMeter {
  readonly calls: CostCall[] = [];
  /** The latest known state of the free tiers of the endpoints called, by endpoint key. */
  private readonly freeTiers = new Map<string, FreeTierUse[]>();

  /**
   * @param target the shared ledger, operation and limits to charge; without it (internal reads,
   * unit tests) nothing is limited.
   */
  constructor(private readonly target: MeterLedger | null = null) {}

  /** The client operation this meter charges (`extensions.cost.operationId`); null without a ledger. */
  get operationId(): string | null {
    return this.target?.account.operationId ?? null;
  }

  /** The operation's worst-case euro as the gateway estimated it; null when unknown. */
  get estimate(): number | null {
    return this.target?.estimate ?? null;
  }

  /** The scopes the whole operation may need (`runtime/operation.ts`, `SCOPES_HEADER`); null when unknown. */
  get scopes(): readonly string[] | null {
    return this.target?.scopes ?? null;
  }

  /**
   * Records a call; it is counted (`platform/metrics.ts`) and traced (`platform/tracing.ts`) here, under
   * `template`, the endpoint's path template (else the path with its ids replaced).
   */
  record(call: CostCall, template?: string): void {
    this.calls.push(call);
    const endpoint = (template ?? routeOf(call.path)).replace(/^\/+/, '');
    countUpstreamCall(call, endpoint);
    traceUpstreamCall(call, endpoint);
  }

  /**
   * A meter for paid work this operation starts and the layer carries out later (a queued bulk
   * send): the same ledger and tenant, so the tenant's day budget and free tiers count it, under an
   * operation of its own (the starting operation's budget is not held open).
   */
  background(): CostMeter {
    if (!this.target) return new CostMeter();
    const { ledger, account, limits } = this.target;
    return new CostMeter({
      ledger,
      account: { operationId: `${account.operationId}:later:${Math.random().toString(36).slice(2, 10)}`, tenant: account.tenant },
      limits: { operation: null, day: limits.day },
    });
  }

  /**
   * Checks, without committing anything, that `euro` more would still fit the operation's and the
   * tenant's day budget (work this operation queues for later, e.g. a bulk sending's requests);
   * throws `CostLimitError` when it would not.
   */
  async fits(euro: number, endpoint: string): Promise<void> {
    if (euro <= 0 || !this.target) return;
    const { ledger, account, limits } = this.target;
    const balance = await ledger.balance(account);
    const scope =
      limits.operation !== null && balance.operation + euro > limits.operation + 1e-9 ? 'operation' : limits.day !== null && balance.day + euro > limits.day + 1e-9 ? 'day' : null;
    if (scope) countBudgetRefused(scope, 'call');
    if (scope === 'operation') throw new CostLimitError('operation', limits.operation!, balance.operation, round4(euro), endpoint);
    if (scope === 'day') throw new CostLimitError('day', limits.day!, balance.day, round4(euro), endpoint);
  }

  /**
   * A meter for paid work the layer carries out for `tenant` on its own (a bulk queue resumed after a
   * restart): charged to the tenant's day budget and free tiers under an operation of its own.
   */
  static detached(ledger: CostLedger, tenant: string, operationId: string, dayLimit: number | null): CostMeter {
    return new CostMeter({ ledger, account: { operationId, tenant }, limits: { operation: null, day: dayLimit } });
  }

  /**
   * Commits `price` before a call is sent; throws `CostLimitError` when it would pass a budget.
   * `area`: the upstream area called, for the tenant's spending per area (`CostLedger.spending`).
   */
  async reserve(price: number, endpoint: string, area?: Area): Promise<void> {
    if (price <= 0 || !this.target) return;
    const { ledger, account, limits } = this.target;
    try {
      await ledger.reserve(account, price, limits, endpoint, area);
    } catch (err) {
      if (err instanceof CostLimitError) countBudgetRefused(err.scope, 'call');
      throw err;
    }
  }

  /**
   * The price of a call about to be sent, after its endpoint's free tiers (the contract's, counted
   * per tenant on the shared ledger): 0 when the call is inside every tier of its endpoint, else
   * `price`. Every call sent counts, as the vendor's per-scope counters do. Without a ledger
   * (internal reads, unit tests) nothing is counted and the price stands.
   */
  async priceAfterFreeTier(area: Area, method: string, path: string, price: number): Promise<number> {
    return (await this.claimFreeTier(area, method, path, price)).price;
  }

  /**
   * `priceAfterFreeTier`, with the means to take the count back (`giveBack`) when the call is not
   * sent after all (refused before sending, or it never left): the vendor counts only calls it
   * receives. `counter` counts it elsewhere than on the operation's tenant: the account's calls
   * (HTTP Basic) are counted under the account's tenant, whoever's operation makes them.
   */
  async claimFreeTier(area: Area, method: string, path: string, price: number, counter: FreeTierCounter | null = null): Promise<{ price: number; giveBack(): Promise<void> }> {
    const where = counter ?? (this.target ? { ledger: this.target.ledger, tenant: this.target.account.tenant } : null);
    const tier = price > 0 && where ? freeTierOf(area, method, path) : null;
    if (!tier || !where) return { price, giveBack: async () => undefined };
    const claim = await where.ledger.claimFree(where.tenant, tier.key, tier.tiers);
    this.freeTiers.set(tier.key, claim.use);
    let given = false;
    return {
      price: claim.free ? 0 : price,
      giveBack: async () => {
        if (given || claim.at === undefined) return;
        given = true;
        await where.ledger.unclaimFree(where.tenant, tier.key, tier.tiers, claim.at);
        this.freeTiers.set(
          tier.key,
          claim.use.map((u) => ({ ...u, used: Math.max(0, u.used - 1), remaining: Math.min(u.limit, u.remaining + (u.used > u.limit ? 0 : 1)) })),
        );
      },
    };
  }

  /**
   * Settles the price of the last call recorded to `path` at `euro`, once the service's own count
   * shows what it charged (e.g. a creation priced by its position among the account's): the
   * difference is given back, or committed beyond the budgets (the service charged it already).
   */
  async settle(path: string, euro: number): Promise<void> {
    const call = this.calls.findLast((c) => c.path === path && c.source === 'upstream' && c.status > 0);
    if (!call || Math.abs(call.euro - euro) < 1e-9) return;
    const diff = euro - call.euro;
    call.euro = euro;
    if (!this.target) return;
    if (diff < 0) await this.target.ledger.release(this.target.account, -diff, call.area);
    else await this.target.ledger.reserve(this.target.account, diff, { operation: null, day: null }, `${call.method} ${path}`, call.area);
  }

  /** Gives back a reservation whose call was certainly not charged (an error answer, no connection); `area` as reserved. */
  async release(price: number, area?: Area): Promise<void> {
    if (price <= 0 || !this.target) return;
    await this.target.ledger.release(this.target.account, price, area);
  }

  /**
   * What this operation's tenant has committed today and this month, per upstream area, with the
   * budgets it is held to; null without a shared ledger (internal reads, unit tests).
   */
  async spending(): Promise<(TenantSpending & { limits: BudgetLimits }) | null> {
    if (!this.target) return null;
    const { ledger, account, limits } = this.target;
    return { ...(await ledger.spending(account.tenant)), limits };
  }

  summary(): CostSummary {
    return summarize(this.calls);
  }

  /** The summary, with where the budgets stand when the meter charges a shared ledger. */
  async report(): Promise<CostSummary> {
    const out = summarize(this.calls);
    if (this.target) {
      const { ledger, account, limits } = this.target;
      const balance = await ledger.balance(account);
      out.budget = { operation: budgetState(limits.operation, balance.operation), day: budgetState(limits.day, balance.day) };
    }
    if (this.freeTiers.size > 0) out.freeTier = [...this.freeTiers].flatMap(([endpoint, use]) => use.map((u) => ({ endpoint, ...u })));
    return out;
  }
}

export const round4 = (n: number): number => Math.round(n * 10000) / 10000;

export const budgetState = (limit: number | null, committed: number): BudgetState => ({
  limit,
  committed: round4(committed),
  remaining: limit === null ? null : round4(Math.max(0, limit - committed)),
});

export function summarize(calls: CostCall[]): CostSummary {
  let upstreamCalls = 0;
  let cacheHits = 0;
  let dedupHits = 0;
  let staleHits = 0;
  let euro = 0;
  let atRisk = 0;
  for (const c of calls) {
    if (c.source === 'upstream') {
      upstreamCalls++;
      euro += c.euro;
      atRisk += c.atRisk ?? 0;
    } else if (c.source === 'cache') cacheHits++;
    else if (c.source === 'stale') staleHits++;
    else dedupHits++;
  }
  return { upstreamCalls, cacheHits, dedupHits, staleHits, euro: round4(euro), atRisk: round4(atRisk), calls };
}

/**
 * Merges summaries (the gateway adds up its subgraphs' meters). The budgets are read from the one
 * shared ledger: the lowest remaining (the latest reading) is kept.
 */
export function mergeSummaries(parts: CostSummary[]): CostSummary {
  const out = summarize(parts.flatMap((p) => p.calls));
  // Free tiers: per endpoint and period, the latest reading (the most used).
  const free = new Map<string, FreeTierState>();
  for (const p of parts) {
    for (const f of p.freeTier ?? []) {
      const k = `${f.endpoint}|${f.period}`;
      const seen = free.get(k);
      if (!seen || f.used > seen.used) free.set(k, { ...f });
    }
  }
  if (free.size > 0) out.freeTier = [...free.values()];
  for (const p of parts) {
    if (!p.budget) continue;
    if (!out.budget) out.budget = { operation: { ...p.budget.operation }, day: { ...p.budget.day } };
    else {
      for (const scope of ['operation', 'day'] as const) {
        if (p.budget[scope].committed > out.budget[scope].committed) out.budget[scope] = { ...p.budget[scope] };
      }
    }
  }
  return out;
}
