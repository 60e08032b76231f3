/**
 * The company loader: one per request, keyed by (company, facets). No GraphQL here: resolvers turn
 * selections into facets (`selection.ts`) and ask for them.
 *
 * The batch function groups the keys per company (same VAT number, tax code or id), unions their
 * facets, and buys the set of sources with the least total euro covering them (`planPurchase`:
 * tiers and single-purpose endpoints); the calls for one company run in parallel, and every key of
 * that company is answered from what is then known. A per-request record of what each company was
 * already bought with (`CompanyPurchases`) answers later keys whose facets are covered without
 * another call, and purchases still in flight count as covering what they will hold, so an
 * operation never buys the same source of a company twice. Repeated operations are answered by the
 * upstream client's cache: the same source and identifier make the same cache key, which is why the
 * VAT number is used whenever it is known; before planning, the loader asks which sources are
 * cached for the company, and counts them as free.
 *
 * Precedence between answers goes by the source's rank (`SOURCE_RANK`), not by arrival.
 *
 * Failures stay with the keys they concern: after a purchase fails, a key whose facets are covered
 * (by what was bought before or beside the failed source) is answered, and only the others get the
 * error. A purchase refused by the operation's euro budget is retried key by key, cheapest first,
 * so the keys that fit are still answered.
 */
import DataLoader from 'dataloader';
import type { SubgraphContext } from '../runtime/context.ts';
import { CostLimitError } from '../upstream/cost.ts';
import { UpstreamError } from '../upstream/errors.ts';
import {
  covers,
  isTier,
  planCost,
  planPurchase,
  SEED_RANK,
  SOURCE_ACCEPTS,
  SOURCE_COVERAGE,
  SOURCE_ENDPOINT,
  SOURCE_RANK,
  SOURCES,
  type Facet,
  type IdentifierKind,
  type Source,
  type Tier,
} from './facets.ts';
import type { CompanyModel } from './model.ts';
import { mergeModels, normalizeComposite, normalizeItAdvanced, normalizeItStart } from './normalize.ts';
import { normalizeSinglePurpose } from './normalize-extra.ts';
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

/** Where a piece of data came from: a purchasable source, or search results. */
export type CompanySource = Source | 'search';

const aliasOf = (v: string | null | undefined): string | null => {
  const s = typeof v === 'string' ? v.trim().toUpperCase() : '';
  return s === '' ? null : s;
};

/** One answer recorded for a company, with what decides its precedence. */
interface Part {
  model: CompanyModel;
  rank: number;
  /** Between sources of the same rank: the later one in the source table. */
  tie: number;
  /** Between answers of the same source: the newer one. */
  seq: number;
}

export interface Entry {
  vatCode: string | null;
  taxCode: string | null;
  id: string | null;
  /** Every answer recorded, highest precedence first; `model` is their merge. */
  parts: Part[];
  model: CompanyModel;
  covered: Set<Facet>;
  /** Purchases under way for this company: a need they will cover waits for them instead of buying again. */
  inflight: Map<Source, Promise<Error | null>>;
  /**
   * A not-found failure of a purchase in this request: a later need of the same company fails the
   * same way without another call (a company that is not found is not found by any source). Other
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
      entry = { vatCode: null, taxCode: null, id: null, parts: [], model: {}, covered: new Set(), inflight: new Map(), failure: null };
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
   * source's rank (`SOURCE_RANK`), not by arrival: a lower-ranked answer only fills what the
   * higher-ranked ones lack, leaf by leaf.
   */
  record(entry: Entry, model: CompanyModel, covered: Iterable<Facet>, source: CompanySource): void {
    const part: Part =
      source === 'search' ? { model, rank: SEED_RANK, tie: -1, seq: this.seq++ } : { model, rank: SOURCE_RANK[source], tie: SOURCES.indexOf(source), seq: this.seq++ };
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

/** The identifier kinds known for a company. */
export function knownKinds(entry: Pick<Entry, 'vatCode' | 'taxCode' | 'id'>): Set<IdentifierKind> {
  const out = new Set<IdentifierKind>();
  if (entry.vatCode) out.add('vatCode');
  if (entry.taxCode) out.add('taxCode');
  if (entry.id) out.add('id');
  return out;
}

/**
 * The identifier a source is called with: the VAT number when it accepts it and it is known (one
 * cache key per company and source), else the tax code, else the Openapi id; null when none fits.
 */
export function identifierFor(entry: Pick<Entry, 'vatCode' | 'taxCode' | 'id'>, source: Source): string | null {
  const accepts = SOURCE_ACCEPTS[source];
  if (entry.vatCode && accepts.has('vatCode')) return entry.vatCode;
  if (entry.taxCode && accepts.has('taxCode')) return entry.taxCode;
  if (entry.id && accepts.has('id')) return entry.id;
  return null;
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

/** Normalizes any source's answer. */
export function normalizeSource(source: Source, data: unknown, identifier: string): CompanyModel {
  return isTier(source) ? normalizeTier(source, data, identifier) : normalizeSinglePurpose(source, data, identifier);
}

async function buySource(ctx: SubgraphContext, record: CompanyPurchases, entry: Entry, source: Source): Promise<void> {
  const identifier = identifierFor(entry, source);
  if (!identifier) throw new Error(`company loader: no identifier usable with ${source}`);
  const data = await buyCompanyData<unknown>(ctx, SOURCE_ENDPOINT[source], { params: { id: identifier } });
  record.record(entry, normalizeSource(source, data, identifier), SOURCE_COVERAGE[source], source);
}

/** The sources the upstream client has cached for a company (asked only for those callable now). */
async function cachedSources(ctx: SubgraphContext, entry: Entry, candidates: readonly Source[]): Promise<Set<Source>> {
  const hits = await Promise.all(
    candidates.map((s) => {
      const id = identifierFor(entry, s);
      return id ? ctx.upstream.isCached(ctx, SOURCE_ENDPOINT[s], { params: { id } }).catch(() => false) : Promise.resolve(false);
    }),
  );
  return new Set(candidates.filter((_, i) => hits[i]));
}

/**
 * The plan for what a company lacks: the least-euro set of sources, counting those already in the
 * upstream client's cache as free, with the identifiers known.
 */
async function cheapestPlan(ctx: SubgraphContext, entry: Entry, missing: readonly Facet[], exclude: ReadonlySet<Source>): Promise<Source[]> {
  const known = knownKinds(entry);
  const allowed = SOURCES.filter((s) => !exclude.has(s));
  const candidates = allowed.filter((s) => [...SOURCE_COVERAGE[s]].some((f) => missing.includes(f)));
  const cached = await cachedSources(ctx, entry, candidates);
  return planPurchase(missing, { known, cached, allowed });
}

/**
 * Starts the purchases of a plan, in parallel: the sources callable with the identifiers known at
 * once, the others (which need a key one of the first tells) when the first have answered.
 */
function startPlan(ctx: SubgraphContext, record: CompanyPurchases, entry: Entry, plan: readonly Source[]): Promise<Error | null>[] {
  const direct = plan.filter((s) => identifierFor(entry, s) !== null);
  const later = plan.filter((s) => !direct.includes(s));
  const run = (s: Source, after: Promise<unknown>): Promise<Error | null> => {
    const p = after
      .then(() => buySource(ctx, record, entry, s))
      .then(
        () => null,
        (err: unknown) => asError(err),
      );
    entry.inflight.set(s, p);
    void p.then(() => {
      if (entry.inflight.get(s) === p) entry.inflight.delete(s);
    });
    return p;
  };
  const first = direct.map((s) => run(s, Promise.resolve()));
  const firstDone = Promise.all(first);
  return [...first, ...later.map((s) => run(s, firstDone))];
}

const missingOf = (entry: Entry, need: Iterable<Facet>): Facet[] => [...need].filter((f) => !entry.covered.has(f));

/**
 * Buys what `entry` lacks of `need`: purchases already in flight for the company are awaited
 * rather than repeated, and the cheapest plan buys the rest, its calls in parallel. Resolves to
 * the failure, if any (what was bought is recorded anyway).
 */
async function complete(ctx: SubgraphContext, record: CompanyPurchases, entry: Entry, need: Iterable<Facet>): Promise<Error | null> {
  const missing = missingOf(entry, need);
  if (missing.length === 0) return null;
  if (entry.failure) return entry.failure;
  // What purchases under way will hold.
  const waiting: Promise<Error | null>[] = [];
  const coming = new Set<Facet>();
  for (const [s, p] of entry.inflight) {
    if (!missing.some((f) => SOURCE_COVERAGE[s].has(f))) continue;
    waiting.push(p);
    for (const f of SOURCE_COVERAGE[s]) coming.add(f);
  }
  const rest = missing.filter((f) => !coming.has(f));
  if (rest.length > 0) {
    let plan: Source[];
    try {
      plan = await cheapestPlan(ctx, entry, rest, new Set(entry.inflight.keys()));
    } catch (err) {
      return asError(err);
    }
    waiting.push(...startPlan(ctx, record, entry, plan));
  }
  const outcomes = await Promise.all(waiting);
  const failure = outcomes.find((o): o is Error => o !== null) ?? null;
  if (failure && isNotFound(failure)) entry.failure = failure;
  return failure;
}

/** Euro the cheapest plan for what `entry` lacks of `need` would cost. */
function priceOfNeed(entry: Entry, need: Iterable<Facet>): number {
  try {
    return planCost(planPurchase(missingOf(entry, need), { known: knownKinds(entry) })).euro;
  } catch {
    return Number.POSITIVE_INFINITY;
  }
}

/** Answers the keys of one company: one plan for their union, key by key when it is over budget. */
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
      const results = new Array<CompanyLoadResult | Error>(keys.length);
      await Promise.all(
        [...groups].map(async ([entry, indexes]) => {
          try {
            const answers = await serveCompany(
              ctx,
              record,
              entry,
              indexes.map((i) => keys[i]),
            );
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
