/**
 * The emulator's free tiers (the contract's, `contract/prices.ts`): per account (the token's owner)
 * and endpoint scope, calls counted in the current day, month or year of the emulator's clock; a
 * call inside every tier of its endpoint is not charged to the wallet. Every authorised call counts
 * (the vendor's per-scope counters count requests, paid or not).
 */
import type { Area } from '../contract/areas.ts';
import { freeTierOf, periodOf } from '../contract/prices.ts';

export class FreeTierCounters {
  private readonly counts = new Map<string, number>();

  constructor(private readonly now: () => number) {}

  /** Counts one call; true when it is free. False for endpoints without a free tier. */
  claim(account: string, area: Area, method: string, path: string): boolean {
    const tier = freeTierOf(area, method, path);
    if (!tier) return false;
    const now = this.now();
    let free = true;
    for (const t of tier.tiers) {
      const key = `${account}|${tier.key}|${t.period}:${periodOf(t.period, now)}`;
      const n = (this.counts.get(key) ?? 0) + 1;
      this.counts.set(key, n);
      if (n > t.calls) free = false;
    }
    if (this.counts.size > 200_000) this.counts.clear();
    return free;
  }

  /** Calls counted for an account's endpoint in the current period of each of its tiers (for the account area's stats). */
  used(account: string, area: Area, method: string, path: string): Array<{ period: string; limit: number; used: number }> {
    const tier = freeTierOf(area, method, path);
    if (!tier) return [];
    const now = this.now();
    return tier.tiers.map((t) => ({ period: t.period, limit: t.calls, used: this.counts.get(`${account}|${tier.key}|${t.period}:${periodOf(t.period, now)}`) ?? 0 }));
  }
}
