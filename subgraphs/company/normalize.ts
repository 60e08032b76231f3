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
 */
import {
  BALANCE_SHEET_SECTIONS,
  INCOME_STATEMENT_SECTIONS,
  RATIO_FIELDS,
  type ActivityStatusCode,
  type AddressModel,
  type BalanceSheetSectionsModel,
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
  type IncomeStatementSectionsModel,
  type LegalFormCategoryCode,
  type LegalFormModel,
  type ManagerModel,
  type MonitorDatasetCode,
  type OfficeModel,
  type OfficeTypeCode,
  type RatioSection,
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
  VForeignOffice,
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
} from './upstream.ts';
import { bool, dateTime as isoDateTime, float as num, int, str } from '../upstream/coerce.ts';

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
export const REGISTRY_STATUS_UPSTREAM: Readonly<Record<RegistryStatusCode, string>> = Object.fromEntries(
  Object.entries(REGISTRY_STATUS).map(([it, en]) => [en, it]),
) as Record<RegistryStatusCode, string>;

export function registryStatusOf(v: unknown): RegistryStatusCode | null {
  const s = str(v)?.toUpperCase().replace(/\s+/g, '_');
  return s ? (REGISTRY_STATUS[s] ?? null) : null;
}

// ---------------------------------------------------------------------------------------------
// Italian companies: IT-start, IT-advanced
// ---------------------------------------------------------------------------------------------

function registeredOffice(ro: VItRegisteredOffice | null | undefined): AddressModel | null {
  if (!ro) return null;
  const province = str(ro.province);
  return {
    streetName: str(ro.streetName),
    toponym: str(ro.toponym),
    street: str(ro.street),
    streetNumber: str(ro.streetNumber),
    hamlet: str(ro.hamlet),
    zipCode: str(ro.zipCode),
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
  return {
    vatCode: str(v.vatCode),
    taxCode: str(v.taxCode),
    id: str(v.id),
    companyName: str(v.companyName),
    lastUpdateDate: isoDateTime(v.lastUpdateTimestamp),
    address: registeredOffice(v.address?.registeredOffice),
    registryStatus,
    activityStatus: registryStatus ? REGISTRY_TO_ACTIVITY[registryStatus] : null,
    sdiCode: str(v.sdiCode),
    dates: { registrationDate: isoDateTime(v.registrationDate) },
  };
}

export function normalizeItAdvanced(v: VItAdvanced): CompanyModel {
  const base = normalizeItStart(v);
  const ateco = v.atecoClassification;
  const last = v.balanceSheets?.last;
  const group = v.vatGroup ?? v.gruppo_iva;
  const history: BalanceSheetSummaryModel[] = [];
  for (const y of v.balanceSheets?.all ?? []) {
    const year = int(y?.year);
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
    atecoClassification: ateco ? { ateco: coded(ateco.ateco2007) ?? coded(ateco.ateco), ateco2022: coded(ateco.ateco2022) } : null,
    detailedLegalForm: coded(v.detailedLegalForm),
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
    shareholders: (v.shareHolders ?? []).map(
      (h): ShareholdingModel => ({ percentShare: num(h.percentShare), shareType: null, owners: [shareholderOf(h)] }),
    ),
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
  const roles = (m.roles ?? []).flatMap((r) => {
    const role = coded(r?.role);
    return role ? [{ role, startDate: isoDateTime(r.roleStartDate) }] : [];
  });
  const isLegalRepresentative = bool(m.isLegalRepresentative);
  const companyName = str(m.companyName);
  if (companyName !== null && str(m.name) === null && str(m.surname) === null && !isPersonTaxCode(taxCode)) {
    return { kind: 'company', taxCode, roles, isLegalRepresentative, companyName };
  }
  const g = str(m.gender?.code)?.toUpperCase();
  return {
    kind: 'person',
    taxCode,
    roles,
    isLegalRepresentative,
    name: str(m.name),
    surname: str(m.surname),
    gender: g === 'M' ? 'M' : g === 'W' || g === 'F' ? 'W' : null,
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
    owners: (s.shareholdersInformation ?? []).filter((x): x is VShareholderInfo => !!x && typeof x === 'object').map(shareholderOf),
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
  };
}

function linesOf(v: unknown): FinancialLineModel[] | null {
  if (!Array.isArray(v)) return null;
  const out: FinancialLineModel[] = [];
  for (const item of v as unknown[]) {
    if (!item || typeof item !== 'object') continue;
    const line = item as { code?: unknown; value?: unknown };
    const code = str(line.code);
    if (code !== null) out.push({ code, value: num(line.value) });
  }
  return out;
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
  for (const section of Object.keys(RATIO_FIELDS) as RatioSection[]) {
    const src = trimmedKeys(d[section]);
    if (!src) continue;
    any = true;
    const values: Record<string, number | null> = {};
    for (const field of RATIO_FIELDS[section]) values[field] = num(src[field]);
    (out as Record<string, unknown>)[section] = values;
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
  put(out, 'legalForm', d.legalForm, oneOf(d.legalForm?.legalForm?.code, LEGAL_FORM_CATEGORIES));
  put(out, 'detailedLegalForm', d.legalForm, coded(d.legalForm?.detailedLegalForm));
  const dd = d.companyDates;
  put(
    out,
    'dates',
    dd,
    dd
      ? {
          registrationDate: isoDateTime(dd.registrationDate),
          startDate: isoDateTime(dd.startDate),
          incorporationDate: isoDateTime(dd.incorporationDate),
          foundingDate: isoDateTime(dd.foundingDate),
          endDate: isoDateTime(dd.endDate),
        }
      : null,
  );
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
  put(
    out,
    'employeeStatistics',
    es,
    es
      ? {
          fixedTermContract: num(es.fixedTermContract),
          permanentContract: num(es.permanentContract),
          partialTimeContract: num(es.partialTimeContract),
          fullTimeContract: num(es.fullTimeContract),
          director: num(es.director),
          frameworkContract: num(es.frameworkContract),
          whiteCollar: num(es.whiteCollar),
          apprentice: num(es.apprentice),
        }
      : null,
  );
  put(out, 'isInnovativeStartUp', d.innovativeSmeAndSu, bool(d.innovativeSmeAndSu?.isInnovativeStartUp));
  put(out, 'isInnovativeSme', d.innovativeSmeAndSu, bool(d.innovativeSmeAndSu?.isInnovativeSme));
  put(out, 'email', d.mail, str(d.mail?.email));
  put(out, 'contacts', d.contacts, d.contacts ? { telephoneNumber: str(d.contacts.telephoneNumber), fax: str(d.contacts.fax) } : null);
  const w = d.webAndSocial;
  put(
    out,
    'webAndSocial',
    w,
    w
      ? {
          hasSocial: bool(w.hasSocial),
          eCommerce: str(w.eCommerce),
          website: str(w.website),
          facebook: str(w.facebook),
          youtube: str(w.youtube),
          twitter: str(w.twitter),
          instagram: str(w.instagram),
          linkedin: str(w.linkedin),
          pinterest: str(w.pinterest),
          vimeo: str(w.vimeo),
        }
      : null,
  );
  put(out, 'pec', d.pec, str(d.pec));
  put(
    out,
    'publicTenders',
    d.publicTenders,
    (d.publicTenders ?? []).map((t) => ({ year: str(t?.year), applied: int(t?.applied), won: int(t?.won), value: num(t?.value) })),
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
  put(out, 'managers', d.managers, (d.managers ?? []).filter((m): m is VManager => !!m && typeof m === 'object').map(managerOf));
  put(out, 'shareholders', d.shareholders, (d.shareholders ?? []).filter((s): s is VShareholding => !!s && typeof s === 'object').map(shareholdingOf));
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
    (d.subsidiaries ?? []).map((s) => ({
      taxCode: str(s?.taxCode),
      companyName: str(s?.companyName),
      streetName: str(s?.streetName),
      zipCode: str(s?.zipCode),
      town: str(s?.town),
      province: coded(s?.province),
    })),
  );
  const aff = d.affiliateCompanies;
  const affList: VAffiliate[] = Array.isArray(aff) ? aff : aff ? [aff] : [];
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
  put(
    out,
    'operatingResults',
    or,
    or
      ? {
          ebitda: num(or.ebitda),
          ebitdaL2Y: num(or.ebitdaL2Y),
          ebit: num(or.ebit),
          ebitL2Y: num(or.ebitL2Y),
          cashFlow: num(or.cashFlow),
          cashFlowL2Y: num(or.cashFlowL2Y),
        }
      : null,
  );
  put(out, 'rae', d.rae, coded(d.rae));
  put(out, 'sae', d.sae, coded(d.sae));
  put(out, 'allOffices', d.allOffices, (d.allOffices ?? []).filter((o) => !!o && typeof o === 'object').map(officeOf));

  const bs: BalanceSheetSectionsModel = {};
  let anyBs = false;
  for (const s of BALANCE_SHEET_SECTIONS) {
    if (d[s] === undefined) continue;
    bs[s] = linesOf(d[s]);
    anyBs = true;
  }
  if (anyBs) out.balanceSheet = bs;
  const is: IncomeStatementSectionsModel = {};
  let anyIs = false;
  for (const s of INCOME_STATEMENT_SECTIONS) {
    if (d[s] === undefined) continue;
    is[s] = linesOf(d[s]);
    anyIs = true;
  }
  if (anyIs) out.incomeStatement = is;
  const ratios = ratiosOf(d);
  if (ratios) out.ratios = ratios;
  return out;
}

function officeOf(o: NonNullable<VComposite['allOffices']>[number]): OfficeModel {
  const det = detailsOf(o.companyDetails);
  return {
    companyName: det.companyName ?? null,
    vatCode: det.vatCode ?? null,
    taxCode: det.taxCode ?? null,
    serviceNumber: det.serviceNumber ?? null,
    chamberOfCommerce: det.chamberOfCommerce ?? null,
    reaCode: det.reaCode ?? null,
    officeType: det.officeType ?? null,
    lastUpdateDate: det.lastUpdateDate ?? null,
    activityStatus: oneOf(o.companyStatus?.activityStatus?.code, ACTIVITY_STATUSES),
    address: compositeAddress(o.address),
  };
}

type Plain = Record<string, unknown>;

const isPlain = (v: unknown): v is Plain => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Two objects that name different things (coded values with different codes, a person and a company). */
const distinct = (a: Plain, b: Plain): boolean =>
  (['code', 'kind'] as const).some((k) => a[k] !== undefined && a[k] !== null && b[k] !== undefined && b[k] !== null && a[k] !== b[k]);

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
  if (!isPlain(primary) || !isPlain(secondary) || distinct(primary, secondary)) return primary;
  const out: Plain = { ...secondary };
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
  return mergeValue(primary, secondary) as CompanyModel;
}

// ---------------------------------------------------------------------------------------------
// Companies outside Italy
// ---------------------------------------------------------------------------------------------

function foreignOffice(a: VForeign['address']): ForeignAddressModel | null {
  const o: VForeignOffice | null | undefined = a?.registeredOffice ?? a?.branchOffice;
  if (!o) return null;
  return {
    streetName: str(o.streetName),
    street: str(o.street),
    streetNumber: str(o.streetNumber),
    zipCode: str(o.zipCode),
    town: str(o.town),
    country: str(o.country),
    townCode: str(o.townCode),
    region: coded(o.region),
    department: coded(o.department),
    coordinates: point(o.gps),
    isBranchOffice: !a?.registeredOffice && !!a?.branchOffice,
  };
}

type VClassification = VCode | { primary?: VClassificationItem[] | null; secondary?: VClassificationItem[] | null } | null | undefined;

function primaryOf(v: VClassification): CodedValueModel | null {
  if (!v) return null;
  if ('primary' in v || 'secondary' in v) {
    const list = (v as { primary?: VClassificationItem[] | null }).primary;
    return Array.isArray(list) && list.length > 0 ? coded(list[0]) : null;
  }
  return coded(v as VCode);
}

function secondaryOf(v: VClassification): CodedValueModel[] | null {
  if (!v || !('secondary' in v)) return null;
  const list = (v as { secondary?: VClassificationItem[] | null }).secondary;
  return Array.isArray(list) ? list.map(coded).filter((c): c is CodedValueModel => c !== null) : null;
}

export function normalizeForeign(v: VForeign, level: ForeignLevel, country: string | null): ForeignCompanyModel {
  const ic = v.internationalClassification;
  const classification: ForeignClassificationModel | null = ic
    ? {
        nace: primaryOf(ic.nace),
        naics: primaryOf(ic.naics),
        sic: primaryOf(ic.sic),
        naf: coded(ic.naf),
        secondaryNace: secondaryOf(ic.nace),
        secondaryNaics: secondaryOf(ic.naics),
        secondarySic: secondaryOf(ic.sic),
      }
    : null;
  const address = foreignOffice(v.address);
  const sheets = (v.balanceSheets?.all ?? (v.balanceSheets?.last ? [v.balanceSheets.last] : []))
    .flatMap((y) => {
      const year = int(y?.year);
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
    address,
    contacts: v.contacts ? { phone: str(v.contacts.phone), fax: str(v.contacts.fax), website: str(v.contacts.website) } : null,
    classification,
    legalForm: coded(v.detailedLegalForm),
    balanceSheets: v.balanceSheets ? sheets : null,
    creditWorthy: bool(v.creditWorthy),
    companySize: str(v.companySize),
    identifiers: Array.isArray(v.markers)
      ? v.markers.map((m) => ({ label: str(m?.label), number: str(m?.number), types: (m?.types ?? []).filter((t): t is string => typeof t === 'string') }))
      : null,
    offices: Array.isArray(offices)
      ? offices.map((o) => ({ siretCode: str(o?.siretCode), companyName: str(o?.companyName), activityStatus: str(o?.activityStatus), address: foreignOffice(o?.address) }))
      : null,
    vatRegistration: null,
  };
}

export function normalizeEuStart(v: VEuStart): ForeignCompanyModel {
  const country = str(v.countryCode);
  // VIES answers the number without its country prefix; the schema promises it with the prefix,
  // as every other foreign endpoint gives it.
  const vat = str(v.vatCode);
  const vatCode = vat && country && !vat.toUpperCase().startsWith(country.toUpperCase()) ? `${country.toUpperCase()}${vat}` : vat;
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
  };
}
