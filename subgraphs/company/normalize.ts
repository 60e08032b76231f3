/**
 * Vendor payload → normalized model. One function per payload family:
 *
 * - `normalizeItStart` / `normalizeItAdvanced`: an element of IT-start / IT-advanced `data` (also
 *   IT-search enriched records). They fill what they can of the contract's sections: identity,
 *   `address.registeredOffice` → address, `activityStatus` "ATTIVA" → code A, the last balance
 *   sheet → ecofin summary, `shareHolders` → shareholdings …
 * - `normalizeComposite`: the `data` object of IT-marketing, IT-stakeholders, IT-aml and IT-full.
 * - `normalizeForeign`, `normalizeEuStart`, `normalizeLegalForm`, `normalizeMonitor`.
 *
 * Rules: dates become ISO 8601 date-times in UTC; `{code, description}` objects without a code
 * become null; sections absent from a payload stay undefined (so merging knows what is missing).
 * Shapes the vendor writes two ways are both read: a list section (managers, roles, shareholders,
 * subsidiaries, public tenders, offices …) given as one object is a list of one; a balance-sheet or
 * income-statement section given as one `{code, value}` object (the contract) or as a list of them
 * (the vendor examples) is a list of lines. A code an enum does not know leaves the enum null and is
 * kept as written in the `raw…` field beside it (`rawActivityStatus`, `rawOfficeType` …).
 */
import { countryOfVatPrefix } from '../../contract/eu.ts';
import {
  BALANCE_SHEET_SECTIONS,
  COMPANY_DATES_FIELDS,
  EMPLOYEE_STATISTICS_FIELDS,
  INCOME_STATEMENT_SECTIONS,
  OPERATING_RESULTS_FIELDS,
  RATIO_FIELDS,
  RATIO_SECTIONS,
  WEB_AND_SOCIAL_LINKS,
} from '../../contract/company-payloads.ts';
import {
  type ActivityStatusCode,
  type AddressModel,
  type BalanceSheetSummaryModel,
  type CodedValueModel,
  type CompanyModel,
  type CompanyMonitorModel,
  type FinancialLineModel,
  type FinancialRatiosModel,
  type ForeignAddressModel,
  type ForeignClassificationModel,
  type ForeignCompanyModel,
  type ForeignLevel,
  type GeoPointModel,
  type IndustryCodeModel,
  type IndustryCodeScheme,
  type LocationAreaModel,
  type NationalClassificationModel,
  type LegalFormCategoryCode,
  type LegalFormModel,
  type ManagerModel,
  type MonitorDatasetCode,
  type OfficeModel,
  type OfficeTypeCode,
  type RegistryStatusCode,
  type ShareholderModel,
  type ShareholdingModel,
} from './model.ts';
import type {
  VAddress,
  VAffiliate,
  VCode,
  VComposite,
  VEuStart,
  VForeign,
  VForeignBalanceSheet,
  VForeignOffice,
  VForeignSubOffice,
  VGps,
  VItAdvanced,
  VItRegisteredOffice,
  VItStart,
  VLegalForm,
  VManager,
  VMonitor,
  VShareholderInfo,
  VShareholding,
  VCompanyDetails,
  VClassificationItem,
  VBalanceSheetYear,
  VOffice,
  VRole,
} from './upstream.ts';
import { isObj, type Obj } from '../../contract/values.ts';
import { bool, dateTime as isoDateTime, float as num, int, str } from '../upstream/coerce.ts';
import { callbackView } from '../runtime/tracking/ingress.ts';

/** Items of the composite list sections, as `upstream.ts` types them. */
type VTender = NonNullable<VComposite['publicTenders']>[number];
type VSubsidiary = NonNullable<VComposite['subsidiaries']>[number];

// ---------------------------------------------------------------------------------------------
// Scalars
// ---------------------------------------------------------------------------------------------

// The one coercion of upstream values (`upstream/coerce.ts`): `int` rounds a fraction to the
// nearest integer, `isoDateTime` reads Unix seconds or milliseconds and ISO strings with or without
// a zone (UTC), `str` drops blanks and the vendor's "NULL".
export { bool, int, isoDateTime, num, str };

export function coded(v: VCode | null | undefined): CodedValueModel | null {
  if (!v || typeof v !== 'object') return null;
  const code = str(v.code);
  return code === null ? null : { code, description: str(v.description) };
}

/** GeoJSON order: `[longitude, latitude]`. */
function point(gps: VGps | null | undefined): GeoPointModel | null {
  const c = gps?.coordinates;
  if (!Array.isArray(c) || c.length < 2) return null;
  const [longitude, latitude] = [num(c[0]), num(c[1])];
  return longitude === null || latitude === null ? null : { latitude, longitude };
}

const oneOf = <T extends string>(v: unknown, allowed: readonly T[]): T | null => {
  const s = str(v)?.toUpperCase();
  return s !== undefined && (allowed as readonly string[]).includes(s) ? (s as T) : null;
};

/**
 * The items of a list section: an array's objects, or a single object (the vendor sometimes sends
 * one item unwrapped) as a list of one; nothing else. `T` is the item type the caller expects (given
 * explicitly: the vendor's value is read as `unknown`).
 */
export function listOf<T extends object>(v: unknown): T[] {
  if (Array.isArray(v)) return (v as unknown[]).filter((x): x is T => !!x && typeof x === 'object' && !Array.isArray(x));
  return v && typeof v === 'object' ? [v as T] : [];
}

/** A section that is a plain list of fields (`contract/company-payloads.ts`): each of `fields`, read from `src` with `read`. */
function fieldsOf<F extends string, T>(src: Readonly<Partial<Record<F, unknown>>>, fields: readonly F[], read: (v: unknown) => T): Record<F, T> {
  return Object.fromEntries(fields.map((f) => [f, read(src[f])])) as Record<F, T>;
}

const OFFICE_TYPES: readonly OfficeTypeCode[] = ['SSL', 'SL', 'UL', 'S', 'D'];
const ACTIVITY_STATUSES: readonly ActivityStatusCode[] = ['A', 'CF', 'CS', 'I', 'IF', 'IS', 'S'];
const LEGAL_FORM_CATEGORIES: readonly LegalFormCategoryCode[] = ['SC', 'AL', 'SP'];

/** Register status (IT-start, IT-search) → English enum value. */
const REGISTRY_STATUS: Readonly<Record<string, RegistryStatusCode>> = {
  ATTIVA: 'ACTIVE',
  CESSATA: 'CEASED',
  REGISTRATA: 'REGISTERED',
  INATTIVA: 'INACTIVE',
  SOSPESA: 'SUSPENDED',
  IN_ISCRIZIONE: 'REGISTRATION_PENDING',
};

/** Register status → the business-status code of the composite tiers, where it maps one-to-one. */
const REGISTRY_TO_ACTIVITY: Readonly<Record<RegistryStatusCode, ActivityStatusCode | null>> = {
  ACTIVE: 'A',
  INACTIVE: 'I',
  REGISTERED: 'I',
  REGISTRATION_PENDING: 'I',
  SUSPENDED: 'S',
  // ceased in a positive (CF) or negative (CS) way: the register status does not say which
  CEASED: null,
};

/** The register status filter value IT-search expects for an enum value. */
export const REGISTRY_STATUS_UPSTREAM: Readonly<Record<RegistryStatusCode, string>> = Object.fromEntries(Object.entries(REGISTRY_STATUS).map(([it, en]) => [en, it])) as Record<
  RegistryStatusCode,
  string
>;

export function registryStatusOf(v: unknown): RegistryStatusCode | null {
  const s = str(v)?.toUpperCase().replace(/\s+/g, '_');
  return s ? (REGISTRY_STATUS[s] ?? null) : null;
}

// ---------------------------------------------------------------------------------------------
// Italian companies: IT-start, IT-advanced
// ---------------------------------------------------------------------------------------------

/** The street fields of an Italian `address.registeredOffice` (IT-start, IT-advanced, IT-pa). */
const STREET_FIELDS = ['streetName', 'toponym', 'street', 'streetNumber', 'hamlet', 'zipCode'] as const;

/** The street of an Italian `address.registeredOffice`: its street fields as text. */
export const streetOf = (ro: Readonly<Partial<Record<(typeof STREET_FIELDS)[number], unknown>>>): Record<(typeof STREET_FIELDS)[number], string | null> =>
  fieldsOf(ro, STREET_FIELDS, str);

function registeredOffice(ro: VItRegisteredOffice | null | undefined): AddressModel | null {
  if (!ro) return null;
  const province = str(ro.province);
  return {
    ...streetOf(ro),
    town: str(ro.town),
    townCode: str(ro.townCode),
    province: province ? { code: province, description: null } : null,
    region: coded(ro.region),
    country: null,
    coordinates: point(ro.gps),
  };
}

export function normalizeItStart(v: VItStart): CompanyModel {
  const registryStatus = registryStatusOf(v.activityStatus);
  const rawStatus = str(v.activityStatus);
  return {
    vatCode: str(v.vatCode),
    taxCode: str(v.taxCode),
    id: str(v.id),
    companyName: str(v.companyName),
    lastUpdateDate: isoDateTime(v.lastUpdateTimestamp),
    recordCreationDate: isoDateTime(v.creationTimestamp),
    address: registeredOffice(v.address?.registeredOffice),
    registryStatus,
    rawRegistryStatus: rawStatus,
    activityStatus: registryStatus ? REGISTRY_TO_ACTIVITY[registryStatus] : null,
    // The business status was read from the register status: that is its upstream value.
    rawActivityStatus: rawStatus,
    sdiCode: str(v.sdiCode),
    sdiCodeUpdateDate: isoDateTime(v.sdiCodeTimestamp),
    dates: { registrationDate: isoDateTime(v.registrationDate) },
  };
}

export function normalizeItAdvanced(v: VItAdvanced): CompanyModel {
  const base = normalizeItStart(v);
  const ateco = v.atecoClassification;
  const last = v.balanceSheets?.last;
  const group = v.vatGroup ?? v.gruppo_iva;
  const history: BalanceSheetSummaryModel[] = [];
  for (const y of listOf<VBalanceSheetYear>(v.balanceSheets?.all)) {
    const year = int(y.year);
    if (year === null) continue;
    history.push({
      year,
      balanceSheetDate: isoDateTime(y.balanceSheetDate),
      employees: int(y.employees),
      turnover: num(y.turnover),
      netWorth: num(y.netWorth),
      shareCapital: num(y.shareCapital),
      totalStaffCost: num(y.totalStaffCost),
      totalAssets: num(y.totalAssets),
      averageGrossSalary: num(y.avgGrossSalary),
    });
  }
  history.sort((a, b) => b.year - a.year);
  return {
    ...base,
    chamberOfCommerce: str(v.cciaa),
    reaCode: str(v.reaCode),
    // IT-advanced's `ateco` is ATECO 2025 (vendor schema); the schema's `ateco` is ATECO 2007.
    atecoClassification: ateco ? { ateco: coded(ateco.ateco2007), ateco2022: coded(ateco.ateco2022), ateco2025: coded(ateco.ateco) } : null,
    detailedLegalForm: coded(v.detailedLegalForm),
    ceased: bool(v.cessata),
    taxCodeCeased: bool(v.taxCodeCeased),
    taxCodeCeasedUpdateDate: isoDateTime(v.taxCodeCeasedTimestamp),
    dates: { registrationDate: isoDateTime(v.registrationDate), startDate: isoDateTime(v.startDate), endDate: isoDateTime(v.endDate) },
    pec: str(v.pec),
    vatGroup: group ? { participates: bool(group.vatGroupParticipation), isLeader: bool(group.isVatGroupLeader), registryOk: bool(group.registryOk) } : null,
    balanceSheets: history,
    ecofin: last
      ? {
          balanceSheetDate: isoDateTime(last.balanceSheetDate),
          turnoverYear: int(last.year),
          turnover: num(last.turnover),
          shareCapital: num(last.shareCapital),
          netWorth: num(last.netWorth),
        }
      : null,
    employees: last ? { count: int(last.employees) } : null,
    shareholders: listOf<VShareholderInfo & { percentShare?: unknown }>(v.shareHolders).map((h): ShareholdingModel => ({
      percentShare: num(h.percentShare),
      shareType: null,
      owners: [shareholderOf(h)],
    })),
  };
}

// ---------------------------------------------------------------------------------------------
// Italian companies: composite tiers (marketing, stakeholders, aml, full)
// ---------------------------------------------------------------------------------------------

function compositeAddress(a: VAddress | null | undefined): AddressModel | null {
  if (!a) return null;
  return {
    streetName: str(a.streetName),
    zipCode: str(a.zipCode),
    town: str(a.town),
    province: coded(a.province),
    region: coded(a.region),
    country: coded(a.country),
  };
}

const isPersonTaxCode = (taxCode: string | null): boolean => taxCode !== null && /^[A-Z]{6}/i.test(taxCode);

function managerOf(m: VManager): ManagerModel {
  const taxCode = str(m.taxCode);
  const roles = listOf<VRole>(m.roles).flatMap((r) => {
    const role = coded(r.role);
    return role ? [{ role, startDate: isoDateTime(r.roleStartDate) }] : [];
  });
  const isLegalRepresentative = bool(m.isLegalRepresentative);
  const companyName = str(m.companyName);
  if (companyName !== null && str(m.name) === null && str(m.surname) === null && !isPersonTaxCode(taxCode)) {
    return { kind: 'company', taxCode, roles, isLegalRepresentative, companyName };
  }
  const rawGender = str(m.gender?.code);
  const g = rawGender?.toUpperCase();
  return {
    kind: 'person',
    taxCode,
    roles,
    isLegalRepresentative,
    name: str(m.name),
    surname: str(m.surname),
    gender: g === 'M' ? 'M' : g === 'W' || g === 'F' ? 'W' : null,
    rawGender,
    birthDate: isoDateTime(m.birthDate),
    age: int(m.age),
    birthTown: str(m.birthTown),
  };
}

function shareholderOf(h: VShareholderInfo): ShareholderModel {
  const taxCode = str(h.taxCode);
  const common = { taxCode, sinceDate: isoDateTime(h.sinceDate), streetName: str(h.streetName), zipCode: str(h.zipCode), town: str(h.town) };
  const companyName = str(h.companyName);
  if (companyName !== null && str(h.name) === null && str(h.surname) === null && !isPersonTaxCode(taxCode)) {
    return { kind: 'company', ...common, companyName, serviceNumber: str(h.openapiNumber) ?? str(h.serviceNumber) };
  }
  return { kind: 'person', ...common, name: str(h.name), surname: str(h.surname) };
}

function shareholdingOf(s: VShareholding): ShareholdingModel {
  return {
    percentShare: num(s.percentShare),
    shareType: coded(s.shareType),
    owners: listOf<VShareholderInfo>(s.shareholdersInformation).map(shareholderOf),
  };
}

function detailsOf(d: VCompanyDetails | null | undefined): Partial<CompanyModel> {
  if (!d) return {};
  return {
    vatCode: str(d.vatCode),
    taxCode: str(d.taxCode),
    companyName: str(d.companyName),
    lastUpdateDate: isoDateTime(d.lastUpdateDate),
    chamberOfCommerce: str(d.cciaa),
    reaCode: str(d.reaCode),
    serviceNumber: str(d.openapiNumber) ?? str(d.serviceNumber),
    officeType: oneOf(d.officeType?.code, OFFICE_TYPES),
    rawOfficeType: str(d.officeType?.code),
  };
}

/**
 * A balance-sheet or income-statement section as lines: the contract writes one `{code, value}`
 * object, the vendor examples a list of them; both are read. Null for anything else.
 */
export function linesOf(v: unknown): FinancialLineModel[] | null {
  if (!v || typeof v !== 'object') return null;
  const out: FinancialLineModel[] = [];
  for (const line of listOf<{ code?: unknown; value?: unknown }>(v)) {
    const code = str(line.code);
    if (code !== null) out.push({ code, value: num(line.value) });
  }
  return out;
}

/** The line-item sections of `names` the payload has; undefined when it has none of them. */
function lineSectionsOf<S extends string>(d: VComposite, names: readonly S[]): { [K in S]?: FinancialLineModel[] | null } | undefined {
  const out: { [K in S]?: FinancialLineModel[] | null } = {};
  let any = false;
  for (const s of names) {
    if (d[s] === undefined) continue;
    out[s] = linesOf(d[s]);
    any = true;
  }
  return any ? out : undefined;
}

/** Object keys with stray whitespace (`"secondaryMarginStructure "` in the spec example) trimmed. */
function trimmedKeys(v: unknown): Record<string, unknown> | null {
  if (!v || typeof v !== 'object' || Array.isArray(v)) return null;
  const out: Record<string, unknown> = {};
  for (const [k, val] of Object.entries(v as Record<string, unknown>)) out[k.trim()] = val;
  return out;
}

function ratiosOf(d: VComposite): FinancialRatiosModel | undefined {
  let any = false;
  const out: FinancialRatiosModel = {};
  for (const section of RATIO_SECTIONS) {
    const src = trimmedKeys(d[section]);
    if (!src) continue;
    any = true;
    (out as Record<string, unknown>)[section] = fieldsOf(src, RATIO_FIELDS[section], num);
  }
  return any ? out : undefined;
}

/** Sets `key` only when the payload has the section (absent stays absent). */
function put<K extends keyof CompanyModel>(out: CompanyModel, key: K, present: unknown, value: CompanyModel[K]): void {
  if (present !== undefined) out[key] = value;
}

export function normalizeComposite(d: VComposite): CompanyModel {
  const out: CompanyModel = { ...detailsOf(d.companyDetails) };
  put(out, 'address', d.address, compositeAddress(d.address));
  put(out, 'activityStatus', d.companyStatus, oneOf(d.companyStatus?.activityStatus?.code, ACTIVITY_STATUSES));
  put(out, 'rawActivityStatus', d.companyStatus, str(d.companyStatus?.activityStatus?.code));
  put(out, 'legalForm', d.legalForm, oneOf(d.legalForm?.legalForm?.code, LEGAL_FORM_CATEGORIES));
  put(out, 'rawLegalForm', d.legalForm, str(d.legalForm?.legalForm?.code));
  put(out, 'legalFormDescription', d.legalForm, str(d.legalForm?.legalForm?.description));
  put(out, 'detailedLegalForm', d.legalForm, coded(d.legalForm?.detailedLegalForm));
  const dd = d.companyDates;
  put(out, 'dates', dd, dd ? fieldsOf(dd, COMPANY_DATES_FIELDS, isoDateTime) : null);
  put(out, 'isMarketable', d.marketable, bool(d.marketable?.isMarketable));
  put(out, 'numberOfBranches', d.branches, int(d.branches?.numberOfBranches));
  const ac = d.atecoClassification;
  put(
    out,
    'atecoClassification',
    ac,
    ac ? { ateco: coded(ac.ateco), secondaryAteco: str(ac.secondaryAteco), ateco2022: coded(ac.ateco2022), secondaryAteco2022: str(ac.secondaryAteco2022) } : null,
  );
  const ic = d.internationalClassification;
  put(out, 'internationalClassification', ic, ic ? { primarySic: coded(ic.primarySic), secondarySic: str(ic.secondarySic), nace: coded(ic.nace) } : null);
  const e = d.ecofin;
  put(
    out,
    'ecofin',
    e,
    e
      ? {
          balanceSheetDate: isoDateTime(e.balanceSheetDate),
          turnoverRange: coded(e.turnoverRange),
          turnoverYear: int(e.turnoverYear),
          turnover: num(e.turnover),
          turnoverTrend: num(e.turnoverTrend),
          shareCapital: num(e.shareCapital),
          netWorth: num(e.netWorth),
          enterpriseSize: coded(e.enterpriseSize),
        }
      : null,
  );
  const em = d.employees;
  put(out, 'employees', em, em ? { range: coded(em.employeeRange), count: int(em.employee), trend: num(em.employeeTrend) } : null);
  const es = d.employeesStatistic;
  put(out, 'employeeStatistics', es, es ? fieldsOf(es, EMPLOYEE_STATISTICS_FIELDS, num) : null);
  put(out, 'isInnovativeStartUp', d.innovativeSmeAndSu, bool(d.innovativeSmeAndSu?.isInnovativeStartUp));
  put(out, 'isInnovativeSme', d.innovativeSmeAndSu, bool(d.innovativeSmeAndSu?.isInnovativeSme));
  put(out, 'email', d.mail, str(d.mail?.email));
  put(out, 'contacts', d.contacts, d.contacts ? { telephoneNumber: str(d.contacts.telephoneNumber), fax: str(d.contacts.fax) } : null);
  const w = d.webAndSocial;
  put(out, 'webAndSocial', w, w ? { hasSocial: bool(w.hasSocial), ...fieldsOf(w, WEB_AND_SOCIAL_LINKS, str) } : null);
  put(out, 'pec', d.pec, str(d.pec));
  put(
    out,
    'publicTenders',
    d.publicTenders,
    listOf<VTender>(d.publicTenders).map((t) => ({ year: str(t.year), applied: int(t.applied), won: int(t.won), value: num(t.value) })),
  );
  const ft = d.foreignTrade;
  put(
    out,
    'foreignTrade',
    ft,
    ft
      ? {
          isImporter: bool(ft.isImporter),
          importPercentShare: int(ft.importPercentShare),
          importCountries: str(ft.importCountries),
          isExporter: bool(ft.isExporter),
          exportPercentShare: int(ft.exportPercentShare),
          exportCountries: str(ft.exportCountries),
        }
      : null,
  );
  put(out, 'managers', d.managers, listOf<VManager>(d.managers).map(managerOf));
  put(out, 'shareholders', d.shareholders, listOf<VShareholding>(d.shareholders).map(shareholdingOf));
  const cg = d.corporateGroups;
  const npc = cg?.nationalParentCompany;
  put(
    out,
    'corporateGroup',
    cg,
    cg
      ? {
          belongsToGroup: bool(cg.belongsToGroup),
          groupName: str(cg.groupName),
          holdingCompanyName: str(cg.holdingCompanyName),
          holdingCountry: coded(cg.holdingCountry),
          nationalParentCompany: npc
            ? {
                companyName: str(npc.companyName),
                streetName: str(npc.streetName),
                town: str(npc.town),
                zipCode: str(npc.zipCode),
                province: coded(npc.province),
                country: coded(npc.country),
              }
            : null,
          hasForeignParentCompany: bool(cg.hasForeignParentCompany),
        }
      : null,
  );
  put(
    out,
    'subsidiaries',
    d.subsidiaries,
    listOf<VSubsidiary>(d.subsidiaries).map((s) => ({
      taxCode: str(s.taxCode),
      companyName: str(s.companyName),
      streetName: str(s.streetName),
      zipCode: str(s.zipCode),
      town: str(s.town),
      province: coded(s.province),
    })),
  );
  const aff = d.affiliateCompanies;
  const affList = listOf<VAffiliate>(aff);
  put(
    out,
    'affiliates',
    aff,
    affList
      .filter((a) => a && (str(a.taxCode) !== null || str(a.companyName) !== null))
      .map((a) => ({ taxCode: str(a.taxCode), companyName: str(a.companyName), percentShare: num(a.percentShare) })),
  );
  const ar = d.artisanBusinessRegistry;
  put(
    out,
    'artisanRegistry',
    ar,
    ar
      ? {
          isRegistered: bool(ar.belongsToArtisanBusinessRegistry),
          registrationDate: isoDateTime(ar.artisanBusinessRegistry?.registrationDate),
          registrationNumber: str(ar.artisanBusinessRegistry?.registrationNumber),
        }
      : null,
  );
  put(out, 'hasSoaCertification', d.soaCertification, bool(d.soaCertification?.hasSoaCertification));
  const or = d.operatingResults;
  put(out, 'operatingResults', or, or ? fieldsOf(or, OPERATING_RESULTS_FIELDS, num) : null);
  put(out, 'rae', d.rae, coded(d.rae));
  put(out, 'sae', d.sae, coded(d.sae));
  put(out, 'allOffices', d.allOffices, listOf<VOffice>(d.allOffices).map(officeOf));

  const bs = lineSectionsOf(d, BALANCE_SHEET_SECTIONS);
  if (bs) out.balanceSheet = bs;
  const is = lineSectionsOf(d, INCOME_STATEMENT_SECTIONS);
  if (is) out.incomeStatement = is;
  const ratios = ratiosOf(d);
  if (ratios) out.ratios = ratios;
  return out;
}

function officeOf(o: VOffice): OfficeModel {
  const det = detailsOf(o.companyDetails);
  return {
    companyName: det.companyName ?? null,
    vatCode: det.vatCode ?? null,
    taxCode: det.taxCode ?? null,
    serviceNumber: det.serviceNumber ?? null,
    chamberOfCommerce: det.chamberOfCommerce ?? null,
    reaCode: det.reaCode ?? null,
    officeType: det.officeType ?? null,
    rawOfficeType: det.rawOfficeType ?? null,
    lastUpdateDate: det.lastUpdateDate ?? null,
    activityStatus: oneOf(o.companyStatus?.activityStatus?.code, ACTIVITY_STATUSES),
    rawActivityStatus: str(o.companyStatus?.activityStatus?.code),
    address: compositeAddress(o.address),
  };
}

/** Two objects that name different things (coded values with different codes, a person and a company). */
const distinct = (a: Obj, b: Obj): boolean => (['code', 'kind'] as const).some((k) => a[k] !== undefined && a[k] !== null && b[k] !== undefined && b[k] !== null && a[k] !== b[k]);

/**
 * One value from two answers, `primary` first: a value `primary` lacks (absent or null) is taken
 * from `secondary`; objects are merged key by key down to their leaves, except objects naming
 * different things (different codes), where `primary` is kept whole; a list is taken whole, from
 * `primary` unless it is empty and `secondary`'s is not.
 */
function mergeValue(primary: unknown, secondary: unknown): unknown {
  if (primary === undefined || primary === null) return secondary === undefined ? primary : secondary;
  if (secondary === undefined || secondary === null) return primary;
  if (Array.isArray(primary)) return primary.length === 0 && Array.isArray(secondary) && secondary.length > 0 ? secondary : primary;
  if (!isObj(primary) || !isObj(secondary) || distinct(primary, secondary)) return primary;
  const out: Obj = { ...secondary };
  for (const [k, v] of Object.entries(primary)) out[k] = mergeValue(v, secondary[k]);
  return out;
}

/**
 * Two models of the same company (from two tiers) as one, leaf by leaf: `primary` wins wherever it
 * has a value, and `secondary` fills only what `primary` lacks, at any depth (IT-start holds the
 * street number and coordinates, the composite tiers the province name and country; IT-advanced
 * the turnover of its last balance sheet, the composite tiers the turnover range). Lists are not
 * mixed: `primary`'s when it has one that is not empty. The loader calls it with the higher-ranked
 * tier as `primary` (`TIER_RANK`), whatever order the answers arrived in.
 */
export function mergeModels(primary: CompanyModel, secondary: CompanyModel): CompanyModel {
  const out = mergeValue(primary, secondary) as CompanyModel;
  // An enum and its raw code are one value: when `primary` has a code its enum does not know,
  // `secondary`'s enum must not stand beside it (IT-full's unknown status with IT-start's ACTIVE).
  for (const [value, raw] of ENUM_WITH_RAW) {
    if (primary[raw] !== undefined && primary[raw] !== null) (out as Record<string, unknown>)[value] = primary[value] ?? null;
  }
  return out;
}

/** Enum fields of the model and the raw upstream code kept beside each. */
const ENUM_WITH_RAW: ReadonlyArray<readonly [keyof CompanyModel, keyof CompanyModel]> = [
  ['activityStatus', 'rawActivityStatus'],
  ['registryStatus', 'rawRegistryStatus'],
  ['officeType', 'rawOfficeType'],
  ['legalForm', 'rawLegalForm'],
];

// ---------------------------------------------------------------------------------------------
// Companies outside Italy
// ---------------------------------------------------------------------------------------------

/**
 * Fields of foreign records that `upstream.ts` does not type (yet): French address lines and street
 * type, WW-top's regional breakdown, classification levels and national classification.
 */
interface VForeignOfficeExtra extends VForeignOffice {
  streetName2?: unknown;
  streetName3?: unknown;
  streetName4?: unknown;
  toponym?: unknown;
  nativeTown?: unknown;
  county?: unknown;
  nuts1?: unknown;
  nuts2?: unknown;
  nuts3?: unknown;
  usMetropolitanArea?: unknown;
  usState?: unknown;
  locationArea?: unknown;
}
interface VClassificationLevels extends VClassificationItem {
  core?: unknown;
  division?: unknown;
  group?: unknown;
}
interface VNationalClassification {
  type?: unknown;
  primary?: unknown;
  secondary?: unknown;
}

/** The strings of a list (or of a single string given alone). */
const strings = (v: unknown): string[] => (Array.isArray(v) ? v : v === undefined || v === null ? [] : [v]).map(str).filter((x): x is string => x !== null);

function foreignOffice(a: VForeign['address']): ForeignAddressModel | null {
  const o: VForeignOfficeExtra | null | undefined = a?.registeredOffice ?? a?.branchOffice;
  if (!o) return null;
  const areas = o.locationArea === undefined ? undefined : listOf<{ type?: unknown; description?: unknown }>(o.locationArea);
  return {
    streetName: str(o.streetName),
    streetName2: str(o.streetName2),
    streetName3: str(o.streetName3),
    streetName4: str(o.streetName4),
    toponym: str(o.toponym),
    street: str(o.street),
    streetNumber: str(o.streetNumber),
    zipCode: str(o.zipCode),
    town: str(o.town),
    country: str(o.country),
    townCode: str(o.townCode),
    region: coded(o.region),
    department: coded(o.department),
    coordinates: point(o.gps),
    nativeTown: str(o.nativeTown),
    county: str(o.county),
    nuts1: str(o.nuts1),
    nuts2: str(o.nuts2),
    nuts3: str(o.nuts3),
    usMetropolitanArea: str(o.usMetropolitanArea),
    usState: str(o.usState),
    locationAreas: areas
      ? areas.map((x): LocationAreaModel => ({ type: str(x.type), description: str(x.description) })).filter((x) => x.type !== null || x.description !== null)
      : null,
    isBranchOffice: !a?.registeredOffice && !!a?.branchOffice,
  };
}

type VClassification = VCode | { primary?: VClassificationItem[] | null; secondary?: VClassificationItem[] | null } | null | undefined;

const isRanked = (v: object): v is { primary?: unknown; secondary?: unknown } => 'primary' in v || 'secondary' in v;

function primaryOf(v: VClassification): CodedValueModel | null {
  if (!v || typeof v !== 'object') return null;
  if (isRanked(v))
    return (
      listOf<VClassificationItem>(v.primary)
        .map(coded)
        .find((c) => c !== null) ?? null
    );
  return coded(v);
}

function secondaryOf(v: VClassification): CodedValueModel[] | null {
  if (!v || typeof v !== 'object' || !('secondary' in v)) return null;
  return listOf<VClassificationItem>((v as { secondary?: unknown }).secondary)
    .map(coded)
    .filter((c): c is CodedValueModel => c !== null);
}

/** Every code of a classification scheme, primary first, with its levels where WW-top gives them. */
function industryCodes(scheme: IndustryCodeScheme, v: VClassification): IndustryCodeModel[] {
  if (!v || typeof v !== 'object') return [];
  const ranked: Array<[boolean, VClassificationLevels[]]> = isRanked(v)
    ? [
        [true, listOf<VClassificationLevels>(v.primary)],
        [false, listOf<VClassificationLevels>(v.secondary)],
      ]
    : [[true, [v]]];
  return ranked.flatMap(([isPrimary, items]) =>
    items.flatMap((item): IndustryCodeModel[] => {
      const code = str(item.code);
      if (code === null) return [];
      return [
        {
          scheme,
          isPrimary,
          code,
          description: str(item.description),
          core: str(item.core),
          section: str(item.section),
          division: str(item.division),
          group: str(item.group),
        },
      ];
    }),
  );
}

function nationalClassificationOf(v: unknown): NationalClassificationModel | null {
  if (!v || typeof v !== 'object' || Array.isArray(v)) return null;
  const n = v as VNationalClassification;
  return { types: strings(n.type), primary: strings(n.primary), secondary: strings(n.secondary) };
}

export function normalizeForeign(v: VForeign, level: ForeignLevel, country: string | null): ForeignCompanyModel {
  const ic = v.internationalClassification;
  const national = nationalClassificationOf((v as VForeign & { nationalClassification?: unknown }).nationalClassification);
  const classification: ForeignClassificationModel | null =
    ic || national
      ? {
          nace: primaryOf(ic?.nace),
          naics: primaryOf(ic?.naics),
          sic: primaryOf(ic?.sic),
          naf: coded(ic?.naf),
          secondaryNace: secondaryOf(ic?.nace),
          secondaryNaics: secondaryOf(ic?.naics),
          secondarySic: secondaryOf(ic?.sic),
          codes: ic ? [...industryCodes('NACE', ic.nace), ...industryCodes('NAICS', ic.naics), ...industryCodes('SIC', ic.sic)] : null,
          national,
        }
      : null;
  const address = foreignOffice(v.address);
  const all = v.balanceSheets?.all;
  const sheets = (all !== undefined && all !== null ? listOf<VForeignBalanceSheet>(all) : listOf<VForeignBalanceSheet>(v.balanceSheets?.last))
    .flatMap((y) => {
      const year = int(y.year);
      return year === null
        ? []
        : [
            {
              year,
              balanceSheetDate: isoDateTime(y.balanceSheetDate),
              employees: int(y.employees),
              turnover: num(y.turnover),
              netWorth: num(y.netWorth),
              operatingRevenue: num(y.operatingRevenue),
              equity: num(y.equity),
              totalAssets: num(y.totalAssets),
            },
          ];
    })
    .sort((a, b) => b.year - a.year);
  const offices = v.allOffices ?? v.allOffice;
  return {
    id: str(v.id),
    level,
    country: address?.country ?? country,
    companyName: str(v.companyName),
    nativeCompanyName: str(v.nativeCompanyName),
    tradingName: str(v.tradingName),
    aliasName: str(v.aliasName),
    vatCode: str(v.vatCode) ?? str(v.coCode),
    taxCode: str(v.taxCode),
    companyNumber: str(v.companyNumber),
    leiCode: str(v.leiCode),
    siretCode: str(v.siretCode),
    sirenCode: str(v.sirenCode),
    regonNumber: str(v.regonNumber),
    establishmentNumber: str(v.establishmentNumber),
    activityStatus: str(v.activityStatus),
    registrationDate: isoDateTime(v.registrationDate),
    incorporationDate: isoDateTime(v.incorporationDate),
    lastUpdateDate: isoDateTime(v.lastUpdateTimestamp),
    recordCreationDate: isoDateTime(v.creationTimestamp),
    address,
    contacts: v.contacts ? { phone: str(v.contacts.phone), fax: str(v.contacts.fax), website: str(v.contacts.website) } : null,
    classification,
    legalForm: coded(v.detailedLegalForm),
    balanceSheets: v.balanceSheets ? sheets : null,
    creditWorthy: bool(v.creditWorthy),
    companySize: str(v.companySize),
    identifiers:
      v.markers !== undefined && v.markers !== null
        ? listOf<NonNullable<VForeign['markers']>[number]>(v.markers).map((m) => ({ label: str(m.label), number: str(m.number), types: strings(m.types) }))
        : null,
    offices:
      offices !== undefined && offices !== null
        ? listOf<VForeignSubOffice>(offices).map((o) => ({
            siretCode: str(o.siretCode),
            companyName: str(o.companyName),
            activityStatus: str(o.activityStatus),
            address: foreignOffice(o.address),
          }))
        : null,
    vatRegistration: null,
  };
}

export function normalizeEuStart(v: VEuStart): ForeignCompanyModel {
  // VIES answers its VAT prefix as the country (EL for Greece); the schema promises the ISO code.
  const prefix = str(v.countryCode);
  const country = prefix === null ? null : countryOfVatPrefix(prefix);
  // VIES answers the number without its country prefix; the schema promises it with the prefix,
  // as every other foreign endpoint gives it.
  const vat = str(v.vatCode);
  const vatCode = vat && prefix && !vat.toUpperCase().startsWith(prefix.toUpperCase()) ? `${prefix.toUpperCase()}${vat}` : vat;
  return {
    level: 'VAT_REGISTRY',
    country,
    companyName: str(v.companyName),
    vatCode,
    address: { streetName: str(v.companyAddress), country, isBranchOffice: false },
    vatRegistration: { valid: bool(v.valid), formatValid: bool(v.formatValid) },
  };
}

// ---------------------------------------------------------------------------------------------
// Legal forms, monitors
// ---------------------------------------------------------------------------------------------

export function normalizeLegalForm(v: VLegalForm): LegalFormModel | null {
  const code = str(v.code);
  return code === null ? null : { code, description: str(v.description) };
}

/** `IT-advanced` ↔ `IT_ADVANCED`. */
export const datasetToUpstream = (d: MonitorDatasetCode): string => d.replace('_', '-').replace(/-([A-Z]+)$/, (_, s: string) => `-${s.toLowerCase()}`);

export function datasetFromUpstream(v: unknown): MonitorDatasetCode | null {
  const s = str(v);
  if (!s) return null;
  const code = s.toUpperCase().replace('-', '_');
  const all: readonly MonitorDatasetCode[] = [
    'IT_START',
    'IT_ADVANCED',
    'IT_MARKETING',
    'IT_STAKEHOLDERS',
    'IT_AML',
    'IT_FULL',
    'IT_SHAREHOLDERS',
    'IT_ADDRESS',
    'IT_PEC',
    'IT_CLOSED',
    'IT_VATGROUP',
    'IT_SDICODE',
    'IT_NAME',
    'IT_UBO',
    'FR_START',
    'FR_ADVANCED',
  ];
  return (all as readonly string[]).includes(code) ? (code as MonitorDatasetCode) : null;
}

export function normalizeMonitor(v: VMonitor): CompanyMonitorModel | null {
  const id = str(v.id);
  if (id === null) return null;
  return {
    id,
    code: str(v.code),
    dataset: datasetFromUpstream(v.dataset),
    rawDataset: str(v.dataset),
    monitoredFields: Array.isArray(v.monitoredFields) ? v.monitoredFields.filter((f): f is string => typeof f === 'string') : null,
    companyId: str(v.companyId),
    vatCode: str(v.vatCode),
    taxCode: str(v.taxCode),
    companyName: str(v.companyName),
    createdOn: isoDateTime(v.createdOn),
    checkedOn: isoDateTime(v.checkedOn),
    nextOn: isoDateTime(v.nextOn),
    expiresOn: isoDateTime(v.expiresOn),
    autorenew: bool(v.autorenew),
    updatedFields: v.updatedFields ?? null,
    latestDataset: v.latestDataset ?? null,
    previousDataset: v.previousDataset ?? null,
    owner: str(v.owner),
    callback: monitorCallback(v.callback),
  };
}

/** The caller's callback of a tracked monitor: header names only (values may be credentials). */
function monitorCallback(v: unknown): CompanyMonitorModel['callback'] {
  const view = callbackView(v);
  return view && { url: view.url, method: view.method, field: view.field, headerNames: view.headers.map((h) => h.name), retry: view.retry };
}
