/**
 * Companies outside Italy: EU VAT registry (EU-start), the country endpoints of FR, DE, ES, PT, GB,
 * BE, AT, CH, PL, and the worldwide endpoints. When both a country endpoint and a worldwide one can
 * answer, the cheaper (price table) is used.
 */
import type { SubgraphContext } from '../../runtime/context.ts';
import { badUserInput } from '../../runtime/errors.ts';
import type { Endpoint } from '../../upstream/endpoint.ts';
import { EU_VAT_COUNTRIES, vatPrefixOf } from '../../../contract/eu.ts';
import { priceOf } from '../../../contract/prices.ts';
import type { ForeignCompanyModel, ForeignLevel } from '../model.ts';
import { normalizeEuStart, normalizeForeign } from '../normalize.ts';
import { COMPANY_ENDPOINTS, countryEndpoint, DEDICATED_COUNTRIES, type DedicatedCountry } from '../upstream.ts';
import { countryArg, foreignIdArg } from '../validate.ts';

/** Countries in the EU VAT registry (VIES), by ISO code: the member states and Northern Ireland (XI). */
export const VIES_COUNTRIES: ReadonlySet<string> = new Set(EU_VAT_COUNTRIES);

const isDedicated = (c: string): c is DedicatedCountry => (DEDICATED_COUNTRIES as readonly string[]).includes(c);

/** The cheapest endpoint answering a country at a level (START, ADVANCED, TOP). */
export function foreignEndpoint(country: string, level: Exclude<ForeignLevel, 'VAT_REGISTRY'>): Endpoint {
  const candidates: Endpoint[] = [level === 'START' ? COMPANY_ENDPOINTS.wwStart : level === 'ADVANCED' ? COMPANY_ENDPOINTS.wwAdvanced : COMPANY_ENDPOINTS.wwTop];
  if (level !== 'TOP' && isDedicated(country)) candidates.unshift(countryEndpoint(country, level));
  return candidates.reduce((best, ep) => (priceOf(ep.area, ep.method, ep.path) < priceOf(best.area, best.method, best.path) ? ep : best));
}

const first = (data: unknown): unknown => (Array.isArray(data) ? (data as unknown[])[0] : data);

export async function foreignCompany(args: { country: string; id: string; level?: ForeignLevel | null }, ctx: SubgraphContext): Promise<ForeignCompanyModel | null> {
  const country = countryArg(args.country);
  const level = args.level ?? 'START';
  if (country === 'IT' && level !== 'VAT_REGISTRY') throw badUserInput('Italian companies are served by company, companyByTaxCode and companyById', 'country');
  const id = foreignIdArg(args.id);

  if (level === 'VAT_REGISTRY') {
    if (!VIES_COUNTRIES.has(country)) throw badUserInput(`VAT_REGISTRY covers EU member states only, not ${country}`, 'country');
    const prefix = vatPrefixOf(country);
    const compact = id.replace(/[\s.-]/g, '').toUpperCase();
    if (!/^[A-Z0-9]{2,14}$/.test(compact)) throw badUserInput('id must be a VAT number (2 to 14 letters and digits, with or without country prefix)', 'id');
    const vat = compact.startsWith(prefix) ? compact : `${prefix}${compact}`;
    const data = await ctx.upstream.call<unknown>(ctx, COMPANY_ENDPOINTS.euStart, { params: { id: vat } });
    const rec = first(data);
    return rec && typeof rec === 'object' ? normalizeEuStart(rec) : null;
  }

  const ep = foreignEndpoint(country, level);
  const params: Record<string, string> = ep.path.includes('{country}') ? { country, id } : { id };
  const data = await ctx.upstream.call<unknown>(ctx, ep, { params });
  const rec = first(data);
  return rec && typeof rec === 'object' ? normalizeForeign(rec, level, country) : null;
}
