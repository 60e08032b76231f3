/**
 * The normalized company model: one shape for every upstream tier (IT-start … IT-full), with the
 * contract's sections under English names. `normalize.ts` builds it from vendor payloads; the
 * resolvers read it. Field names match `schema.graphql`, so a section can be returned as is.
 * Every field is optional: a tier fills only the sections it holds (see `facets.ts`).
 */
import type {
  BalanceSheetSection,
  CompanyDatesField,
  EmployeeStatisticsField,
  IncomeStatementSection,
  OperatingResultsField,
  RATIO_FIELDS,
  RatioSection,
  WebAndSocialLink,
} from '../../contract/company-payloads.ts';

export interface CodedValueModel {
  code: string;
  description: string | null;
}

export interface GeoPointModel {
  latitude: number;
  longitude: number;
}

export type OfficeTypeCode = 'SSL' | 'SL' | 'UL' | 'S' | 'D';
export type ActivityStatusCode = 'A' | 'CF' | 'CS' | 'I' | 'IF' | 'IS' | 'S';
export type RegistryStatusCode = 'ACTIVE' | 'CEASED' | 'REGISTERED' | 'INACTIVE' | 'SUSPENDED' | 'REGISTRATION_PENDING';
export type LegalFormCategoryCode = 'SC' | 'AL' | 'SP';
export type GenderCode = 'M' | 'W';

export interface AddressModel {
  streetName?: string | null;
  toponym?: string | null;
  street?: string | null;
  streetNumber?: string | null;
  hamlet?: string | null;
  zipCode?: string | null;
  town?: string | null;
  townCode?: string | null;
  province?: CodedValueModel | null;
  region?: CodedValueModel | null;
  country?: CodedValueModel | null;
  coordinates?: GeoPointModel | null;
}

export type CompanyDatesModel = { [F in CompanyDatesField]?: string | null };

export interface AtecoClassificationModel {
  ateco?: CodedValueModel | null;
  ateco2025?: CodedValueModel | null;
  secondaryAteco?: string | null;
  ateco2022?: CodedValueModel | null;
  secondaryAteco2022?: string | null;
}

export interface InternationalClassificationModel {
  primarySic?: CodedValueModel | null;
  secondarySic?: string | null;
  nace?: CodedValueModel | null;
}

export interface EmployeesModel {
  range?: CodedValueModel | null;
  count?: number | null;
  trend?: number | null;
}

export type EmployeeStatisticsModel = { [F in EmployeeStatisticsField]?: number | null };

export interface ContactsModel {
  telephoneNumber?: string | null;
  fax?: string | null;
}

export type WebAndSocialModel = { hasSocial?: boolean | null } & { [L in WebAndSocialLink]?: string | null };

export interface VatGroupModel {
  participates?: boolean | null;
  isLeader?: boolean | null;
  registryOk?: boolean | null;
}

export interface ArtisanRegistryModel {
  isRegistered?: boolean | null;
  registrationDate?: string | null;
  registrationNumber?: string | null;
}

export interface ParentCompanyModel {
  companyName?: string | null;
  streetName?: string | null;
  town?: string | null;
  zipCode?: string | null;
  province?: CodedValueModel | null;
  country?: CodedValueModel | null;
}

export interface CorporateGroupModel {
  belongsToGroup?: boolean | null;
  groupName?: string | null;
  holdingCompanyName?: string | null;
  holdingCountry?: CodedValueModel | null;
  nationalParentCompany?: ParentCompanyModel | null;
  hasForeignParentCompany?: boolean | null;
}

export interface OfficeModel {
  companyName?: string | null;
  vatCode?: string | null;
  taxCode?: string | null;
  serviceNumber?: string | null;
  chamberOfCommerce?: string | null;
  reaCode?: string | null;
  officeType?: OfficeTypeCode | null;
  rawOfficeType?: string | null;
  lastUpdateDate?: string | null;
  activityStatus?: ActivityStatusCode | null;
  rawActivityStatus?: string | null;
  address?: AddressModel | null;
}

export interface SubsidiaryModel {
  taxCode?: string | null;
  companyName?: string | null;
  streetName?: string | null;
  zipCode?: string | null;
  town?: string | null;
  province?: CodedValueModel | null;
}

export interface AffiliateModel {
  taxCode?: string | null;
  companyName?: string | null;
  percentShare?: number | null;
}

export interface ForeignTradeModel {
  isImporter?: boolean | null;
  importPercentShare?: number | null;
  importCountries?: string | null;
  isExporter?: boolean | null;
  exportPercentShare?: number | null;
  exportCountries?: string | null;
}

export interface PublicTenderYearModel {
  year?: string | null;
  applied?: number | null;
  won?: number | null;
  value?: number | null;
}

export type OperatingResultsModel = { [F in OperatingResultsField]?: number | null };

export interface EcofinModel {
  balanceSheetDate?: string | null;
  turnoverRange?: CodedValueModel | null;
  turnoverYear?: number | null;
  turnover?: number | null;
  turnoverTrend?: number | null;
  shareCapital?: number | null;
  netWorth?: number | null;
  enterpriseSize?: CodedValueModel | null;
}

export interface BalanceSheetSummaryModel {
  year: number;
  balanceSheetDate?: string | null;
  employees?: number | null;
  turnover?: number | null;
  netWorth?: number | null;
  shareCapital?: number | null;
  totalStaffCost?: number | null;
  totalAssets?: number | null;
  averageGrossSalary?: number | null;
}

export interface ManagerRoleModel {
  role: CodedValueModel;
  startDate?: string | null;
}

export interface ManagerPersonModel {
  kind: 'person';
  taxCode?: string | null;
  roles: ManagerRoleModel[];
  isLegalRepresentative?: boolean | null;
  name?: string | null;
  surname?: string | null;
  gender?: GenderCode | null;
  rawGender?: string | null;
  birthDate?: string | null;
  age?: number | null;
  birthTown?: string | null;
}

export interface ManagerCompanyModel {
  kind: 'company';
  taxCode?: string | null;
  roles: ManagerRoleModel[];
  isLegalRepresentative?: boolean | null;
  companyName?: string | null;
}

export type ManagerModel = ManagerPersonModel | ManagerCompanyModel;

export interface ShareholderPersonModel {
  kind: 'person';
  taxCode?: string | null;
  sinceDate?: string | null;
  streetName?: string | null;
  zipCode?: string | null;
  town?: string | null;
  name?: string | null;
  surname?: string | null;
}

export interface ShareholderCompanyModel {
  kind: 'company';
  taxCode?: string | null;
  sinceDate?: string | null;
  streetName?: string | null;
  zipCode?: string | null;
  town?: string | null;
  companyName?: string | null;
  serviceNumber?: string | null;
}

export type ShareholderModel = ShareholderPersonModel | ShareholderCompanyModel;

export interface ShareholdingModel {
  percentShare?: number | null;
  shareType?: CodedValueModel | null;
  owners: ShareholderModel[];
}

export interface FinancialLineModel {
  code: string;
  value: number | null;
}

export type BalanceSheetSectionsModel = { [K in BalanceSheetSection]?: FinancialLineModel[] | null };
export type IncomeStatementSectionsModel = { [K in IncomeStatementSection]?: FinancialLineModel[] | null };

/** Ratio sections and their fields (`contract/company-payloads.ts`), all numbers. */
export type FinancialRatiosModel = { [S in RatioSection]?: { [F in (typeof RATIO_FIELDS)[S][number]]?: number | null } | null };

/** One company, as much of it as the tiers bought so far hold. */
export interface CompanyModel {
  vatCode?: string | null;
  taxCode?: string | null;
  id?: string | null;
  companyName?: string | null;
  serviceNumber?: string | null;
  chamberOfCommerce?: string | null;
  reaCode?: string | null;
  officeType?: OfficeTypeCode | null;
  /** The office-type code as the upstream wrote it (kept when the enum does not know it). */
  rawOfficeType?: string | null;
  lastUpdateDate?: string | null;
  /** When the company entered the Openapi data set (IT-start/IT-advanced `creationTimestamp`). */
  recordCreationDate?: string | null;
  address?: AddressModel | null;
  activityStatus?: ActivityStatusCode | null;
  /** The status as the upstream wrote it: a composite tier's code, or IT-start's register status. */
  rawActivityStatus?: string | null;
  registryStatus?: RegistryStatusCode | null;
  rawRegistryStatus?: string | null;
  /** IT-advanced `cessata`. */
  ceased?: boolean | null;
  /** IT-advanced `taxCodeCeased` (the revenue agency's view). */
  taxCodeCeased?: boolean | null;
  /** IT-advanced `taxCodeCeasedTimestamp`. */
  taxCodeCeasedUpdateDate?: string | null;
  isMarketable?: boolean | null;
  legalForm?: LegalFormCategoryCode | null;
  rawLegalForm?: string | null;
  legalFormDescription?: string | null;
  detailedLegalForm?: CodedValueModel | null;
  dates?: CompanyDatesModel | null;
  atecoClassification?: AtecoClassificationModel | null;
  internationalClassification?: InternationalClassificationModel | null;
  employees?: EmployeesModel | null;
  employeeStatistics?: EmployeeStatisticsModel | null;
  isInnovativeStartUp?: boolean | null;
  isInnovativeSme?: boolean | null;
  email?: string | null;
  contacts?: ContactsModel | null;
  webAndSocial?: WebAndSocialModel | null;
  pec?: string | null;
  /** IT-pec `history`: earlier PEC addresses. */
  pecHistory?: PecHistoryEntryModel[] | null;
  sdiCode?: string | null;
  /** IT-start/IT-advanced `sdiCodeTimestamp`. */
  sdiCodeUpdateDate?: string | null;
  vatGroup?: VatGroupModel | null;
  artisanRegistry?: ArtisanRegistryModel | null;
  hasSoaCertification?: boolean | null;
  corporateGroup?: CorporateGroupModel | null;
  numberOfBranches?: number | null;
  allOffices?: OfficeModel[] | null;
  subsidiaries?: SubsidiaryModel[] | null;
  affiliates?: AffiliateModel[] | null;
  foreignTrade?: ForeignTradeModel | null;
  publicTenders?: PublicTenderYearModel[] | null;
  operatingResults?: OperatingResultsModel | null;
  ecofin?: EcofinModel | null;
  balanceSheets?: BalanceSheetSummaryModel[] | null;
  managers?: ManagerModel[] | null;
  shareholders?: ShareholdingModel[] | null;
  balanceSheet?: BalanceSheetSectionsModel | null;
  incomeStatement?: IncomeStatementSectionsModel | null;
  ratios?: FinancialRatiosModel | null;
  rae?: CodedValueModel | null;
  sae?: CodedValueModel | null;
}

export type CompanyField = keyof CompanyModel;

// ---------------------------------------------------------------------------------------------
// Companies outside Italy, legal forms, monitors
// ---------------------------------------------------------------------------------------------

export type ForeignLevel = 'VAT_REGISTRY' | 'START' | 'ADVANCED' | 'TOP';

/** A region an address lies in (WW-top `locationArea`). */
export interface LocationAreaModel {
  type?: string | null;
  description?: string | null;
}

export interface ForeignAddressModel {
  streetName?: string | null;
  streetName2?: string | null;
  streetName3?: string | null;
  streetName4?: string | null;
  toponym?: string | null;
  street?: string | null;
  streetNumber?: string | null;
  zipCode?: string | null;
  town?: string | null;
  country?: string | null;
  townCode?: string | null;
  region?: CodedValueModel | null;
  department?: CodedValueModel | null;
  coordinates?: GeoPointModel | null;
  nativeTown?: string | null;
  county?: string | null;
  nuts1?: string | null;
  nuts2?: string | null;
  nuts3?: string | null;
  usMetropolitanArea?: string | null;
  usState?: string | null;
  locationAreas?: LocationAreaModel[] | null;
  isBranchOffice: boolean;
}

export interface ForeignBalanceSheetModel {
  year: number;
  balanceSheetDate?: string | null;
  employees?: number | null;
  turnover?: number | null;
  netWorth?: number | null;
  operatingRevenue?: number | null;
  equity?: number | null;
  totalAssets?: number | null;
}

export type IndustryCodeScheme = 'NACE' | 'NAICS' | 'SIC';

/** One code of an international classification with its hierarchy (WW-top gives the levels). */
export interface IndustryCodeModel {
  scheme: IndustryCodeScheme;
  isPrimary: boolean;
  code: string;
  description?: string | null;
  core?: string | null;
  section?: string | null;
  division?: string | null;
  group?: string | null;
}

/** The country's own activity classification (WW-top `nationalClassification`). */
export interface NationalClassificationModel {
  types: string[];
  primary: string[];
  secondary: string[];
}

export interface ForeignClassificationModel {
  nace?: CodedValueModel | null;
  naics?: CodedValueModel | null;
  sic?: CodedValueModel | null;
  naf?: CodedValueModel | null;
  secondaryNace?: CodedValueModel[] | null;
  secondaryNaics?: CodedValueModel[] | null;
  secondarySic?: CodedValueModel[] | null;
  codes?: IndustryCodeModel[] | null;
  national?: NationalClassificationModel | null;
}

export interface ForeignOfficeModel {
  siretCode?: string | null;
  companyName?: string | null;
  activityStatus?: string | null;
  address?: ForeignAddressModel | null;
}

export interface ForeignCompanyModel {
  id?: string | null;
  level: ForeignLevel;
  country?: string | null;
  companyName?: string | null;
  nativeCompanyName?: string | null;
  tradingName?: string | null;
  aliasName?: string | null;
  vatCode?: string | null;
  taxCode?: string | null;
  companyNumber?: string | null;
  leiCode?: string | null;
  siretCode?: string | null;
  sirenCode?: string | null;
  regonNumber?: string | null;
  establishmentNumber?: string | null;
  activityStatus?: string | null;
  registrationDate?: string | null;
  incorporationDate?: string | null;
  lastUpdateDate?: string | null;
  recordCreationDate?: string | null;
  address?: ForeignAddressModel | null;
  contacts?: { phone?: string | null; fax?: string | null; website?: string | null } | null;
  classification?: ForeignClassificationModel | null;
  legalForm?: CodedValueModel | null;
  balanceSheets?: ForeignBalanceSheetModel[] | null;
  creditWorthy?: boolean | null;
  companySize?: string | null;
  identifiers?: { label?: string | null; number?: string | null; types: string[] }[] | null;
  offices?: ForeignOfficeModel[] | null;
  vatRegistration?: { valid?: boolean | null; formatValid?: boolean | null } | null;
}

export interface LegalFormModel {
  code: string;
  description: string | null;
}

export type MonitorDatasetCode =
  | 'IT_START'
  | 'IT_ADVANCED'
  | 'IT_MARKETING'
  | 'IT_STAKEHOLDERS'
  | 'IT_AML'
  | 'IT_FULL'
  | 'IT_SHAREHOLDERS'
  | 'IT_ADDRESS'
  | 'IT_PEC'
  | 'IT_CLOSED'
  | 'IT_VATGROUP'
  | 'IT_SDICODE'
  | 'IT_NAME'
  | 'IT_UBO'
  | 'FR_START'
  | 'FR_ADVANCED';

export interface CompanyMonitorModel {
  id: string;
  code?: string | null;
  dataset?: MonitorDatasetCode | null;
  rawDataset?: string | null;
  monitoredFields?: string[] | null;
  companyId?: string | null;
  vatCode?: string | null;
  taxCode?: string | null;
  companyName?: string | null;
  createdOn?: string | null;
  checkedOn?: string | null;
  nextOn?: string | null;
  expiresOn?: string | null;
  autorenew?: boolean | null;
  updatedFields?: unknown;
  latestDataset?: unknown;
  previousDataset?: unknown;
  owner?: string | null;
  callback?: { url: string; method: string; field: string; headerNames: string[]; retry: number } | null;
}

/** An earlier PEC address of a company (IT-pec `history`). */
export interface PecHistoryEntryModel {
  pec: string | null;
  /** When the upstream recorded this address (IT-pec `timestamp`), ISO 8601. */
  recordedAt: string | null;
}
