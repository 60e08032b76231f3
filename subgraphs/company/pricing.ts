/**
 * The company area's part of the cost estimate: a `Company` costs, at each place an operation
 * returns one, the cheapest tiers that cover the facets selected on it (the same planner the loader
 * buys with, with nothing counted as cached); the other paid fields cost their endpoint.
 */
import { endpointPrice, type Args, type EntityPosition, type PricingTable } from '../runtime/pricing.ts';
import { planPurchase, tierPrice, TIER_COVERAGE, covers, type Facet } from './facets.ts';
import type { ForeignLevel } from './model.ts';
import { foreignEndpoint } from './resolvers/foreign.ts';
import { MAX_ITEMS_WITH_PURCHASES } from './resolvers/search.ts';
import { companyFacetsFromInfo } from './selection.ts';
import { COMPANY_ENDPOINTS } from './upstream.ts';

/** The query planner asks the owning subgraph for every key of an entity in every fetch. */
const KEY_FACETS: Facet[] = ['vatCode', 'taxCode'];

function companyPrice(at: EntityPosition): number {
  const facets = companyFacetsFromInfo({ fieldNodes: [at.node], fragments: at.fragments, variableValues: at.variables });
  for (const f of KEY_FACETS) facets.add(f);
  // Search items come with the search's own enrichment (up to IT-advanced data) at no extra call.
  if (at.coordinate === 'CompanySearchResult.items' && covers(TIER_COVERAGE['IT-advanced'], facets)) return 0;
  const plan = planPurchase(facets, { byIdOnly: at.coordinate === 'Query.companyById' });
  const price = plan.reduce((sum, tier) => sum + tierPrice(tier), 0);
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
    'Mutation.createCompanyMonitor': { euro: () => endpointPrice(COMPANY_ENDPOINTS.monitorCreate) },
  },
  entities: { Company: companyPrice },
};
