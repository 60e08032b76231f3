/**
 * Address completion for a field that asks at every key stroke: the cheapest endpoint only
 * (`cerca_comuni`, €0.001 with a daily free tier), nothing below `MIN_PREFIX` characters, and a
 * longer prefix answered from the cached search of a shorter one when there is one (the search
 * matches names containing the text, so a shorter prefix's answer holds every longer prefix's
 * matches): typing `Ro`, `Rom`, `Roma` makes one call.
 */
import type { SubgraphContext } from '../runtime/context.ts';
import type { MunicipalityParent } from './mappers.ts';
import { fold, isSearchCached, search, type SearchFilters } from './service.ts';

/** Fewest characters (letters and digits, accents folded) before anything is called. */
export const MIN_PREFIX = 2;

export async function complete(ctx: SubgraphContext, typed: string, province: string | null, limit: number): Promise<MunicipalityParent[]> {
  // Case-folded (the search ignores case) so `ROMA`, `Roma` and `roma` share one cached search.
  const prefix = typed.toLocaleLowerCase('it').replace(/\s+/g, ' ');
  const want = fold(prefix);
  if (want.replace(/ /g, '').length < MIN_PREFIX) return [];
  const filters = (comune: string): SearchFilters => ({ comune, provincia: province });
  // The longest prefix of what was typed whose search is cached (shared by every tenant), else the whole.
  let query = prefix;
  for (let len = prefix.length - 1; len >= MIN_PREFIX; len--) {
    const shorter = prefix.slice(0, len);
    if (fold(shorter).replace(/ /g, '').length < MIN_PREFIX) break;
    if (await isSearchCached(ctx, filters(shorter))) {
      query = shorter;
      break;
    }
  }
  if (query !== prefix && (await isSearchCached(ctx, filters(prefix)))) query = prefix;
  const found = await search(ctx, filters(query));
  return found
    .filter((m) => m.name !== undefined && fold(m.name).startsWith(want))
    .sort((a, b) => rank(a, want) - rank(b, want) || (a.name ?? '').localeCompare(b.name ?? '', 'it'))
    .slice(0, limit);
}

/** Exact names first, living before suppressed. */
const rank = (m: MunicipalityParent, want: string): number => (fold(m.name ?? '') === want ? 0 : 1) + (m.suppressed ? 2 : 0);
