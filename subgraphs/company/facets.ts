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
 * - `SOURCE_COVERAGE`: each purchasable source → the facets its payload holds: the tiers (IT-start …
 *   IT-full, `TIER_COVERAGE`: contract shape table + the vendor spec's example payloads, as
 *   `normalize.ts` reads them) and the cheap single-purpose endpoints whose payload holds the same
 *   data as a tier's field (IT-name, IT-address, IT-pec, IT-sdicode, IT-vatgroup).
 *
 * `planPurchase(facets)` picks the set of sources with the least total euro covering them all
 * (sources already cached cost nothing; ties: fewer paid calls, fewer calls, then table order),
 * respecting which identifiers each source accepts; prices come from the one price table
 * (`priceOf`). No GraphQL here: `selection.ts` turns a selection set into paths.
 */
import type { Endpoint } from '../upstream/endpoint.ts';
import {
  COMPOSITE_SECTIONS,
  LINE_SECTIONS,
  RATIO_SECTIONS,
  type CompositeSection,
  type CompositeShape,
  type LineSection,
  type RatioSection,
} from '../../contract/company-payloads.ts';
import { priceOf, priceTable, type PriceTable } from '../../contract/prices.ts';
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
  'pecHistory', // earlier PEC addresses (IT-pec only)
  'sdiCode',
  'sdiCodeUpdate', // when the SDI code was last updated (IT-start, IT-advanced)
  'recordCreation', // when the company entered the Openapi data set (IT-start, IT-advanced)
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
  recordCreationDate: 'recordCreation',
  address: 'address',
  'address.toponym': 'addressDetail',
  'address.street': 'addressDetail',
  'address.streetNumber': 'addressDetail',
  'address.hamlet': 'addressDetail',
  'address.townCode': 'addressDetail',
  // named by cadastral code when the section bought has it, else by town and province code
  'address.municipality': 'address',
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
  pecHistory: 'pecHistory',
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

const IDENTITY: Facet[] = ['companyName', 'vatCode', 'taxCode', 'lastUpdate', 'address'];
const START: Facet[] = [...IDENTITY, 'openapiId', 'addressDetail', 'activityStatus', 'registryStatus', 'registrationDate', 'sdiCode', 'sdiCodeUpdate', 'recordCreation'];

/**
 * The facets each section of the composite shapes holds (the vendor examples, as `normalize.ts`
 * reads them); the balance-sheet and income-statement sections other than `debts` hold
 * `financialStatements`, the ratio sections `ratios`.
 */
const SECTION_FACETS: Readonly<Record<Exclude<CompositeSection, LineSection | RatioSection>, readonly Facet[]>> = {
  companyDetails: ['companyName', 'vatCode', 'taxCode', 'lastUpdate', 'registration', 'companyDetails'],
  legalForm: ['legalForm', 'detailedLegalForm'],
  companyStatus: ['activityStatus'],
  companyDates: ['registrationDate', 'activityDates', 'companyDates'],
  address: ['address', 'addressNames'],
  marketable: ['marketable'],
  branches: ['branches'],
  atecoClassification: ['ateco', 'atecoSecondary'],
  internationalClassification: ['internationalClassification'],
  ecofin: ['ecofinSummary', 'ecofin'],
  employees: ['employees', 'employeeCount'],
  operatingResults: ['operatingResults'],
  employeesStatistic: ['employeesStatistic'],
  innovativeSmeAndSu: ['innovativeSmeAndSu'],
  mail: ['mail'],
  contacts: ['contacts'],
  webAndSocial: ['webAndSocial'],
  pec: ['pec'],
  publicTenders: ['publicTenders'],
  foreignTrade: ['foreignTrade'],
  managers: ['managers'],
  shareholders: ['shareholdersSummary', 'shareholders'],
  corporateGroups: ['corporateGroups'],
  subsidiaries: ['subsidiaries'],
  affiliateCompanies: ['affiliates'],
  artisanBusinessRegistry: ['artisanRegistry'],
  soaCertification: ['soaCertification'],
  rae: ['raeSae'],
  sae: ['raeSae'],
  allOffices: ['allOffices'],
};

const isLineSection = (s: string): s is LineSection => (LINE_SECTIONS as readonly string[]).includes(s);
const isRatioSection = (s: string): s is RatioSection => (RATIO_SECTIONS as readonly string[]).includes(s);

function facetsOfSection(section: CompositeSection): readonly Facet[] {
  if (section === 'debts') return ['debts'];
  if (isLineSection(section)) return ['financialStatements'];
  if (isRatioSection(section)) return ['ratios'];
  return SECTION_FACETS[section];
}

/** What a composite shape's payload holds: the facets of its sections (contract: "Response shapes are built from sections"). */
const compositeCoverage = (shape: CompositeShape): Set<Facet> => new Set<Facet>(COMPOSITE_SECTIONS[shape].flatMap(facetsOfSection));

/** What each tier's payload holds. */
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
  'IT-marketing': compositeCoverage('marketing'),
  'IT-stakeholders': compositeCoverage('stakeholders'),
  'IT-aml': compositeCoverage('aml'),
  'IT-full': compositeCoverage('full'),
};

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

// ---------------------------------------------------------------------------------------------
// Purchasable sources: the tiers and the single-purpose endpoints that hold a tier's field.
// ---------------------------------------------------------------------------------------------

/**
 * Every source the planner may buy, in table order (the last tie-break). The single-purpose
 * endpoints listed are those whose payload holds the same data as a tier's field (vendor examples
 * and the emulator): IT-name (name, keys, id, last update), IT-address (the IT-start registered
 * office), IT-pec (current PEC and its history), IT-sdicode (the SDI code), IT-vatgroup (the three
 * VAT-group flags of IT-advanced). IT-shareholders is not one: it lists only holders above 10 %
 * (less than IT-advanced's `shareHolders`, which costs less).
 */
export const SOURCES = [...TIERS, 'IT-name', 'IT-address', 'IT-pec', 'IT-sdicode', 'IT-vatgroup'] as const;
export type Source = (typeof SOURCES)[number];

/** The single-purpose sources (not tiers). */
export type SinglePurposeSource = Exclude<Source, Tier>;

export const isTier = (s: Source): s is Tier => (TIERS as readonly string[]).includes(s);

export const SOURCE_ENDPOINT: Readonly<Record<Source, Endpoint>> = {
  ...TIER_ENDPOINT,
  'IT-name': COMPANY_ENDPOINTS.itName,
  'IT-address': COMPANY_ENDPOINTS.itAddress,
  'IT-pec': COMPANY_ENDPOINTS.itPec,
  'IT-sdicode': COMPANY_ENDPOINTS.itSdicode,
  'IT-vatgroup': COMPANY_ENDPOINTS.itVatgroup,
};

/** Name, keys, Openapi id and last update: what IT-name's record holds (its address is the town alone). */
const NAME_RECORD: Facet[] = ['companyName', 'vatCode', 'taxCode', 'openapiId', 'lastUpdate'];

/** What each source's payload holds. */
export const SOURCE_COVERAGE: Readonly<Record<Source, ReadonlySet<Facet>>> = {
  ...TIER_COVERAGE,
  'IT-name': new Set<Facet>(NAME_RECORD),
  // The same `address.registeredOffice` as IT-start.
  'IT-address': new Set<Facet>([...NAME_RECORD, 'address', 'addressDetail']),
  'IT-pec': new Set<Facet>(['pec', 'pecHistory']),
  'IT-sdicode': new Set<Facet>(['sdiCode']),
  'IT-vatgroup': new Set<Facet>(['vatGroup']),
};

/** Kinds of identifier a company may be known by. */
export type IdentifierKind = 'vatCode' | 'taxCode' | 'id';

const ANY_ID: ReadonlySet<IdentifierKind> = new Set<IdentifierKind>(['vatCode', 'taxCode', 'id']);
const VAT_OR_TAX: ReadonlySet<IdentifierKind> = new Set<IdentifierKind>(['vatCode', 'taxCode']);

/** The identifiers each source's path accepts (vendor spec parameter names). */
export const SOURCE_ACCEPTS: Readonly<Record<Source, ReadonlySet<IdentifierKind>>> = {
  'IT-start': ANY_ID,
  'IT-advanced': ANY_ID,
  'IT-marketing': VAT_OR_TAX,
  'IT-stakeholders': VAT_OR_TAX,
  'IT-aml': VAT_OR_TAX,
  'IT-full': VAT_OR_TAX,
  'IT-name': ANY_ID,
  'IT-address': ANY_ID,
  'IT-pec': ANY_ID,
  'IT-sdicode': ANY_ID,
  'IT-vatgroup': new Set<IdentifierKind>(['vatCode', 'id']),
};

/** Tiers whose path accepts an Openapi company id (the composite tiers take only a VAT or tax code). */
export const TIERS_ACCEPTING_ID: ReadonlySet<Tier> = new Set<Tier>(TIERS.filter((t) => SOURCE_ACCEPTS[t].has('id')));

/**
 * Precedence when two sources hold the same field (see `TIER_RANK`): a single-purpose endpoint
 * ranks with IT-start (its data is the register's own, like IT-start's).
 */
export const SOURCE_RANK: Readonly<Record<Source, number>> = {
  ...TIER_RANK,
  'IT-name': 1,
  'IT-address': 1,
  'IT-pec': 1,
  'IT-sdicode': 1,
  'IT-vatgroup': 1,
};

/** Each source's price, per price table (`sourcePrice`). */
const SOURCE_PRICES = new WeakMap<PriceTable, Map<Source, number>>();

/** Euro per call of a source, from the shared price table. */
export function sourcePrice(source: Source): number {
  // The planner weighs every combination of sources (2^11) per question: prices are read once per
  // price table, not parsed from the endpoint's path each time (that made the search slow).
  const table = priceTable();
  let prices = SOURCE_PRICES.get(table);
  if (!prices) SOURCE_PRICES.set(table, (prices = new Map<Source, number>()));
  let price = prices.get(source);
  if (price === undefined) {
    const ep = SOURCE_ENDPOINT[source];
    prices.set(source, (price = priceOf(ep.area, ep.method, ep.path, table)));
  }
  return price;
}

/** Euro per call of a tier. */
export const tierPrice = (tier: Tier): number => sourcePrice(tier);

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
   * The company is known only by its Openapi id: sources that need a VAT or tax code are usable
   * only beside one that accepts the id and answers with the VAT number. @default false
   */
  byIdOnly?: boolean;
  /**
   * The identifiers known for the company (overrides `byIdOnly`). A source that accepts none of
   * them is usable only beside a source that accepts one and answers with one it accepts.
   * @default every kind (`byIdOnly`: the id alone)
   */
  known?: ReadonlySet<IdentifierKind>;
  /** Sources already in the upstream client's cache for this company: they cost nothing. @default none */
  cached?: ReadonlySet<Source>;
  /** Sources the plan may use. @default SOURCES */
  allowed?: readonly Source[];
}

/** What a plan costs: euro of its paid calls, number of paid calls and of sources. */
export interface PlanCost {
  euro: number;
  paidCalls: number;
  calls: number;
}

export function planCost(plan: readonly Source[], cached: ReadonlySet<Source> = new Set()): PlanCost {
  let euro = 0;
  let paidCalls = 0;
  for (const s of plan) {
    if (cached.has(s)) continue;
    euro += sourcePrice(s);
    paidCalls++;
  }
  return { euro: Math.round(euro * 1e6) / 1e6, paidCalls, calls: plan.length };
}

/** The identifier kinds a source's answer tells (its keys). */
const KINDS_TOLD: ReadonlyArray<readonly [Facet, IdentifierKind]> = [
  ['vatCode', 'vatCode'],
  ['taxCode', 'taxCode'],
  ['openapiId', 'id'],
];

/**
 * Whether every source of `plan` can be called with what is known, or with a key told by a
 * source of the plan that can be called directly (one step: that source is called first).
 */
export function planIsCallable(plan: readonly Source[], known: ReadonlySet<IdentifierKind>): boolean {
  const direct = plan.filter((s) => [...SOURCE_ACCEPTS[s]].some((k) => known.has(k)));
  if (direct.length === plan.length) return true;
  const learnt = new Set(known);
  for (const s of direct) for (const [f, k] of KINDS_TOLD) if (SOURCE_COVERAGE[s].has(f)) learnt.add(k);
  return plan.every((s) => [...SOURCE_ACCEPTS[s]].some((k) => learnt.has(k)));
}

/** `a` better than `b`: less euro, then fewer paid calls, then fewer calls, then table order. */
function better(a: PlanCost, aIdx: readonly number[], b: PlanCost, bIdx: readonly number[]): boolean {
  if (Math.abs(a.euro - b.euro) > 1e-9) return a.euro < b.euro;
  if (a.paidCalls !== b.paidCalls) return a.paidCalls < b.paidCalls;
  if (a.calls !== b.calls) return a.calls < b.calls;
  for (let i = 0; i < Math.min(aIdx.length, bIdx.length); i++) if (aIdx[i] !== bIdx[i]) return aIdx[i] < bIdx[i];
  return false;
}

/**
 * The sources to buy for a set of facets: the least total euro covering them all (sources in
 * `cached` are free), on a tie fewer paid calls, fewer calls, then table order; in table order.
 * Every source must be callable with the identifiers known (`planIsCallable`). Empty when
 * nothing is needed; throws when no combination covers the need.
 */
export function planPurchase(facets: Iterable<Facet>, options: PurchasePlanOptions = {}): Source[] {
  // The same question comes back with every operation (the gateway's estimate, then the loader):
  // plans are remembered per price table, the search (2^candidates) runs once per distinct question.
  const need = [...new Set(facets)];
  const known = options.known ?? (options.byIdOnly ? new Set<IdentifierKind>(['id']) : ANY_ID);
  const key = `${[...need].sort().join(',')}|${[...known].sort().join(',')}|${[...(options.cached ?? [])].sort().join(',')}|${options.allowed ? options.allowed.join(',') : '*'}`;
  const table = priceTable();
  let plans = PLANS.get(table);
  if (!plans) PLANS.set(table, (plans = new Map<string, readonly Source[]>()));
  let plan = plans.get(key);
  if (!plan) {
    plan = searchPurchase(need, { ...options, known });
    if (plans.size >= 2_000) plans.clear();
    plans.set(key, plan);
  }
  return [...plan];
}

/** Plans found, per price table and question (see `planPurchase`). */
const PLANS = new WeakMap<PriceTable, Map<string, readonly Source[]>>();

function searchPurchase(facets: Iterable<Facet>, options: PurchasePlanOptions): Source[] {
  const need = [...new Set(facets)];
  if (need.length === 0) return [];
  const known = options.known ?? (options.byIdOnly ? new Set<IdentifierKind>(['id']) : ANY_ID);
  const cached = options.cached ?? new Set<Source>();
  const allowed = options.allowed ?? SOURCES;
  const bit = new Map<Facet, bigint>(need.map((f, i) => [f, 1n << BigInt(i)]));
  const full = (1n << BigInt(need.length)) - 1n;
  const maskOf = (s: Source): bigint => {
    let m = 0n;
    for (const f of SOURCE_COVERAGE[s]) m |= bit.get(f) ?? 0n;
    return m;
  };
  const tellsKey = (s: Source): boolean => KINDS_TOLD.some(([f, k]) => !known.has(k) && SOURCE_COVERAGE[s].has(f));
  // Candidates: sources holding a needed facet, and (when a key is missing) those telling one.
  const candidates = SOURCES.filter((s) => allowed.includes(s) && (maskOf(s) !== 0n || tellsKey(s)));
  const masks = candidates.map(maskOf);
  const index = candidates.map((s) => SOURCES.indexOf(s));
  const n = candidates.length;
  const union: bigint[] = new Array<bigint>(1 << n).fill(0n);
  let best: { plan: Source[]; cost: PlanCost; idx: number[] } | null = null;
  for (let m = 1; m < 1 << n; m++) {
    const low = m & -m;
    const i = 31 - Math.clz32(low);
    union[m] = union[m ^ low] | masks[i];
    if (union[m] !== full) continue;
    const picked: number[] = [];
    for (let j = 0; j < n; j++) if (m & (1 << j)) picked.push(j);
    const plan = picked.map((j) => candidates[j]);
    const cost = planCost(plan, cached);
    const idx = picked.map((j) => index[j]);
    if (best && !better(cost, idx, best.cost, best.idx)) continue;
    if (!planIsCallable(plan, known)) continue;
    best = { plan, cost, idx };
  }
  if (!best) throw new Error(`no company source covers ${need.join(', ')}`);
  return best.plan;
}
