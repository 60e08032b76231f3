/**
 * IT-search and FR-search. The search call itself is flat-priced; its `dataEnrichment` is chosen
 * from what the items' selection needs (ids only, IT-start or IT-advanced data), and the search
 * results seed the request's purchase record so that a company met again is not bought again.
 */
import { Kind, type GraphQLResolveInfo, type SelectionSetNode } from 'graphql';
import type { SubgraphContext } from '../../runtime/context.ts';
import { badUserInput } from '../../runtime/errors.ts';
import type { QueryValue } from '../../upstream/client.ts';
import type { CompanySearchFilter, FrenchCompanySearchFilter } from '../__generated__/resolvers-types.ts';
import { companyStub, withFacetsOrStub } from '../companies.ts';
import { TIER_COVERAGE, type Facet } from '../facets.ts';
import { companyPurchases } from '../loaders.ts';
import type { CompanySearchResultParent } from '../mappers.ts';
import type { CompanyModel, ForeignCompanyModel } from '../model.ts';
import { normalizeForeign, normalizeItAdvanced, normalizeItStart, num, REGISTRY_STATUS_UPSTREAM, str } from '../normalize.ts';
import { companyFacetsFromInfo } from '../selection.ts';
import { COMPANY_ENDPOINTS, type VForeign, type VItAdvanced } from '../upstream.ts';
import { codeArg, geoArgs, instantArg, pageArgs, rangeArgs, taxCodeArg, textArg, vatCodeArg } from '../validate.ts';

/**
 * Most search results for which further company data may be bought per item. Selecting, on search
 * items, fields beyond what the search enrichment holds buys one tier per company: above this
 * `limit` the request is refused before any call, so a selection cannot spend hundreds of euro.
 */
export const MAX_ITEMS_WITH_PURCHASES = 25;

type Query = Record<string, QueryValue>;

function atLeastOne(query: Query, field: string): void {
  if (Object.values(query).every((v) => v === undefined)) throw badUserInput('set at least one search filter', field);
}

/** IT-search query parameters from the filter, validated. */
export function itSearchQuery(f: CompanySearchFilter): Query {
  const turnover = rangeArgs(f.turnover, 'filter.turnover');
  const employees = rangeArgs(f.employees, 'filter.employees');
  const geo = geoArgs(f.near);
  const holder = f.shareholderTaxCode?.trim();
  const query: Query = {
    companyName: textArg(f.companyName, 'filter.companyName', 3),
    autocomplete: textArg(f.autocomplete, 'filter.autocomplete', 1),
    province: codeArg(f.province, 'filter.province', /^[A-Z]{2}$/, 'a two-letter province code such as RM'),
    townCode: codeArg(f.townCode, 'filter.townCode', /^[A-Z]\d{3}$/, 'a cadastral code such as H501'),
    atecoCode: f.atecoCode == null ? undefined : codeArg(f.atecoCode.replace(/\./g, ''), 'filter.atecoCode', /^\d{2,6}$/, 'an ATECO code of 2 to 6 digits'),
    cciaa: codeArg(f.chamberOfCommerce, 'filter.chamberOfCommerce', /^[A-Z]{2}$/, 'a two-letter chamber-of-commerce code such as RM'),
    reaCode: codeArg(f.reaCode, 'filter.reaCode', /^\d{1,12}$/, 'a REA number (digits)'),
    minTurnover: turnover.min,
    maxTurnover: turnover.max,
    minEmployees: employees.min,
    maxEmployees: employees.max,
    sdiCode: codeArg(f.sdiCode, 'filter.sdiCode', /^[A-Z0-9]{6,7}$/, 'an SDI recipient code of 6 or 7 letters and digits'),
    legalFormCode: codeArg(f.legalFormCode, 'filter.legalFormCode', /^[A-Z]{2}$/, 'a two-letter legal-form code such as SP'),
    shareHolderTaxCode: holder ? (/^\d{11}$/.test(holder) ? vatCodeArg(holder, 'filter.shareholderTaxCode') : taxCodeArg(holder, 'filter.shareholderTaxCode')) : undefined,
    activityStatus: f.registryStatus ? REGISTRY_STATUS_UPSTREAM[f.registryStatus] : undefined,
    pec: f.pec == null ? undefined : textArg(f.pec, 'filter.pec', 3, 254),
    creationTimestamp: instantArg(f.createdAfter, 'filter.createdAfter'),
    lastUpdateTimestamp: instantArg(f.updatedAfter, 'filter.updatedAfter'),
    lat: geo?.lat,
    long: geo?.long,
    radius: geo?.radius,
  };
  if (query.pec !== undefined && !/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(String(query.pec))) throw badUserInput('filter.pec must be an e-mail address', 'filter.pec');
  atLeastOne(query, 'filter');
  return query;
}

/** FR-search query parameters from the filter, validated. */
export function frSearchQuery(f: FrenchCompanySearchFilter): Query {
  const turnover = rangeArgs(f.turnover, 'filter.turnover');
  const employees = rangeArgs(f.employees, 'filter.employees');
  const geo = geoArgs(f.near);
  const query: Query = {
    companyName: textArg(f.companyName, 'filter.companyName', 3),
    autocomplete: textArg(f.autocomplete, 'filter.autocomplete', 1),
    town: textArg(f.town, 'filter.town', 1, 100),
    townCode: codeArg(f.townCode, 'filter.townCode', /^[0-9AB]{5}$/, 'an INSEE town code of 5 characters'),
    nafCode: codeArg(f.nafCode, 'filter.nafCode', /^\d{2}(\.?\d{1,2}[A-Z]?)?$/, 'a NAF code such as 4779Z'),
    departmentCode: codeArg(f.departmentCode, 'filter.departmentCode', /^[0-9AB]{2,3}$/, 'an INSEE department code'),
    regionCode: codeArg(f.regionCode, 'filter.regionCode', /^\d{2}$/, 'an INSEE region code of 2 digits'),
    minTurnover: turnover.min,
    maxTurnover: turnover.max,
    minEmployees: employees.min,
    maxEmployees: employees.max,
    creditWorthy: f.creditWorthy == null ? undefined : f.creditWorthy ? 1 : 0,
    legalFormCode: textArg(f.legalFormCode, 'filter.legalFormCode', 1, 40),
    activityStatus: f.activityStatus ?? undefined,
    creationTimestamp: instantArg(f.createdAfter, 'filter.createdAfter'),
    lastUpdateTimestamp: instantArg(f.updatedAfter, 'filter.updatedAfter'),
    lat: geo?.lat,
    long: geo?.long,
    radius: geo?.radius,
  };
  atLeastOne(query, 'filter');
  return query;
}

/** Count and price of a dry run, wherever the body puts them (root or `data`, object or array). */
export function dryRunFigures(body: unknown): { total: number | null; cost: number | null } {
  const candidates: unknown[] = [body];
  if (body && typeof body === 'object' && 'data' in body) {
    const data = body.data;
    candidates.push(...(Array.isArray(data) ? (data as unknown[]) : [data]));
  }
  for (const c of candidates) {
    if (!c || typeof c !== 'object') continue;
    const o = c as Record<string, unknown>;
    const total = num(o.count) ?? num(o.total);
    if (total !== null) return { total, cost: num(o.cost) ?? num(o.price) };
  }
  return { total: null, cost: null };
}

type Enrichment = 'none' | 'start' | 'advanced';

/** The cheapest search enrichment for what the items need (all are priced alike; smaller is faster). */
export function searchEnrichment(need: ReadonlySet<Facet>): Enrichment {
  const start = TIER_COVERAGE['IT-start'];
  const advanced = TIER_COVERAGE['IT-advanced'];
  if ([...need].every((f) => f === 'openapiId')) return 'none';
  if ([...need].some((f) => advanced.has(f) && !start.has(f))) return 'advanced';
  return 'start';
}

const coverageOf = (e: Enrichment): ReadonlySet<Facet> => (e === 'none' ? new Set<Facet>(['openapiId']) : TIER_COVERAGE[e === 'start' ? 'IT-start' : 'IT-advanced']);

export async function searchCompanies(
  args: { filter: CompanySearchFilter; skip?: number | null; limit?: number | null; dryRun?: boolean | null },
  ctx: SubgraphContext,
  info: GraphQLResolveInfo,
): Promise<CompanySearchResultParent> {
  const { skip, limit } = pageArgs(args.skip, args.limit);
  const query = itSearchQuery(args.filter);
  if (args.dryRun) {
    const body = await ctx.upstream.call<unknown>(ctx, COMPANY_ENDPOINTS.itSearchDryRun, { query: { ...query, dryRun: 1, skip, limit } });
    return { items: [], count: 0, ...dryRunFigures(body), skip, limit, dryRun: true };
  }
  const need = companyFacetsFromInfo(info, 'items');
  const enrichment = searchEnrichment(need);
  const covered = coverageOf(enrichment);
  const beyond = [...need].filter((f) => !covered.has(f));
  if (beyond.length > 0 && limit > MAX_ITEMS_WITH_PURCHASES) {
    throw badUserInput(
      `the fields selected on search items (${beyond.join(', ')}) are bought per company; use limit ≤ ${MAX_ITEMS_WITH_PURCHASES} or query those companies one by one`,
      'limit',
    );
  }
  const data = await ctx.upstream.call<unknown>(ctx, COMPANY_ENDPOINTS.itSearch, {
    query: { ...query, dataEnrichment: enrichment === 'none' ? undefined : enrichment, skip, limit },
  });
  const records = (Array.isArray(data) ? (data as unknown[]) : []).filter((r): r is VItAdvanced => !!r && typeof r === 'object');
  const purchases = companyPurchases(ctx);
  const stubs = records.map((r) => {
    const model: CompanyModel = enrichment === 'none' ? { id: str(r.id) } : enrichment === 'start' ? normalizeItStart(r) : normalizeItAdvanced(r);
    if (enrichment !== 'none') purchases.seed(model, covered);
    return companyStub(model, covered);
  });
  const items = beyond.length > 0 ? await Promise.all(stubs.map((s) => withFacetsOrStub(ctx, s, need))) : stubs;
  return { items, count: items.length, total: null, cost: null, skip, limit, dryRun: false };
}

/** ForeignCompany fields that only the advanced enrichment holds. */
const FR_ADVANCED_FIELDS = new Set(['contacts', 'classification', 'legalForm', 'balanceSheets', 'creditWorthy', 'offices']);

export interface ForeignSearchResult {
  items: ForeignCompanyModel[];
  count: number;
  total: number | null;
  cost: number | null;
  skip: number;
  limit: number;
  dryRun: boolean;
}

/** Top-level ForeignCompany fields selected under `items`. */
function foreignItemFields(info: GraphQLResolveInfo): Set<string> {
  const out = new Set<string>();
  const visit = (set: SelectionSetNode | undefined, depth: number): void => {
    if (!set) return;
    for (const sel of set.selections) {
      if (sel.kind === Kind.FIELD) {
        if (depth === 0 && sel.name.value === 'items') visit(sel.selectionSet, 1);
        else if (depth === 1) out.add(sel.name.value);
      } else if (sel.kind === Kind.INLINE_FRAGMENT) visit(sel.selectionSet, depth);
      else visit(info.fragments[sel.name.value]?.selectionSet, depth);
    }
  };
  for (const node of info.fieldNodes) visit(node.selectionSet, 0);
  return out;
}

export async function frenchCompanySearch(
  args: { filter: FrenchCompanySearchFilter; skip?: number | null; limit?: number | null; dryRun?: boolean | null },
  ctx: SubgraphContext,
  info: GraphQLResolveInfo,
): Promise<ForeignSearchResult> {
  const { skip, limit } = pageArgs(args.skip, args.limit);
  const query = frSearchQuery(args.filter);
  if (args.dryRun) {
    const body = await ctx.upstream.call<unknown>(ctx, COMPANY_ENDPOINTS.frSearchDryRun, { query: { ...query, dryRun: 1, skip, limit } });
    return { items: [], count: 0, ...dryRunFigures(body), skip, limit, dryRun: true };
  }
  const fields = foreignItemFields(info);
  fields.delete('__typename');
  const enrichment: Enrichment = [...fields].every((f) => f === 'id' || f === 'level') ? 'none' : [...fields].some((f) => FR_ADVANCED_FIELDS.has(f)) ? 'advanced' : 'start';
  const data = await ctx.upstream.call<unknown>(ctx, COMPANY_ENDPOINTS.frSearch, {
    query: { ...query, dataEnrichment: enrichment === 'none' ? undefined : enrichment, skip, limit },
  });
  const records = (Array.isArray(data) ? (data as unknown[]) : []).filter((r): r is VForeign => !!r && typeof r === 'object');
  const level = enrichment === 'advanced' ? 'ADVANCED' : 'START';
  const items = records.map((r) => normalizeForeign(r, level, 'FR'));
  return { items, count: items.length, total: null, cost: null, skip, limit, dryRun: false };
}
