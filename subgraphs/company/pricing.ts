/**
 * The company area's part of the cost estimate: a `Company` costs, at each place an operation
 * returns one, the cheapest tiers that cover the facets selected on it (the same planner the loader
 * buys with, with nothing counted as cached); the other paid fields cost their endpoint.
 */
import { endpointPrice, PricingRefused, spends, type Args, type EntityPosition, type PricingTable } from '../runtime/pricing.ts';
import { facetsForPaths, planCost, planPurchase, SOURCE_ENDPOINT, TIER_COVERAGE, covers, type Facet, type IdentifierKind } from './facets.ts';
import type { ForeignLevel } from './model.ts';
import { foreignEndpoint } from './resolvers/foreign.ts';
import { MAX_ITEMS_WITH_PURCHASES } from './resolvers/search.ts';
import { SOURCE_FIELD_ACCEPTS } from './resolvers/sources.ts';
import { companyPartsFromInfo } from './selection.ts';
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
const ID_ONLY: ReadonlySet<IdentifierKind> = new Set<IdentifierKind>(['id']);
/** The identifiers a company is known by at each place (nested companies: the payload's tax code). */
const KNOWN_KINDS: Readonly<Record<string, ReadonlySet<IdentifierKind>>> = {
  'Query.company': new Set<IdentifierKind>(['vatCode']),
  'Query.companyByTaxCode': TAX_CODE_ONLY,
  'Query.companyById': ID_ONLY,
  'ManagerCompany.company': TAX_CODE_ONLY,
  'ShareholderCompany.company': TAX_CODE_ONLY,
  'Subsidiary.company': TAX_CODE_ONLY,
  'AffiliateCompany.company': TAX_CODE_ONLY,
};

/**
 * The identifiers a deferred part of a company is fetched by: the gateway fetches a deferred
 * fragment's fields by the company's key, `lookupCode` (`stubOfLookupCode`: an 11-digit code is
 * taken as a tax code, a 24-character one as the Openapi id). A company looked up by its id may
 * still be known by the id alone when the part delivered at once bought nothing.
 */
const deferredKinds = (coordinate: string): ReadonlySet<IdentifierKind> => (KNOWN_KINDS[coordinate] === ID_ONLY ? ID_ONLY : TAX_CODE_ONLY);

/** The facets one part of a company's selection (`paths`) needs, bought with the identifiers known. */
function partFacets(paths: ReadonlySet<string>, knownKinds: ReadonlySet<IdentifierKind>, knownFacet: Facet | undefined): Set<Facet> {
  const facets = facetsForPaths(paths);
  // A field bought from an endpoint that takes none of the identifiers known learns the VAT number first.
  for (const [field, accepts] of Object.entries(SOURCE_FIELD_ACCEPTS)) {
    const selected = [...paths].some((p) => p === field || p.startsWith(`${field}.`));
    if (selected && !accepts.some((k) => knownKinds.has(k))) facets.add('vatCode');
  }
  if (knownFacet) facets.delete(knownFacet);
  return facets;
}

/** Euro of the cheapest plan for `facets` alone. */
function planPrice(facets: ReadonlySet<Facet>, knownKinds: ReadonlySet<IdentifierKind>): number {
  const plan = planPurchase(facets, { known: knownKinds });
  for (const source of plan) spends(SOURCE_ENDPOINT[source]);
  return planCost(plan).euro;
}

/**
 * A company's price at one position: the part delivered at once, plus each deferred fragment
 * (`@defer`) bought apart (`companyPartsFromInfo`): the sum is what the parts may cost together,
 * never less than one plan for everything (what the same selection costs without `@defer`).
 */
function companyPrice(at: EntityPosition): number {
  const selection = { fieldNodes: [at.node], fragments: at.fragments, variableValues: at.variables };
  const [now, ...deferred] = companyPartsFromInfo(selection);
  const knownKinds = KNOWN_KINDS[at.coordinate] ?? EVERY_KIND;
  let later = 0;
  for (const paths of deferred) later += planPrice(partFacets(paths, deferredKinds(at.coordinate), undefined), deferredKinds(at.coordinate));
  const facets = partFacets(now, knownKinds, KNOWN_AT[at.coordinate]);
  if (at.coordinate !== 'CompanySearchResult.items') return planPrice(facets, knownKinds) + later;
  // A dry run returns no item.
  if (at.parentArgs.dryRun === true) return 0;
  // Search items come with the search's own enrichment (up to IT-advanced data) at no extra call.
  // Purchases for search items are made for at most MAX_ITEMS_WITH_PURCHASES of them (more is
  // refused before any call): spread that over the `limit` items the estimate counts. A deferred
  // fragment on items is fetched for every item the search returns.
  const own = covers(TIER_COVERAGE['IT-advanced'], facets) ? 0 : planPrice(facets, knownKinds);
  const limit = limitOf(at.parentArgs, 100);
  // The search refuses purchases on more items before any call; a deferred fragment escapes that
  // check (the search never sees it): the same refusal here.
  if (later > 0 && limit > MAX_ITEMS_WITH_PURCHASES)
    throw new PricingRefused(
      `the fields deferred on search items are bought per company, for every item; use limit ≤ ${MAX_ITEMS_WITH_PURCHASES} or query those companies one by one`,
    );
  return (limit <= MAX_ITEMS_WITH_PURCHASES ? own : (own * MAX_ITEMS_WITH_PURCHASES) / limit) + later;
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
