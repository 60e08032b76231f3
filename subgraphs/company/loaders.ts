/**
 * The company loader: one per request, keyed by (company, facets). No GraphQL here: resolvers turn
 * selections into facets (`selection.ts`) and ask for them.
 *
 * The batch function groups the keys per company (same VAT number, tax code or id), unions their
 * facets, and buys the single cheapest tier covering them (`planPurchase`); every key of that
 * company is answered from it. A per-request record of what each company was already bought with
 * (`CompanyPurchases`) answers later keys whose facets are covered without another call, so an
 * operation makes one upstream call per distinct company. Repeated operations are answered by the
 * upstream client's cache: the same tier and identifier make the same cache key, which is why the
 * VAT number is used whenever it is known.
 */
import DataLoader from 'dataloader';
import type { SubgraphContext } from '../runtime/context.ts';
import { UpstreamError } from '../upstream/errors.ts';
import { covers, planPurchase, TIER_COVERAGE, TIER_ENDPOINT, TIERS_ACCEPTING_ID, type Facet, type Tier } from './facets.ts';
import type { CompanyModel } from './model.ts';
import { mergeModels, normalizeComposite, normalizeItAdvanced, normalizeItStart } from './normalize.ts';
import type { VComposite, VItAdvanced } from './upstream.ts';

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

const aliasOf = (v: string | null | undefined): string | null => {
  const s = typeof v === 'string' ? v.trim().toUpperCase() : '';
  return s === '' ? null : s;
};

interface Entry {
  vatCode: string | null;
  taxCode: string | null;
  id: string | null;
  model: CompanyModel;
  covered: Set<Facet>;
  /** Purchases for one company run one after the other, so a later one sees what an earlier bought. */
  tail: Promise<void>;
  /**
   * The failure of a purchase in this request: a later need of the same company fails the same way
   * without another call (a company that is not found is not found by any tier).
   */
  failure: Error | null;
}

/** Per-request record of the companies bought and what with. */
export class CompanyPurchases {
  private readonly byAlias = new Map<string, Entry>();

  /** The entry of a company, created when none of its keys is known yet. */
  entryFor(ref: CompanyRef): Entry {
    let entry: Entry | undefined;
    for (const k of [ref.vatCode, ref.taxCode, ref.id]) {
      const a = aliasOf(k);
      if (a && (entry = this.byAlias.get(a))) break;
    }
    if (!entry) {
      entry = { vatCode: null, taxCode: null, id: null, model: {}, covered: new Set(), tail: Promise.resolve(), failure: null };
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

  /** Records data bought (or received, e.g. search results) for a company. */
  record(entry: Entry, model: CompanyModel, covered: Iterable<Facet>, primary: boolean): void {
    entry.model = primary ? mergeModels(model, entry.model) : mergeModels(entry.model, model);
    for (const f of covered) entry.covered.add(f);
    this.learn(entry, { vatCode: model.vatCode, taxCode: model.taxCode, id: model.id });
  }

  /** Seeds the record with data obtained outside the loader (search results). */
  seed(model: CompanyModel, covered: Iterable<Facet>): void {
    this.record(this.entryFor({ vatCode: model.vatCode, taxCode: model.taxCode, id: model.id }), model, covered, false);
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
  const data = await ctx.upstream.call<unknown>(ctx, TIER_ENDPOINT[tier], { params: { id: identifier } });
  record.record(entry, normalizeTier(tier, data, identifier), TIER_COVERAGE[tier], true);
}

/** Buys what `entry` lacks of `need`: the cheapest plan, id-accepting tiers first. */
async function complete(ctx: SubgraphContext, record: CompanyPurchases, entry: Entry, need: ReadonlySet<Facet>): Promise<void> {
  const missing = [...need].filter((f) => !entry.covered.has(f));
  if (missing.length === 0) return;
  if (entry.failure) throw entry.failure;
  const plan = planPurchase(missing, { byIdOnly: !entry.vatCode && !entry.taxCode });
  try {
    const [first, ...rest] = plan;
    if (first === undefined) return;
    if (!entry.vatCode && !entry.taxCode) {
      // Known by id only: the first tier (start/advanced) tells the VAT number the others need.
      await buyTier(ctx, record, entry, first);
      await Promise.all(rest.map((t) => buyTier(ctx, record, entry, t)));
    } else {
      await Promise.all(plan.map((t) => buyTier(ctx, record, entry, t)));
    }
  } catch (err) {
    entry.failure = err instanceof Error ? err : new Error(String(err));
    throw entry.failure;
  }
}

function createCompanyLoader(ctx: SubgraphContext, record: CompanyPurchases): DataLoader<CompanyLoadKey, CompanyLoadResult, string> {
  return new DataLoader<CompanyLoadKey, CompanyLoadResult, string>(
    async (keys) => {
      // Group keys per company and union their facets.
      const groups = new Map<Entry, { need: Set<Facet>; indexes: number[] }>();
      keys.forEach((key, i) => {
        const entry = record.entryFor(key.ref);
        let g = groups.get(entry);
        if (!g) groups.set(entry, (g = { need: new Set(), indexes: [] }));
        for (const f of key.facets) g.need.add(f);
        g.indexes.push(i);
      });
      const results: (CompanyLoadResult | Error)[] = new Array(keys.length);
      await Promise.all(
        [...groups].map(async ([entry, g]) => {
          const run = entry.tail.then(() => complete(ctx, record, entry, g.need));
          entry.tail = run.catch(() => undefined);
          try {
            await run;
            for (const i of g.indexes) {
              const key = keys[i] as CompanyLoadKey;
              results[i] = covers(entry.covered, key.facets)
                ? { model: entry.model, covered: new Set(entry.covered) }
                : new Error(`company loader: facets ${[...key.facets].filter((f) => !entry.covered.has(f)).join(', ')} not bought`);
            }
          } catch (err) {
            for (const i of g.indexes) results[i] = err instanceof Error ? err : new Error(String(err));
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

/** Loads what a company lacks of `facets` (nothing when the request already bought it). */
export function loadCompany(ctx: SubgraphContext, ref: CompanyRef, facets: ReadonlySet<Facet>): Promise<CompanyLoadResult> {
  return companyLoader(ctx).load({ ref, facets });
}
