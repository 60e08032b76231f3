/**
 * The company loader: one per request, keyed by (company, facets). No GraphQL here: resolvers turn
 * selections into facets (`selection.ts`) and ask for them.
 *
 * The batch function groups the keys per company (same VAT number, tax code or id), unions their
 * facets, and buys the single cheapest tier covering them (`planPurchase`); every key of that
 * company is answered from what is then known. A per-request record of what each company was
 * already bought with (`CompanyPurchases`) answers later keys whose facets are covered without
 * another call, so an operation makes one upstream call per distinct company. Repeated operations
 * are answered by the upstream client's cache: the same tier and identifier make the same cache
 * key, which is why the VAT number is used whenever it is known, and before planning a purchase
 * the loader asks which tiers are cached for the company, and uses them when they cover the need.
 *
 * Failures stay with the keys they concern: after a purchase fails, a key whose facets are covered
 * (by what was bought before or beside the failed tier) is answered, and only the others get the
 * error. A purchase refused by the operation's euro budget is retried key by key, cheapest first,
 * so the keys that fit are still answered.
 */
import DataLoader from 'dataloader';
import type { SubgraphContext } from '../runtime/context.ts';
import { CostLimitError } from '../upstream/cost.ts';
import { UpstreamError } from '../upstream/errors.ts';
import {
  covers,
  planPurchase,
  SEED_RANK,
  TIER_COVERAGE,
  TIER_ENDPOINT,
  TIER_RANK,
  TIERS,
  TIERS_ACCEPTING_ID,
  tierPrice,
  type Facet,
  type Tier,
} from './facets.ts';
import type { CompanyModel } from './model.ts';
import { mergeModels, normalizeComposite, normalizeItAdvanced, normalizeItStart } from './normalize.ts';
import type { VComposite, VItAdvanced } from './upstream.ts';
import { buyCompanyData } from './slow-purchase.ts';

/** How a company is identified: any of its keys (at least one). */
export interface CompanyRef {
  vatCode?: string | null;
  taxCode?: string | null;
  id?: string | null;
}

export interface CompanyLoadKey {
  ref: CompanyRef;
  /** What the caller needs. */
  facets: ReadonlySet<Facet>;
}

/** What is known of a company after a load: every purchase merged, and the facets they cover. */
export interface CompanyLoadResult {
  model: CompanyModel;
  covered: ReadonlySet<Facet>;
}

/** Where a piece of data came from: a tier, or search results. */
export type CompanySource = Tier | 'search';

const aliasOf = (v: string | null | undefined): string | null => {
  const s = typeof v === 'string' ? v.trim().toUpperCase() : '';
  return s === '' ? null : s;
};

/** One answer recorded for a company, with what decides its precedence. */
interface Part {
  model: CompanyModel;
  rank: number;
  /** Between tiers of the same rank: the later one in the tier table. */
  tie: number;
  /** Between answers of the same source: the newer one. */
  seq: number;
}

interface Entry {
  vatCode: string | null;
  taxCode: string | null;
  id: string | null;
  /** Every answer recorded, highest precedence first; `model` is their merge. */
  parts: Part[];
  model: CompanyModel;
  covered: Set<Facet>;
  /** Purchases for one company run one after the other, so a later one sees what an earlier bought. */
  tail: Promise<void>;
  /**
   * A not-found failure of a purchase in this request: a later need of the same company fails the
   * same way without another call (a company that is not found is not found by any tier). Other
   * failures (timeouts, unavailability, the euro budget) are not remembered: a later need retries.
   */
  failure: Error | null;
}

const isNotFound = (err: Error): boolean => err instanceof UpstreamError && err.graphqlCode === 'UPSTREAM_NOT_FOUND';

const asError = (err: unknown): Error => (err instanceof Error ? err : new Error(String(err)));

/** Per-request record of the companies bought and what with. */
export class CompanyPurchases {
  private readonly byAlias = new Map<string, Entry>();
  private seq = 0;

  /** The entry of a company, created when none of its keys is known yet. */
  entryFor(ref: CompanyRef): Entry {
    let entry: Entry | undefined;
    for (const k of [ref.vatCode, ref.taxCode, ref.id]) {
      const a = aliasOf(k);
      if (a && (entry = this.byAlias.get(a))) break;
    }
    if (!entry) {
      entry = { vatCode: null, taxCode: null, id: null, parts: [], model: {}, covered: new Set(), tail: Promise.resolve(), failure: null };
    }
    this.learn(entry, ref);
    return entry;
  }

  /** Registers keys of a company (from a lookup or from a payload). */
  private learn(entry: Entry, ref: CompanyRef): void {
    entry.vatCode ??= aliasOf(ref.vatCode);
    entry.taxCode ??= aliasOf(ref.taxCode);
    entry.id ??= typeof ref.id === 'string' && ref.id.trim() !== '' ? ref.id.trim().toLowerCase() : null;
    for (const k of [ref.vatCode, ref.taxCode, ref.id]) {
      const a = aliasOf(k);
      if (a && !this.byAlias.has(a)) this.byAlias.set(a, entry);
    }
  }

  /**
   * Records data bought (or received, e.g. search results) for a company. Precedence goes by the
   * source's rank (`TIER_RANK`), not by arrival: a lower-ranked answer only fills what the
   * higher-ranked ones lack, leaf by leaf.
   */
  record(entry: Entry, model: CompanyModel, covered: Iterable<Facet>, source: CompanySource): void {
    const part: Part =
      source === 'search'
        ? { model, rank: SEED_RANK, tie: -1, seq: this.seq++ }
        : { model, rank: TIER_RANK[source], tie: TIERS.indexOf(source), seq: this.seq++ };
    entry.parts.push(part);
    entry.parts.sort((a, b) => b.rank - a.rank || b.tie - a.tie || b.seq - a.seq);
    entry.model = entry.parts.reduce<CompanyModel>((merged, p) => mergeModels(merged, p.model), {});
    for (const f of covered) entry.covered.add(f);
    this.learn(entry, { vatCode: model.vatCode, taxCode: model.taxCode, id: model.id });
  }

  /** Seeds the record with data obtained outside the loader (search results). */
  seed(model: CompanyModel, covered: Iterable<Facet>): void {
    this.record(this.entryFor({ vatCode: model.vatCode, taxCode: model.taxCode, id: model.id }), model, covered, 'search');
  }
}

/** The identifier a tier is called with: the VAT number when known (one cache key per company and tier). */
function identifierFor(entry: Entry, tier: Tier): string {
  const id = entry.vatCode ?? entry.taxCode ?? (TIERS_ACCEPTING_ID.has(tier) ? entry.id : null);
  if (!id) throw new Error(`company loader: no identifier usable with ${tier}`);
  return id;
}

/** The element of a start/advanced answer that is the company asked for. */
function pickRecord(data: unknown, identifier: string, tier: Tier): VItAdvanced {
  const list = Array.isArray(data) ? (data as unknown[]) : data && typeof data === 'object' ? [data] : [];
  const records = list.filter((x): x is VItAdvanced => !!x && typeof x === 'object');
  const wanted = identifier.toUpperCase();
  const match = records.find((r) => [r.vatCode, r.taxCode, r.id].some((k) => typeof k === 'string' && k.toUpperCase() === wanted));
  const found = match ?? records[0];
  if (!found) throw new UpstreamError('http', `no company matches ${identifier}`, 'company', tier, 404);
  return found;
}

/** Normalizes a tier's answer. */
export function normalizeTier(tier: Tier, data: unknown, identifier: string): CompanyModel {
  if (tier === 'IT-start') return normalizeItStart(pickRecord(data, identifier, tier));
  if (tier === 'IT-advanced') return normalizeItAdvanced(pickRecord(data, identifier, tier));
  const obj = Array.isArray(data) ? (data as unknown[])[0] : data;
  if (!obj || typeof obj !== 'object') throw new UpstreamError('http', `no company matches ${identifier}`, 'company', tier, 404);
  return normalizeComposite(obj as VComposite);
}

async function buyTier(ctx: SubgraphContext, record: CompanyPurchases, entry: Entry, tier: Tier): Promise<void> {
  const identifier = identifierFor(entry, tier);
  const data = await buyCompanyData<unknown>(ctx, TIER_ENDPOINT[tier], { params: { id: identifier } });
  record.record(entry, normalizeTier(tier, data, identifier), TIER_COVERAGE[tier], tier);
}

/**
 * The plan for what a company lacks: tiers already in the upstream client's cache are free, so the
 * cheapest combination of cached tiers and a purchase for the rest wins (on a tie: fewer paid calls,
 * then fewer tiers, then the fuller ones). Without cached tiers, or for a company known only by id (tiers are called with
 * the VAT number), it is `planPurchase`.
 */
async function cheapestPlan(ctx: SubgraphContext, entry: Entry, missing: readonly Facet[]): Promise<Tier[]> {
  const byIdOnly = !entry.vatCode && !entry.taxCode;
  const fresh = planPurchase(missing, { byIdOnly });
  if (byIdOnly) return fresh;
  const hits = await Promise.all(
    TIERS.map((tier) => ctx.upstream.isCached(ctx, TIER_ENDPOINT[tier], { params: { id: identifierFor(entry, tier) } }).catch(() => false)),
  );
  const cached = new Set(TIERS.filter((_, i) => hits[i]));
  if (cached.size === 0) return fresh;
  const paidOf = (tiers: readonly Tier[]): Tier[] => tiers.filter((t) => !cached.has(t));
  const euroOf = (tiers: readonly Tier[]): number => paidOf(tiers).reduce((sum, t) => sum + tierPrice(t), 0);
  const rankOf = (tiers: readonly Tier[]): number => tiers.reduce((sum, t) => sum + TIER_RANK[t], 0);
  let best = { tiers: fresh, euro: euroOf(fresh), paid: paidOf(fresh).length, rank: rankOf(fresh) };
  const list = [...cached];
  for (let mask = 1; mask < 1 << list.length; mask++) {
    const free = list.filter((_, i) => mask & (1 << i));
    const have = new Set(free.flatMap((t) => [...TIER_COVERAGE[t]]));
    const rest = missing.filter((f) => !have.has(f));
    const tiers = [...new Set([...free, ...(rest.length > 0 ? planPurchase(rest) : [])])];
    const euro = euroOf(tiers);
    const paid = paidOf(tiers).length;
    const rank = rankOf(tiers);
    const better =
      euro < best.euro - 1e-9 ||
      (Math.abs(euro - best.euro) < 1e-9 && (paid < best.paid || (paid === best.paid && (tiers.length < best.tiers.length || (tiers.length === best.tiers.length && rank > best.rank)))));
    if (better) best = { tiers, euro, paid, rank };
  }
  return best.tiers;
}

/** Calls the tiers of a plan; resolves, once every call has settled, to the first failure or null. */
async function buyPlan(ctx: SubgraphContext, record: CompanyPurchases, entry: Entry, plan: readonly Tier[]): Promise<Error | null> {
  let rest = plan;
  if (!entry.vatCode && !entry.taxCode) {
    // Known by id only: the first tier (start/advanced) tells the VAT number the others need.
    const [first, ...others] = plan;
    if (first === undefined) return null;
    try {
      await buyTier(ctx, record, entry, first);
    } catch (err) {
      return asError(err);
    }
    rest = others;
  }
  const settled = await Promise.allSettled(rest.map((t) => buyTier(ctx, record, entry, t)));
  const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  return failed ? asError(failed.reason) : null;
}

const missingOf = (entry: Entry, need: Iterable<Facet>): Facet[] => [...need].filter((f) => !entry.covered.has(f));

/**
 * Buys what `entry` lacks of `need`: the cheapest plan, counting tiers already cached as free,
 * id-accepting tiers first. Resolves to the failure, if any (what was bought is recorded anyway).
 */
async function complete(ctx: SubgraphContext, record: CompanyPurchases, entry: Entry, need: Iterable<Facet>): Promise<Error | null> {
  const missing = missingOf(entry, need);
  if (missing.length === 0) return null;
  if (entry.failure) return entry.failure;
  let plan: Tier[];
  try {
    plan = await cheapestPlan(ctx, entry, missing);
  } catch (err) {
    return asError(err);
  }
  const failure = await buyPlan(ctx, record, entry, plan);
  if (failure && isNotFound(failure)) entry.failure = failure;
  return failure;
}

/** Euro the cheapest plan for what `entry` lacks of `need` would cost. */
function priceOfNeed(entry: Entry, need: Iterable<Facet>): number {
  try {
    return planPurchase(missingOf(entry, need), { byIdOnly: !entry.vatCode && !entry.taxCode }).reduce((sum, t) => sum + tierPrice(t), 0);
  } catch {
    return Number.POSITIVE_INFINITY;
  }
}

/** Answers the keys of one company: one purchase for their union, key by key when it is over budget. */
async function serveCompany(ctx: SubgraphContext, record: CompanyPurchases, entry: Entry, keys: readonly CompanyLoadKey[]): Promise<(CompanyLoadResult | Error)[]> {
  const need = new Set<Facet>();
  for (const key of keys) for (const f of key.facets) need.add(f);
  const failure = await complete(ctx, record, entry, need);
  const perKey = new Map<CompanyLoadKey, Error>();
  if (failure instanceof CostLimitError && keys.length > 1) {
    // The union is over budget: the keys one by one, cheapest first, so those that fit are answered.
    const pending = new Set(keys.filter((k) => !covers(entry.covered, k.facets)));
    while (pending.size > 0) {
      let next: CompanyLoadKey | null = null;
      let nextPrice = Number.POSITIVE_INFINITY;
      for (const k of pending) {
        const price = priceOfNeed(entry, k.facets);
        if (next === null || price < nextPrice) [next, nextPrice] = [k, price];
      }
      if (next === null) break;
      pending.delete(next);
      const err = await complete(ctx, record, entry, next.facets);
      if (err) perKey.set(next, err);
      for (const k of pending) if (covers(entry.covered, k.facets)) pending.delete(k);
    }
  }
  return keys.map((key) => {
    if (covers(entry.covered, key.facets)) return { model: entry.model, covered: new Set(entry.covered) };
    return perKey.get(key) ?? failure ?? new Error(`company loader: facets ${missingOf(entry, key.facets).join(', ')} not bought`);
  });
}

function createCompanyLoader(ctx: SubgraphContext, record: CompanyPurchases): DataLoader<CompanyLoadKey, CompanyLoadResult, string> {
  return new DataLoader<CompanyLoadKey, CompanyLoadResult, string>(
    async (keys) => {
      // Group keys per company.
      const groups = new Map<Entry, number[]>();
      keys.forEach((key, i) => {
        const entry = record.entryFor(key.ref);
        const g = groups.get(entry);
        if (g) g.push(i);
        else groups.set(entry, [i]);
      });
      const results: (CompanyLoadResult | Error)[] = new Array(keys.length);
      await Promise.all(
        [...groups].map(async ([entry, indexes]) => {
          const run = entry.tail.then(() => serveCompany(ctx, record, entry, indexes.map((i) => keys[i] as CompanyLoadKey)));
          entry.tail = run.then(
            () => undefined,
            () => undefined,
          );
          try {
            const answers = await run;
            indexes.forEach((i, j) => (results[i] = answers[j] ?? new Error('company loader: no answer')));
          } catch (err) {
            for (const i of indexes) results[i] = asError(err);
          }
        }),
      );
      return results;
    },
    {
      cacheKeyFn: (key) => `${aliasOf(key.ref.vatCode) ?? ''}|${aliasOf(key.ref.taxCode) ?? ''}|${aliasOf(key.ref.id) ?? ''}|${[...key.facets].sort().join(',')}`,
    },
  );
}

/** The request's record of company purchases. */
export const companyPurchases = (ctx: SubgraphContext): CompanyPurchases => ctx.once('company:purchases', () => new CompanyPurchases());

/** The request's company loader. */
export const companyLoader = (ctx: SubgraphContext): DataLoader<CompanyLoadKey, CompanyLoadResult, string> =>
  ctx.once('company:loader', () => createCompanyLoader(ctx, companyPurchases(ctx)));

/**
 * Loads what a company lacks of `facets` (nothing when the request already bought it). A failure
 * other than not-found is not memoized by the loader: a later need in the request tries again.
 */
export async function loadCompany(ctx: SubgraphContext, ref: CompanyRef, facets: ReadonlySet<Facet>): Promise<CompanyLoadResult> {
  const loader = companyLoader(ctx);
  const key: CompanyLoadKey = { ref, facets };
  try {
    return await loader.load(key);
  } catch (err) {
    if (!(err instanceof Error && isNotFound(err))) loader.clear(key);
    throw err;
  }
}
