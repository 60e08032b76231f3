/**
 * The cost meter of one GraphQL operation: every upstream call made, every call answered by the
 * cache or by in-flight de-duplication, and the euro spent. Subgraphs put it in
 * `extensions.cost`; the gateway sums the subgraphs' meters into the client's response.
 */
import type { Area } from '../../emulator/core.ts';

export interface CostCall {
  area: Area;
  method: string;
  /** Path without query, tokens never included. */
  path: string;
  /** HTTP status of the final attempt (0 when no answer arrived). */
  status: number;
  euro: number;
  ms: number;
  /** How it was answered: `upstream` (paid or free call made), `cache`, `dedup`. */
  source: 'upstream' | 'cache' | 'dedup';
}

/** What `extensions.cost` holds. */
export interface CostSummary {
  /** Calls sent to the REST suite (every attempt, retries and polls included). */
  upstreamCalls: number;
  /** Calls answered from the per-tenant cache. */
  cacheHits: number;
  /** Calls that joined an identical call already in flight. */
  dedupHits: number;
  /** Euro spent by this operation, rounded to 1/10000. */
  euro: number;
  calls: CostCall[];
}

/** A paid call refused because it would take the operation past its euro budget. */
export class CostLimitError extends Error {
  override readonly name = 'CostLimitError';
  constructor(
    readonly budget: number,
    readonly committed: number,
    readonly price: number,
    readonly endpoint: string,
  ) {
    super(`this operation would spend more than its budget of €${budget} (€${round4(committed)} committed, ${endpoint} costs €${price})`);
  }
}

export class CostMeter {
  readonly calls: CostCall[] = [];
  private committed = 0;

  /** @param budget euro this operation may spend upstream; null for no limit. */
  constructor(readonly budget: number | null = null) {}

  record(call: CostCall): void {
    this.calls.push(call);
  }

  /** Commits `price` before a call is sent; throws `CostLimitError` when it would pass the budget. */
  reserve(price: number, endpoint: string): void {
    if (price <= 0) return;
    if (this.budget !== null && this.committed + price > this.budget + 1e-9) throw new CostLimitError(this.budget, this.committed, price, endpoint);
    this.committed += price;
  }

  /** Gives back a reservation whose call was not charged (an error answer, no answer). */
  release(price: number): void {
    if (price > 0) this.committed = Math.max(0, this.committed - price);
  }

  summary(): CostSummary {
    return summarize(this.calls);
  }
}

export const round4 = (n: number): number => Math.round(n * 10000) / 10000;

export function summarize(calls: CostCall[]): CostSummary {
  let upstreamCalls = 0;
  let cacheHits = 0;
  let dedupHits = 0;
  let euro = 0;
  for (const c of calls) {
    if (c.source === 'upstream') {
      upstreamCalls++;
      euro += c.euro;
    } else if (c.source === 'cache') cacheHits++;
    else dedupHits++;
  }
  return { upstreamCalls, cacheHits, dedupHits, euro: round4(euro), calls };
}

/** Merges summaries (the gateway adds up its subgraphs' meters). */
export function mergeSummaries(parts: CostSummary[]): CostSummary {
  return summarize(parts.flatMap((p) => p.calls));
}
