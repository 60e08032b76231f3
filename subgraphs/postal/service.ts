/**
 * The postal area's reads: each upstream answer at most once per request (`ctx.once`), every one
 * cached for days and shared by every tenant by the upstream client (`publicData` endpoints).
 */
import type { SubgraphContext } from '../runtime/context.ts';
import { orNull } from '../upstream/errors.ts';
import type { CallOptions } from '../upstream/upstream.ts';
import type { Endpoint } from '../upstream/endpoint.ts';
import { istat6, POSTAL, type AdvanceInfo, type BaseInfo, type ProvinceInfo, type RegionInfo, type SearchItem } from './upstream.ts';
import type { MunicipalityParent } from './mappers.ts';
import { fold } from '../../contract/istat.ts';

/** `cerca_comuni` filters, in the vendor's parameter names. */
export interface SearchFilters {
  comune?: string | null;
  cap?: string | null;
  istat?: string | null;
  codice_catasto?: string | null;
  regione?: string | null;
  provincia?: string | null;
}

/** Name matching folds case, accents and punctuation as the emulator does (`contract/istat.ts`). */
export { fold };

function call<T>(ctx: SubgraphContext, ep: Endpoint, opts: CallOptions = {}): Promise<T> {
  return ctx.once(`postal|${ep.path}|${JSON.stringify(opts)}`, () => ctx.upstream.call<T>(ctx, ep, opts));
}

/** Drops empty filters (so equal searches share one cache entry). */
function queryOf(filters: SearchFilters): Record<string, string> {
  const q: Record<string, string> = {};
  for (const [k, v] of Object.entries(filters)) if (typeof v === 'string' && v !== '') q[k] = v;
  return q;
}

/** `cerca_comuni` items; both the spec's array and the `{result, suppressed}` form seen elsewhere. */
function searchItems(data: unknown): SearchItem[] {
  if (Array.isArray(data)) return data as SearchItem[];
  if (data && typeof data === 'object') {
    const o = data as { result?: unknown; suppressed?: unknown };
    const live = Array.isArray(o.result) ? (o.result as SearchItem[]) : [];
    const gone = Array.isArray(o.suppressed) ? (o.suppressed as SearchItem[]).map((s) => ({ ...s, suppressed: true })) : [];
    return [...live, ...gone];
  }
  return [];
}

export const toMunicipality = (item: SearchItem): MunicipalityParent | null => {
  const istatCode = istat6(item.istat);
  return istatCode ? { istatCode, name: item.comune, suppressed: item.suppressed ?? false } : null;
};

export async function search(ctx: SubgraphContext, filters: SearchFilters): Promise<MunicipalityParent[]> {
  const data = await orNull(call<unknown>(ctx, POSTAL.search, { query: queryOf(filters) }));
  return searchItems(data).flatMap((i) => toMunicipality(i) ?? []);
}

/** Whether `cerca_comuni` with these filters is answered by the cache right now. */
export function isSearchCached(ctx: SubgraphContext, filters: SearchFilters): Promise<boolean> {
  return ctx.upstream.isCached(ctx, POSTAL.search, { query: queryOf(filters) });
}

/** A living municipality (else a suppressed one) with this cadastral code; null when none. */
export async function byCadastral(ctx: SubgraphContext, code: string): Promise<MunicipalityParent | null> {
  const found = await search(ctx, { codice_catasto: code });
  const m = found.find((x) => !x.suppressed) ?? found[0];
  return m ? { ...m, cadastralCode: code, lookupCode: code } : null;
}

/** Name and suppression of a municipality known by Istat code (`cerca_comuni?istat=`); null when none. */
export async function byIstat(ctx: SubgraphContext, istat: string): Promise<MunicipalityParent | null> {
  const found = await search(ctx, { istat });
  const want = istat6(istat);
  return found.find((m) => m.istatCode === want) ?? null;
}

export const base = (ctx: SubgraphContext, istat: string): Promise<BaseInfo | null> => orNull(call<BaseInfo>(ctx, POSTAL.base, { params: { istat } }));
export const advance = (ctx: SubgraphContext, istat: string): Promise<AdvanceInfo | null> => orNull(call<AdvanceInfo>(ctx, POSTAL.advance, { params: { istat } }));
export const provinces = async (ctx: SubgraphContext): Promise<ProvinceInfo[]> => (await orNull(call<ProvinceInfo[]>(ctx, POSTAL.provinces))) ?? [];
export const regions = async (ctx: SubgraphContext): Promise<RegionInfo[]> => (await orNull(call<RegionInfo[]>(ctx, POSTAL.regions))) ?? [];

/** The two-letter code of a province known by name, from the (cached) province list. */
export async function provinceCode(ctx: SubgraphContext, name: string): Promise<string | null> {
  const f = fold(name);
  return (await provinces(ctx)).find((p) => fold(p.provincia) === f)?.sigla ?? null;
}

/** The Istat code of a region known by name, from the (cached) region list. */
export async function regionCode(ctx: SubgraphContext, name: string): Promise<string | null> {
  const f = fold(name);
  const r = (await regions(ctx)).find((x) => fold(x.regione) === f);
  return r?.istat === undefined ? null : String(r.istat).padStart(2, '0');
}

/** Istat code of a municipality parent: known, or found by its cadastral code. */
export async function istatOf(ctx: SubgraphContext, m: MunicipalityParent): Promise<string | null> {
  if (m.istatCode) return m.istatCode;
  if (!m.cadastralCode) return null;
  return (await byCadastral(ctx, m.cadastralCode))?.istatCode ?? null;
}

/** A cadastral code: a letter and three digits. */
export const CADASTRAL = /^[A-Z]\d{3}$/;

/**
 * The municipality an address names by `lookupCode` (cadastral code, `NAME@PR` or a name): one
 * `cerca_comuni` call; null when none matches (or the name is ambiguous without a province and no
 * living municipality has it exactly).
 */
export async function byLookup(ctx: SubgraphContext, lookup: string): Promise<MunicipalityParent | null> {
  const code = lookup.trim().toUpperCase();
  if (CADASTRAL.test(code)) return byCadastral(ctx, code);
  const at = lookup.lastIndexOf('@');
  const name = (at < 0 ? lookup : lookup.slice(0, at)).trim();
  const province =
    at < 0
      ? null
      : lookup
          .slice(at + 1)
          .trim()
          .toUpperCase() || null;
  if (fold(name) === '') return null;
  const want = fold(name);
  const exact = (await search(ctx, { comune: name, provincia: province })).filter((m) => fold(m.name ?? '') === want);
  const living = exact.filter((m) => !m.suppressed);
  const pick = living.length === 1 ? living[0] : living.length === 0 && exact.length === 1 ? exact[0] : undefined;
  return pick ? { ...pick, lookupCode: lookup } : null;
}

/** The `lookupCode` a municipality answers with: the one it was reached by, else its cadastral code or Istat code. */
export async function lookupOf(m: MunicipalityParent): Promise<string> {
  return m.lookupCode ?? m.cadastralCode ?? m.istatCode ?? '';
}
