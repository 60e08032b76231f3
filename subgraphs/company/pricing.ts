/**
 * The company area's part of the cost estimate: a `Company` costs, at each place an operation
 * returns one, the cheapest tiers that cover the facets selected on it (the same planner the loader
 * buys with, with nothing counted as cached); the other paid fields cost their endpoint.
 */
import { endpointPrice, spends, type Args, type EntityPosition, type PricingTable } from '../runtime/pricing.ts';
import { planCost, planPurchase, SOURCE_ENDPOINT, TIER_COVERAGE, covers, type Facet, type IdentifierKind } from './facets.ts';
import type { ForeignLevel } from './model.ts';
import { foreignEndpoint } from './resolvers/foreign.ts';
import { MAX_ITEMS_WITH_PURCHASES } from './resolvers/search.ts';
import { SOURCE_FIELD_ACCEPTS } from './resolvers/sources.ts';
import { companyFacetsFromInfo, companyPathsFromInfo } from './selection.ts';
import { COMPANY_ENDPOINTS } from './upstream.ts';

/*
 * What the query planner asks the company subgraph for when an operation crosses into another
 * subgraph is the key `lookupCode`: the identifier already known, which needs no purchase, so it
 * adds nothing to a company's price.
 */

/** Facets a root lookup knows without a call (the identifier it was asked with). */
const KNOWN_AT: Readonly<Record<string, Facet>> = {
  'Query.company': 'vatCode',
  'Query.companyByTaxCode': 'taxCode',
  'Query.companyById': 'openapiId',
};

const EVERY_KIND: ReadonlySet<IdentifierKind> = new Set<IdentifierKind>(['vatCode', 'taxCode', 'id']);
const TAX_CODE_ONLY: ReadonlySet<IdentifierKind> = new Set<IdentifierKind>(['taxCode']);
/** The identifiers a company is known by at each place (nested companies: the payload's tax code). */
const KNOWN_KINDS: Readonly<Record<string, ReadonlySet<IdentifierKind>>> = {
  'Query.company': new Set<IdentifierKind>(['vatCode']),
  'Query.companyByTaxCode': TAX_CODE_ONLY,
  'Query.companyById': new Set<IdentifierKind>(['id']),
  'ManagerCompany.company': TAX_CODE_ONLY,
  'ShareholderCompany.company': TAX_CODE_ONLY,
  'Subsidiary.company': TAX_CODE_ONLY,
  'AffiliateCompany.company': TAX_CODE_ONLY,
};

function companyPrice(at: EntityPosition): number {
  const selection = { fieldNodes: [at.node], fragments: at.fragments, variableValues: at.variables };
  const facets = companyFacetsFromInfo(selection);
  const knownKinds = KNOWN_KINDS[at.coordinate] ?? EVERY_KIND;
  // A field bought from an endpoint that takes none of the identifiers known learns the VAT number first.
  const paths = companyPathsFromInfo(selection);
  for (const [field, accepts] of Object.entries(SOURCE_FIELD_ACCEPTS)) {
    const selected = [...paths].some((p) => p === field || p.startsWith(`${field}.`));
    if (selected && !accepts.some((k) => knownKinds.has(k))) facets.add('vatCode');
  }
  const known = KNOWN_AT[at.coordinate];
  if (known) facets.delete(known);
  // Search items come with the search's own enrichment (up to IT-advanced data) at no extra call.
  if (at.coordinate === 'CompanySearchResult.items' && covers(TIER_COVERAGE['IT-advanced'], facets)) return 0;
  const plan = planPurchase(facets, { known: knownKinds });
  for (const source of plan) spends(SOURCE_ENDPOINT[source]);
  const price = planCost(plan).euro;
  if (at.coordinate !== 'CompanySearchResult.items') return price;
  // Purchases for search items are made for at most MAX_ITEMS_WITH_PURCHASES of them (more is
  // refused before any call): spread that over the `limit` items the estimate counts.
  const limit = limitOf(at.parentArgs, 100);
  return limit <= MAX_ITEMS_WITH_PURCHASES ? price : (price * MAX_ITEMS_WITH_PURCHASES) / limit;
}

const limitOf = (args: Args, dflt: number): number => (typeof args.limit === 'number' && args.limit >= 0 ? args.limit : dflt);

function foreignPrice(args: Args): number {
  const country = typeof args.country === 'string' ? args.country.trim().toUpperCase() : '';
  const level = (typeof args.level === 'string' ? args.level : 'START') as ForeignLevel;
  if (level === 'VAT_REGISTRY') return endpointPrice(COMPANY_ENDPOINTS.euStart);
  if (!/^[A-Z]{2}$/.test(country)) return 0; // refused before any call
  return endpointPrice(foreignEndpoint(country, level));
}

export const companyPricing: PricingTable = {
  fields: {
    'Query.searchCompanies': { euro: () => endpointPrice(COMPANY_ENDPOINTS.itSearch) },
    // Every item may carry paid fields of other areas (a credit score); company purchases beyond
    // the search's own data are refused past MAX_ITEMS_WITH_PURCHASES items (see `companyPrice`).
    'CompanySearchResult.items': { maxItems: (_args, search) => (search.dryRun === true ? 0 : limitOf(search, 100)) },
    // A shareholding has more than one owner only when co-owned: two at most is the assumption.
    'Shareholding.owners': { maxItems: (_args, _parent, assumed) => Math.min(2, assumed) },
    'Query.frenchCompanySearch': { euro: () => endpointPrice(COMPANY_ENDPOINTS.frSearch) },
    'Query.foreignCompany': { euro: foreignPrice },
    // Single-purpose sections bought per field (resolvers/sources.ts): one call per occurrence at most.
    'Company.beneficialOwners': { euro: () => endpointPrice(COMPANY_ENDPOINTS.itUbo) },
    'Company.publicAdministration': { euro: () => endpointPrice(COMPANY_ENDPOINTS.itPa) },
    'Company.splitPayment': { euro: () => endpointPrice(COMPANY_ENDPOINTS.itSplitpayment) },
    'Company.isCeased': { euro: () => endpointPrice(COMPANY_ENDPOINTS.itClosed) },
    'Company.vatGroupTaxCodeCheck': { euro: () => endpointPrice(COMPANY_ENDPOINTS.itVatgroup) },
    'Mutation.createCompanyMonitor': { euro: () => endpointPrice(COMPANY_ENDPOINTS.monitorCreate) },
  },
  entities: { Company: companyPrice },
};
