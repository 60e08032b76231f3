/**
 * The cheapest-endpoint logic of the company area.
 *
 * A *facet* is a piece of company data that the upstream tiers either hold or not (mostly the
 * contract's sections; a few sections are split where the cheap tiers hold part of them, e.g. the
 * turnover of IT-advanced's last balance sheet versus the turnover range only the composite tiers
 * give). Two tables drive everything:
 *
 * - `FIELD_FACETS`: each `Company` field path (dot notation below `Company`) → the facet it needs;
 *   the longest listed prefix of a path wins, so `ecofin.turnover` needs `ecofinSummary` while
 *   `ecofin.turnoverRange` needs `ecofin`.
 * - `TIER_COVERAGE`: each tier (IT-start … IT-full) → the facets its payload holds (contract shape
 *   table + the vendor spec's example payloads, as `normalize.ts` reads them).
 *
 * `cheapestEndpoint(facets)` picks the lowest-priced tier covering them all; prices come from the
 * one price table (`priceOf`). No GraphQL here: `selection.ts` turns a selection set into paths.
 */
import type { Endpoint } from '../upstream/endpoint.ts';
import { priceOf } from '../../contract/prices.ts';
import { COMPANY_ENDPOINTS } from './upstream.ts';

export const FACETS = [
  // identity
  'companyName',
  'vatCode',
  'taxCode',
  'openapiId',
  // companyDetails
  'registration', // chamber of commerce + REA number
  'companyDetails', // office type + Openapi service number
  'lastUpdate',
  // address
  'address', // street line, zip, town, province code, region
  'addressDetail', // toponym, street, number, hamlet, cadastral code, coordinates (start/advanced only)
  'addressNames', // province name, country (composite tiers only)
  // status and dates
  'activityStatus',
  'registryStatus',
  'registrationDate',
  'activityDates', // start and end of activity
  'ceased', // IT-advanced's `cessata`
  'taxCodeCeased', // the revenue agency's ceased flag and its update time (IT-advanced)
  'companyDates', // incorporation and founding
  'marketable',
  // legal form
  'legalForm',
  'detailedLegalForm',
  // classification
  'ateco',
  'atecoSecondary',
  'ateco2025', // IT-advanced's ATECO 2025 code
  'internationalClassification',
  // people and size
  'employees',
  'employeeCount',
  'employeesStatistic',
  'innovativeSmeAndSu',
  // contacts
  'mail',
  'contacts',
  'webAndSocial',
  'pec',
  'sdiCode',
  'sdiCodeUpdate', // when the SDI code was last updated (IT-start, IT-advanced)
  'vatGroup',
  // registers
  'artisanRegistry',
  'soaCertification',
  // structure
  'corporateGroups',
  'branches',
  'allOffices',
  'subsidiaries',
  'affiliates',
  'managers',
  'shareholdersSummary', // owners' identity and percent (IT-advanced's shareHolders)
  'shareholders', // share type, since dates, addresses (composite tiers)
  // economics
  'foreignTrade',
  'publicTenders',
  'operatingResults',
  'ecofinSummary', // turnover, net worth, share capital, year, balance-sheet date
  'ecofin', // turnover range and trend, enterprise size
  'balanceSheetHistory', // IT-advanced's yearly summaries
  'debts',
  'financialStatements', // every other balance-sheet and income-statement section
  'ratios',
  'raeSae',
] as const;
export type Facet = (typeof FACETS)[number];

/** Marks a path that is another company (a nested `Company`): its fields are that company's facets. */
export const NESTED_COMPANY = 'nestedCompany' as const;

/**
 * Company field path → facet. Paths not listed inherit their nearest listed ancestor's facet; a
 * top-level field that is not listed is not ours (another subgraph's field) and needs nothing.
 */
export const FIELD_FACETS: Readonly<Record<string, Facet | typeof NESTED_COMPANY>> = {
  vatCode: 'vatCode',
  taxCode: 'taxCode',
  id: 'openapiId',
  companyName: 'companyName',
  serviceNumber: 'companyDetails',
  chamberOfCommerce: 'registration',
  reaCode: 'registration',
  officeType: 'companyDetails',
  rawOfficeType: 'companyDetails',
  lastUpdateDate: 'lastUpdate',
  // the Openapi record's own creation time: in the records that carry the Openapi id
  recordCreationDate: 'openapiId',
  address: 'address',
  'address.toponym': 'addressDetail',
  'address.street': 'addressDetail',
  'address.streetNumber': 'addressDetail',
  'address.hamlet': 'addressDetail',
  'address.townCode': 'addressDetail',
  'address.coordinates': 'addressDetail',
  'address.province.description': 'addressNames',
  'address.country': 'addressNames',
  activityStatus: 'activityStatus',
  rawActivityStatus: 'activityStatus',
  registryStatus: 'registryStatus',
  rawRegistryStatus: 'registryStatus',
  ceased: 'ceased',
  taxCodeCeased: 'taxCodeCeased',
  taxCodeCeasedUpdateDate: 'taxCodeCeased',
  isMarketable: 'marketable',
  legalForm: 'legalForm',
  rawLegalForm: 'legalForm',
  legalFormDescription: 'legalForm',
  detailedLegalForm: 'detailedLegalForm',
  dates: 'registrationDate',
  'dates.startDate': 'activityDates',
  'dates.endDate': 'activityDates',
  'dates.incorporationDate': 'companyDates',
  'dates.foundingDate': 'companyDates',
  atecoClassification: 'ateco',
  'atecoClassification.secondaryAteco': 'atecoSecondary',
  'atecoClassification.secondaryAteco2022': 'atecoSecondary',
  'atecoClassification.ateco2025': 'ateco2025',
  internationalClassification: 'internationalClassification',
  employees: 'employees',
  'employees.count': 'employeeCount',
  employeeStatistics: 'employeesStatistic',
  isInnovativeStartUp: 'innovativeSmeAndSu',
  isInnovativeSme: 'innovativeSmeAndSu',
  email: 'mail',
  contacts: 'contacts',
  webAndSocial: 'webAndSocial',
  pec: 'pec',
  sdiCode: 'sdiCode',
  sdiCodeUpdateDate: 'sdiCodeUpdate',
  vatGroup: 'vatGroup',
  artisanRegistry: 'artisanRegistry',
  hasSoaCertification: 'soaCertification',
  corporateGroup: 'corporateGroups',
  numberOfBranches: 'branches',
  allOffices: 'allOffices',
  subsidiaries: 'subsidiaries',
  'subsidiaries.company': NESTED_COMPANY,
  affiliates: 'affiliates',
  'affiliates.company': NESTED_COMPANY,
  foreignTrade: 'foreignTrade',
  publicTenders: 'publicTenders',
  operatingResults: 'operatingResults',
  ecofin: 'ecofinSummary',
  'ecofin.turnoverRange': 'ecofin',
  'ecofin.turnoverTrend': 'ecofin',
  'ecofin.enterpriseSize': 'ecofin',
  balanceSheets: 'balanceSheetHistory',
  managers: 'managers',
  'managers.company': NESTED_COMPANY,
  shareholders: 'shareholdersSummary',
  'shareholders.shareType': 'shareholders',
  'shareholders.owners.sinceDate': 'shareholders',
  'shareholders.owners.streetName': 'shareholders',
  'shareholders.owners.zipCode': 'shareholders',
  'shareholders.owners.town': 'shareholders',
  'shareholders.owners.serviceNumber': 'shareholders',
  'shareholders.owners.company': NESTED_COMPANY,
  balanceSheet: 'financialStatements',
  'balanceSheet.debts': 'debts',
  incomeStatement: 'financialStatements',
  ratios: 'ratios',
  rae: 'raeSae',
  sae: 'raeSae',
};

/** The Italian company tiers, in table order (ties in price go to the earlier one). */
export const TIERS = ['IT-start', 'IT-advanced', 'IT-marketing', 'IT-stakeholders', 'IT-aml', 'IT-full'] as const;
export type Tier = (typeof TIERS)[number];

export const TIER_ENDPOINT: Readonly<Record<Tier, Endpoint>> = {
  'IT-start': COMPANY_ENDPOINTS.itStart,
  'IT-advanced': COMPANY_ENDPOINTS.itAdvanced,
  'IT-marketing': COMPANY_ENDPOINTS.itMarketing,
  'IT-stakeholders': COMPANY_ENDPOINTS.itStakeholders,
  'IT-aml': COMPANY_ENDPOINTS.itAml,
  'IT-full': COMPANY_ENDPOINTS.itFull,
};

/**
 * Which answer wins when two hold the same field: the fuller tier, whatever order the answers
 * arrive in (IT-start < IT-advanced < marketing, stakeholders, aml < IT-full). A lower tier only
 * fills what the higher one lacks. Search results (`SEED_RANK`) rank below every tier.
 */
export const TIER_RANK: Readonly<Record<Tier, number>> = {
  'IT-start': 1,
  'IT-advanced': 2,
  'IT-marketing': 3,
  'IT-stakeholders': 3,
  'IT-aml': 3,
  'IT-full': 4,
};

/** The rank of data that came with search results (IT-search enrichment). */
export const SEED_RANK = 0;

/** Tiers whose path accepts an Openapi company id (the composite tiers take only a VAT or tax code). */
export const TIERS_ACCEPTING_ID: ReadonlySet<Tier> = new Set<Tier>(['IT-start', 'IT-advanced']);

const IDENTITY: Facet[] = ['companyName', 'vatCode', 'taxCode', 'lastUpdate', 'address'];
const START: Facet[] = [...IDENTITY, 'openapiId', 'addressDetail', 'activityStatus', 'registryStatus', 'registrationDate', 'sdiCode', 'sdiCodeUpdate'];
/** companyDetails + address of the composite shapes. */
const COMPOSITE: Facet[] = [...IDENTITY, 'registration', 'companyDetails', 'addressNames', 'branches'];

/** Facets only the IT-start/IT-advanced payloads carry (the Openapi id, the register's own fields). */
const ONLY_IN_START_ADVANCED: ReadonlySet<Facet> = new Set<Facet>([
  'openapiId',
  'addressDetail',
  'registryStatus',
  'sdiCode',
  'sdiCodeUpdate',
  'vatGroup',
  'balanceSheetHistory',
  'ateco2025',
  'ceased',
  'taxCodeCeased',
]);

/** What each tier's payload holds (contract: "Response shapes are built from sections"). */
export const TIER_COVERAGE: Readonly<Record<Tier, ReadonlySet<Facet>>> = {
  'IT-start': new Set<Facet>(START),
  'IT-advanced': new Set<Facet>([
    ...START,
    'registration',
    'ateco',
    'ateco2025',
    'detailedLegalForm',
    'activityDates',
    'ceased',
    'taxCodeCeased',
    'pec',
    'vatGroup',
    'ecofinSummary',
    'employeeCount',
    'balanceSheetHistory',
    'shareholdersSummary',
  ]),
  'IT-marketing': new Set<Facet>([
    ...COMPOSITE,
    'activityStatus',
    'ateco',
    'atecoSecondary',
    'internationalClassification',
    'corporateGroups',
    'employees',
    'employeeCount',
    'employeesStatistic',
    'innovativeSmeAndSu',
    'mail',
    'contacts',
    'ecofinSummary',
    'ecofin',
    'webAndSocial',
    'pec',
    'allOffices',
  ]),
  'IT-stakeholders': new Set<Facet>([
    ...COMPOSITE,
    'managers',
    'shareholdersSummary',
    'shareholders',
    'corporateGroups',
    'subsidiaries',
    'affiliates',
    'employees',
    'employeeCount',
    'employeesStatistic',
  ]),
  'IT-aml': new Set<Facet>([
    ...COMPOSITE,
    'managers',
    'shareholdersSummary',
    'shareholders',
    'corporateGroups',
    'subsidiaries',
    'affiliates',
    'foreignTrade',
    'publicTenders',
    'operatingResults',
    'ecofinSummary',
    'ecofin',
    'debts',
    'raeSae',
  ]),
  // The contract: Full holds every section; only what the start/advanced payloads alone carry is missing.
  'IT-full': new Set<Facet>(FACETS.filter((f) => !ONLY_IN_START_ADVANCED.has(f))),
};

/** Euro per call of a tier, from the shared price table. */
export function tierPrice(tier: Tier): number {
  const ep = TIER_ENDPOINT[tier];
  return priceOf(ep.area, ep.method, ep.path);
}

export const covers = (have: ReadonlySet<Facet>, need: Iterable<Facet>): boolean => {
  for (const f of need) if (!have.has(f)) return false;
  return true;
};

/** The facet a path needs: its longest listed prefix; `null` for fields that are not ours. */
export function facetOfPath(path: string): Facet | null {
  let p = path;
  for (;;) {
    const hit = FIELD_FACETS[p];
    if (hit !== undefined) {
      if (hit !== NESTED_COMPANY) return hit;
    } else if (!p.includes('.')) return null;
    const dot = p.lastIndexOf('.');
    if (dot < 0) return null;
    p = p.slice(0, dot);
  }
}

/** Whether a path is another company (its selection belongs to that company's own load). */
export const isNestedCompanyPath = (path: string): boolean => FIELD_FACETS[path] === NESTED_COMPANY;

/** The facets a set of selected `Company` field paths needs. */
export function facetsForPaths(paths: Iterable<string>): Set<Facet> {
  const out = new Set<Facet>();
  for (const path of paths) {
    const f = facetOfPath(path);
    if (f) out.add(f);
  }
  return out;
}

/** The lowest-priced single tier that holds every facet, or null when none does. */
export function cheapestEndpoint(facets: Iterable<Facet>, allowed: readonly Tier[] = TIERS): Tier | null {
  const need = [...facets];
  let best: Tier | null = null;
  for (const tier of allowed) {
    if (!covers(TIER_COVERAGE[tier], need)) continue;
    if (best === null || tierPrice(tier) < tierPrice(best)) best = tier;
  }
  return best;
}

export interface PurchasePlanOptions {
  /**
   * The company is known only by its Openapi id: composite tiers need a VAT or tax code first, so
   * the plan starts with a tier that accepts the id. @default false
   */
  byIdOnly?: boolean;
}

/**
 * The tiers to buy for a set of facets, cheapest first in call order: one tier when one covers
 * everything (always, except when the id-only tiers and the composite-only facets are both needed),
 * otherwise the cheapest combination. Empty when nothing is needed.
 */
export function planPurchase(facets: Iterable<Facet>, options: PurchasePlanOptions = {}): Tier[] {
  const need = new Set(facets);
  if (options.byIdOnly && need.size > 0) need.add('openapiId');
  if (need.size === 0) return [];
  const single = cheapestEndpoint(need);
  if (single) return [single];
  // No single tier: the cheapest combination (6 tiers → 63 subsets), fewer calls on a tie.
  let best: { tiers: Tier[]; price: number } | null = null;
  for (let mask = 1; mask < 1 << TIERS.length; mask++) {
    const tiers = TIERS.filter((_, i) => mask & (1 << i));
    const have = new Set<Facet>(tiers.flatMap((t) => [...TIER_COVERAGE[t]]));
    if (!covers(have, need)) continue;
    const price = tiers.reduce((sum, t) => sum + tierPrice(t), 0);
    if (!best || price < best.price - 1e-9 || (Math.abs(price - best.price) < 1e-9 && tiers.length < best.tiers.length)) best = { tiers, price };
  }
  if (!best) throw new Error(`no company tier covers ${[...need].join(', ')}`);
  // Tiers that accept an id go first: their answer gives the VAT number the others need.
  return [...best.tiers].sort((a, b) => Number(TIERS_ACCEPTING_ID.has(b)) - Number(TIERS_ACCEPTING_ID.has(a)));
}
