/**
 * The company area of the REST suite: its endpoints (one table; paths from the vendor spec) and the
 * shapes of the payloads they answer with (`data` of the envelope, exactly as the spec's examples).
 *
 * Cache policy: company data changes rarely, so lookups are kept 24 h and searches 1 h; monitoring
 * requests are never cached. The four composite tiers answer slowly (302 → IT-check_id), which the
 * upstream client follows; their per-attempt timeout covers the vendor's own 30-second wait.
 */
import { defineEndpoints, type Endpoint } from '../upstream/endpoint.ts';

const DAY = 24 * 60 * 60;
const HOUR = 60 * 60;
/** The vendor waits up to 30 s before answering 302; leave room for the answer itself. */
const SLOW_TIMEOUT_MS = 35_000;

/** Countries with their own `<CC>-start` and `<CC>-advanced` endpoints. */
export const DEDICATED_COUNTRIES = ['FR', 'DE', 'ES', 'PT', 'GB', 'BE', 'AT', 'CH', 'PL'] as const;
export type DedicatedCountry = (typeof DEDICATED_COUNTRIES)[number];

const lookup = (path: string, extra: Partial<Endpoint> = {}): Endpoint => ({ area: 'company', method: 'GET', path, ttl: DAY, ...extra });
const slow = (path: string): Endpoint => lookup(path, { slow: true, timeoutMs: SLOW_TIMEOUT_MS });

export const COMPANY_ENDPOINTS = defineEndpoints({
  // Italian tiers, cheapest first (prices: subgraphs/upstream/prices.ts). `{id}` is a VAT number,
  // a tax code, or (start/advanced only) an Openapi company id.
  itStart: lookup('/IT-start/{id}'),
  itAdvanced: lookup('/IT-advanced/{id}'),
  itMarketing: slow('/IT-marketing/{id}'),
  itStakeholders: slow('/IT-stakeholders/{id}'),
  itAml: slow('/IT-aml/{id}'),
  itFull: slow('/IT-full/{id}'),
  // Single-purpose Italian endpoints (one section each). `{id}`: VAT number, tax code or Openapi id,
  // except IT-vatgroup (VAT number or id; `?taxCode=` adds the tax code's relation to the group)
  // and IT-pa / IT-splitpayment (tax code or VAT number).
  itName: lookup('/IT-name/{id}'),
  itAddress: lookup('/IT-address/{id}'),
  itPec: lookup('/IT-pec/{id}'),
  itSdicode: lookup('/IT-sdicode/{id}'),
  itVatgroup: lookup('/IT-vatgroup/{id}'),
  /** `?date=YYYY-MM-DD`: ceased on or before that day. The revenue agency's answer is live: kept an hour. */
  itClosed: lookup('/IT-closed/{id}', { ttl: HOUR }),
  itUbo: lookup('/IT-ubo/{id}'),
  itPa: lookup('/IT-pa/{id}'),
  itSplitpayment: lookup('/IT-splitpayment/{id}'),
  /** Where a slow request's dataset is polled (followed by the upstream client, listed for completeness). */
  itCheckId: { area: 'company', method: 'GET', path: '/IT-check_id/{id}', ttl: 0 },
  itSearch: lookup('/IT-search', { ttl: HOUR, timeoutMs: 20_000 }),
  /** IT-search with `dryRun=1`: the count and price sit outside the usual envelope. */
  itSearchDryRun: lookup('/IT-search', { ttl: HOUR, decode: 'raw' }),
  itLegalForms: lookup('/IT-legalforms'),
  itLegalForm: lookup('/IT-legalforms/{code}'),
  // Europe and worldwide
  euStart: lookup('/EU-start/{id}'),
  frStart: lookup('/FR-start/{id}'),
  frAdvanced: lookup('/FR-advanced/{id}'),
  deStart: lookup('/DE-start/{id}'),
  deAdvanced: lookup('/DE-advanced/{id}'),
  esStart: lookup('/ES-start/{id}'),
  esAdvanced: lookup('/ES-advanced/{id}'),
  ptStart: lookup('/PT-start/{id}'),
  ptAdvanced: lookup('/PT-advanced/{id}'),
  gbStart: lookup('/GB-start/{id}'),
  gbAdvanced: lookup('/GB-advanced/{id}'),
  beStart: lookup('/BE-start/{id}'),
  beAdvanced: lookup('/BE-advanced/{id}'),
  atStart: lookup('/AT-start/{id}'),
  atAdvanced: lookup('/AT-advanced/{id}'),
  chStart: lookup('/CH-start/{id}'),
  chAdvanced: lookup('/CH-advanced/{id}'),
  plStart: lookup('/PL-start/{id}'),
  plAdvanced: lookup('/PL-advanced/{id}'),
  wwStart: lookup('/WW-start/{country}/{id}'),
  wwAdvanced: lookup('/WW-advanced/{country}/{id}'),
  wwTop: lookup('/WW-top/{country}/{id}'),
  frSearch: lookup('/FR-search', { ttl: HOUR, timeoutMs: 20_000 }),
  frSearchDryRun: lookup('/FR-search', { ttl: HOUR, decode: 'raw' }),
  // Monitoring (never cached; creation is paid and never retried blindly by the client)
  monitorList: { area: 'company', method: 'GET', path: '/monitor', ttl: 0 },
  monitorGet: { area: 'company', method: 'GET', path: '/monitor/{id}', ttl: 0 },
  monitorCreate: { area: 'company', method: 'POST', path: '/monitor', ttl: 0 },
  monitorDelete: { area: 'company', method: 'DELETE', path: '/monitor/{id}', ttl: 0 },
});

export type CompanyEndpointName = keyof typeof COMPANY_ENDPOINTS;

/** The start/advanced endpoint of a country that has its own. */
export function countryEndpoint(country: DedicatedCountry, level: 'START' | 'ADVANCED'): Endpoint {
  const key = `${country.toLowerCase()}${level === 'START' ? 'Start' : 'Advanced'}` as CompanyEndpointName;
  return COMPANY_ENDPOINTS[key];
}

// ---------------------------------------------------------------------------------------------
// Vendor payloads (the `data` of the envelope). Every field optional and nullable: the vendor's
// examples and schemas disagree in places, and the sandbox answers "may be incomplete".
// ---------------------------------------------------------------------------------------------

type N<T> = T | null | undefined;

export interface VCode {
  code?: N<string>;
  description?: N<string>;
}

export interface VGps {
  coordinates?: N<number[]>;
}

/** `address.registeredOffice` of IT-start/IT-advanced/IT-search. */
export interface VItRegisteredOffice {
  toponym?: N<string>;
  street?: N<string>;
  streetNumber?: N<string>;
  streetName?: N<string>;
  town?: N<string>;
  hamlet?: N<string>;
  province?: N<string>;
  zipCode?: N<string>;
  gps?: N<VGps>;
  townCode?: N<string>;
  region?: N<VCode>;
}

/** One element of IT-start `data` (also IT-search with `dataEnrichment=start`). */
export interface VItStart {
  taxCode?: N<string>;
  companyName?: N<string>;
  vatCode?: N<string>;
  address?: N<{ registeredOffice?: N<VItRegisteredOffice> }>;
  /** ATTIVA | CESSATA | REGISTRATA | INATTIVA | SOSPESA | IN_ISCRIZIONE */
  activityStatus?: N<string>;
  creationTimestamp?: N<number>;
  lastUpdateTimestamp?: N<number>;
  sdiCode?: N<string>;
  sdiCodeTimestamp?: N<number>;
  id?: N<string>;
  registrationDate?: N<string>;
}

export interface VBalanceSheetYear {
  year?: N<number>;
  employees?: N<number>;
  balanceSheetDate?: N<string>;
  turnover?: N<number>;
  netWorth?: N<number>;
  shareCapital?: N<number>;
  totalStaffCost?: N<number>;
  totalAssets?: N<number>;
  avgGrossSalary?: N<number>;
}

export interface VVatGroup {
  vatGroupParticipation?: N<boolean>;
  isVatGroupLeader?: N<boolean>;
  registryOk?: N<boolean>;
}

/** One element of IT-advanced `data` (also IT-search with `dataEnrichment=advanced`). */
export interface VItAdvanced extends VItStart {
  reaCode?: N<string>;
  cciaa?: N<string>;
  atecoClassification?: N<{ ateco?: N<VCode>; ateco2022?: N<VCode>; ateco2007?: N<VCode> }>;
  detailedLegalForm?: N<VCode>;
  startDate?: N<string>;
  endDate?: N<string>;
  pec?: N<string>;
  cessata?: N<boolean>;
  /** The spec's schema says boolean; its example has a timestamp. */
  taxCodeCeased?: N<boolean | number>;
  taxCodeCeasedTimestamp?: N<number>;
  /** The example spells it `gruppo_iva`, the schema `vatGroup`. */
  gruppo_iva?: N<VVatGroup>;
  vatGroup?: N<VVatGroup>;
  balanceSheets?: N<{ last?: N<VBalanceSheetYear>; all?: N<VBalanceSheetYear[]> }>;
  shareHolders?: N<Array<{ companyName?: N<string>; name?: N<string>; surname?: N<string>; taxCode?: N<string>; percentShare?: N<number> }>>;
}

export interface VCompanyDetails {
  vatCode?: N<string>;
  taxCode?: N<string>;
  lastUpdateDate?: N<string>;
  cciaa?: N<string>;
  reaCode?: N<string>;
  /** The contract calls it serviceNumber, the spec openapiNumber. */
  openapiNumber?: N<string>;
  serviceNumber?: N<string>;
  companyName?: N<string>;
  officeType?: N<VCode>;
}

export interface VAddress {
  streetName?: N<string>;
  zipCode?: N<string>;
  town?: N<string>;
  province?: N<VCode>;
  region?: N<VCode>;
  country?: N<VCode>;
}

export interface VRole {
  role?: N<VCode>;
  roleStartDate?: N<string>;
}

export interface VManager {
  name?: N<string>;
  surname?: N<string>;
  companyName?: N<string>;
  roles?: N<VRole[]>;
  gender?: N<VCode>;
  taxCode?: N<string>;
  birthDate?: N<string>;
  age?: N<number>;
  birthTown?: N<string>;
  isLegalRepresentative?: N<boolean>;
}

export interface VShareholderInfo {
  taxCode?: N<string>;
  name?: N<string>;
  surname?: N<string>;
  companyName?: N<string>;
  openapiNumber?: N<string>;
  serviceNumber?: N<string>;
  sinceDate?: N<string>;
  streetName?: N<string>;
  zipCode?: N<string>;
  town?: N<string>;
}

export interface VShareholding {
  shareholdersInformation?: N<VShareholderInfo[]>;
  percentShare?: N<number>;
  shareType?: N<VCode>;
}

export interface VFinancialLine {
  code?: N<string>;
  value?: N<number>;
}

export interface VOffice {
  companyDetails?: N<VCompanyDetails>;
  companyStatus?: N<{ activityStatus?: N<VCode> }>;
  address?: N<VAddress>;
}

/**
 * `data` of IT-marketing, IT-stakeholders, IT-aml and IT-full (and of IT-check_id when done): an
 * object of sections. Each tier holds a subset (contract "Company data objects").
 */
export interface VComposite {
  companyDetails?: N<VCompanyDetails>;
  legalForm?: N<{ legalForm?: N<VCode>; detailedLegalForm?: N<VCode> }>;
  companyStatus?: N<{ activityStatus?: N<VCode> }>;
  companyDates?: N<{ registrationDate?: N<string>; startDate?: N<string>; incorporationDate?: N<string>; foundingDate?: N<string>; endDate?: N<string> }>;
  address?: N<VAddress>;
  marketable?: N<{ isMarketable?: N<boolean> }>;
  branches?: N<{ numberOfBranches?: N<number> }>;
  atecoClassification?: N<{ ateco?: N<VCode>; secondaryAteco?: N<string>; ateco2022?: N<VCode>; secondaryAteco2022?: N<string> }>;
  internationalClassification?: N<{ nace?: N<VCode>; primarySic?: N<VCode>; secondarySic?: N<string> }>;
  ecofin?: N<{
    balanceSheetDate?: N<string>;
    turnoverRange?: N<VCode>;
    turnoverYear?: N<number>;
    turnover?: N<number>;
    turnoverTrend?: N<number>;
    shareCapital?: N<number>;
    netWorth?: N<number>;
    enterpriseSize?: N<VCode>;
  }>;
  employees?: N<{ employeeRange?: N<VCode>; employee?: N<number>; employeeTrend?: N<number> }>;
  employeesStatistic?: N<Record<string, N<number>>>;
  innovativeSmeAndSu?: N<{ isInnovativeStartUp?: N<boolean>; isInnovativeSme?: N<boolean> }>;
  mail?: N<{ email?: N<string> }>;
  contacts?: N<{ telephoneNumber?: N<string>; fax?: N<string> }>;
  webAndSocial?: N<Record<string, N<string | boolean>>>;
  pec?: N<string>;
  publicTenders?: N<Array<{ year?: N<string | number>; applied?: N<number>; won?: N<number>; value?: N<number> }>>;
  foreignTrade?: N<{
    isImporter?: N<boolean>;
    importPercentShare?: N<number>;
    importCountries?: N<string>;
    isExporter?: N<boolean>;
    exportPercentShare?: N<number>;
    exportCountries?: N<string>;
  }>;
  managers?: N<VManager[]>;
  shareholders?: N<VShareholding[]>;
  corporateGroups?: N<{
    belongsToGroup?: N<boolean>;
    groupName?: N<string>;
    holdingCompanyName?: N<string>;
    holdingCountry?: N<VCode>;
    nationalParentCompany?: N<{ companyName?: N<string>; streetName?: N<string>; town?: N<string>; zipCode?: N<string>; province?: N<VCode>; country?: N<VCode> }>;
    hasForeignParentCompany?: N<boolean>;
  }>;
  subsidiaries?: N<Array<{ taxCode?: N<string>; companyName?: N<string>; streetName?: N<string>; zipCode?: N<string>; town?: N<string>; province?: N<VCode> }>>;
  /** The contract says an object; accept an array as well. */
  affiliateCompanies?: N<VAffiliate | VAffiliate[]>;
  artisanBusinessRegistry?: N<{ belongsToArtisanBusinessRegistry?: N<boolean>; artisanBusinessRegistry?: N<{ registrationDate?: N<string>; registrationNumber?: N<string> }> }>;
  soaCertification?: N<{ hasSoaCertification?: N<boolean> }>;
  operatingResults?: N<Record<string, N<number>>>;
  rae?: N<VCode>;
  sae?: N<VCode>;
  allOffices?: N<VOffice[]>;
  /** Balance-sheet and income-statement sections and ratio sections, by name. */
  [section: string]: unknown;
}

export interface VAffiliate {
  taxCode?: N<string>;
  companyName?: N<string>;
  percentShare?: N<number>;
}

/** `data` element of EU-start (VIES). */
export interface VEuStart {
  valid?: N<boolean>;
  formatValid?: N<boolean>;
  countryCode?: N<string>;
  vatCode?: N<string>;
  companyName?: N<string>;
  companyAddress?: N<string>;
}

export interface VForeignOffice {
  street?: N<string>;
  streetNumber?: N<string>;
  streetName?: N<string>;
  town?: N<string>;
  /** A number for BE and AT in the spec examples. */
  zipCode?: N<string | number>;
  country?: N<string>;
  gps?: N<VGps>;
  townCode?: N<string>;
  department?: N<VCode>;
  region?: N<VCode>;
}

export interface VForeignBalanceSheet {
  year?: N<number>;
  balanceSheetDate?: N<string>;
  employees?: N<number>;
  turnover?: N<number>;
  netWorth?: N<number>;
  operatingRevenue?: N<number>;
  equity?: N<number>;
  totalAssets?: N<number>;
}

export interface VClassificationItem extends VCode {
  section?: N<string>;
}

/** `data` element of the country start/advanced endpoints, WW-* and FR-search. */
export interface VForeign {
  id?: N<string>;
  lastUpdateTimestamp?: N<number>;
  creationTimestamp?: N<number>;
  companyName?: N<string>;
  nativeCompanyName?: N<string>;
  tradingName?: N<string>;
  aliasName?: N<string>;
  companySize?: N<string>;
  vatCode?: N<string>;
  taxCode?: N<string>;
  companyNumber?: N<string>;
  leiCode?: N<string>;
  siretCode?: N<string>;
  sirenCode?: N<string>;
  coCode?: N<string>;
  regonNumber?: N<string>;
  establishmentNumber?: N<string>;
  activityStatus?: N<string>;
  registrationDate?: N<string>;
  incorporationDate?: N<string>;
  creditWorthy?: N<number | boolean>;
  address?: N<{ registeredOffice?: N<VForeignOffice>; branchOffice?: N<VForeignOffice> }>;
  contacts?: N<{ phone?: N<string>; fax?: N<string>; website?: N<string> }>;
  internationalClassification?: N<{
    nace?: N<VCode | { primary?: N<VClassificationItem[]>; secondary?: N<VClassificationItem[]> }>;
    naics?: N<VCode | { primary?: N<VClassificationItem[]>; secondary?: N<VClassificationItem[]> }>;
    sic?: N<VCode | { primary?: N<VClassificationItem[]>; secondary?: N<VClassificationItem[]> }>;
    naf?: N<VCode>;
  }>;
  detailedLegalForm?: N<VCode>;
  balanceSheets?: N<{ last?: N<VForeignBalanceSheet>; all?: N<VForeignBalanceSheet[]> }>;
  markers?: N<Array<{ label?: N<string>; number?: N<string>; types?: N<string[]> }>>;
  /** FR-advanced: the example says `allOffices`, the schema `allOffice`. */
  allOffices?: N<VForeignSubOffice[]>;
  allOffice?: N<VForeignSubOffice[]>;
}

export interface VForeignSubOffice {
  siretCode?: N<string>;
  companyName?: N<string>;
  activityStatus?: N<string>;
  address?: N<{ registeredOffice?: N<VForeignOffice>; branchOffice?: N<VForeignOffice> }>;
}

/** `data` element of IT-legalforms. */
export interface VLegalForm {
  code?: N<string>;
  description?: N<string>;
}

/** Body of `POST /monitor`. */
export interface VMonitorCreateBody {
  code: string;
  dataset: string;
  monitoredFields?: string[];
  callback?: { url: string; method: 'JSON' };
  autorenew?: boolean;
  cciaa?: string;
}

/** `data` of `POST /monitor` and `GET /monitor/{id}`; elements of `GET /monitor` hold a summary of it. */
export interface VMonitor {
  code?: N<string>;
  dataset?: N<string>;
  monitoredFields?: N<string[]>;
  owner?: N<string>;
  createdOn?: N<string>;
  companyId?: N<string>;
  vatCode?: N<string>;
  taxCode?: N<string>;
  companyName?: N<string>;
  updatedFields?: unknown;
  latestDataset?: unknown;
  previousDataset?: unknown;
  checkedOn?: N<string>;
  nextOn?: N<string>;
  expiresOn?: N<string>;
  autorenew?: N<boolean>;
  id?: N<string>;
  /** The vendor's callback object (in a tracked record: the caller's, never the layer's). */
  callback?: unknown;
}
