/**
 * Renders a company profile into the vendor's response shapes: the start/advanced family (flat
 * records, `data` is an array), the small lookups (name, address, pec, sdicode, closed, vatgroup,
 * shareholders, ubo) and the section-based composite shapes (Marketing, Stakeholders, Aml, Full).
 * Every renderer reads the same profile, so all endpoints agree on the same company.
 */
import type { CompanyProfile, CompanyRef, Holding, Manager, Party } from './model.ts';
import { COMPOSITE_SECTIONS, LINE_SECTIONS, RATIO_SECTIONS, type CompositeShape, type EmployeeStatisticsField } from '../../contract/company-payloads.ts';
import { lineItems, operatingResults, ratios } from './financials.ts';
import { ageOn, type Person } from './people.ts';
import type { StreetAddress } from './places.ts';
import { employeesNow, lastFiled, profileOf } from './profile.ts';
import { isRegistered } from './ownership.ts';
import { Rng } from '../random.ts';
import { employeeRange, enterpriseSize, LEGAL_FORM_EN, legalFormByCode, legalFormFamily, raeOf, ROLES, saeOf, turnoverRange } from './tables.ts';

type Json = Record<string, unknown>;

const dateTime = (day: string | null): string | null => (day ? `${day}T00:00:00` : null);
const isoOfSeconds = (s: number): string => new Date(s * 1000).toISOString();
const dayOfSeconds = (s: number): string => isoOfSeconds(s).slice(0, 10);

const streetLine = (a: StreetAddress): string => `${a.toponym} ${a.street} ${a.streetNumber}`;
const streetLineComma = (a: StreetAddress): string => `${a.toponym} ${a.street}, ${a.streetNumber}`;

/** `address.registeredOffice` of the start/advanced family. */
export function registeredOffice(a: StreetAddress): Json {
  return {
    toponym: a.toponym,
    street: a.street,
    streetNumber: a.streetNumber,
    streetName: streetLine(a),
    town: a.town.name,
    hamlet: null,
    province: a.town.province,
    zipCode: a.zip,
    gps: { coordinates: [a.gps[0], a.gps[1]] },
    townCode: a.town.cadastral,
    region: { code: a.town.regionCode, description: a.town.regionName },
  };
}

// ---------------------------------------------------------------------------------------------
// Start / advanced family

/** The keys every record of the start/advanced family opens with. */
const recordHead = (p: CompanyProfile, office: Json): Json => ({ taxCode: p.taxCode, companyName: p.name, vatCode: p.vat, address: { registeredOffice: office } });

export function startRecord(p: CompanyProfile): Json {
  return {
    ...recordHead(p, registeredOffice(p.address)),
    activityStatus: p.status,
    creationTimestamp: p.creationTimestamp,
    lastUpdateTimestamp: p.lastUpdateTimestamp,
    sdiCode: p.sdiCode,
    sdiCodeTimestamp: p.sdiCodeTimestamp,
    id: p.id,
    registrationDate: p.registrationDate,
  };
}

/** The `shareHolders` list of IT-advanced / IT-shareholders. */
export function flatShareholders(p: CompanyProfile, minPercent = 0): Json[] {
  return p.shareholders
    .filter((h) => h.percent > minPercent)
    .map((h) =>
      h.holder.kind === 'company'
        ? { companyName: h.holder.name, name: null, surname: null, taxCode: h.holder.taxCode, percentShare: h.percent }
        : { companyName: null, name: h.holder.name, surname: h.holder.surname, taxCode: h.holder.taxCode, percentShare: h.percent },
    );
}

export function vatGroupRecord(p: CompanyProfile): Json {
  return { vatGroupParticipation: p.vatGroup.participation, isVatGroupLeader: p.vatGroup.leader, registryOk: p.status !== 'CESSATA' };
}

function balanceSheets(p: CompanyProfile): Json {
  const last = lastFiled(p);
  const entry = (y: CompanyProfile['years'][number], withExtras: boolean): Json => {
    const out: Json = { year: y.year, employees: y.employees, balanceSheetDate: y.balanceSheetDate, turnover: y.turnover, netWorth: y.netWorth, shareCapital: y.shareCapital };
    if (withExtras) {
      if (y.totalStaffCost !== undefined) out.totalStaffCost = y.totalStaffCost;
      if (y.totalAssets !== undefined) out.totalAssets = y.totalAssets;
      if (y.avgGrossSalary !== undefined) out.avgGrossSalary = y.avgGrossSalary;
    }
    return out;
  };
  return { last: last ? entry(last, true) : null, all: p.years.map((y) => entry(y, y === last)) };
}

export function advancedRecord(p: CompanyProfile): Json {
  const lf = legalFormByCode(p.legalForm);
  const ceased = p.status === 'CESSATA';
  const group = vatGroupRecord(p);
  return {
    ...recordHead(p, registeredOffice(p.address)),
    activityStatus: p.status,
    reaCode: p.rea,
    cciaa: p.cciaa,
    atecoClassification: {
      ateco: { code: p.activity.group, description: p.activity.groupIt },
      ateco2022: { code: p.activity.code, description: p.activity.it },
      ateco2007: { code: p.activity.code, description: p.activity.it },
    },
    detailedLegalForm: { code: p.legalForm, description: lf?.description ?? null },
    startDate: p.startDate,
    registrationDate: p.registrationDate,
    endDate: p.endDate,
    pec: p.pec,
    cessata: ceased,
    taxCodeCeased: ceased,
    taxCodeCeasedTimestamp: p.lastUpdateTimestamp,
    gruppo_iva: group,
    vatGroup: group,
    sdiCode: p.sdiCode,
    sdiCodeTimestamp: p.sdiCodeTimestamp,
    creationTimestamp: p.creationTimestamp,
    lastUpdateTimestamp: p.lastUpdateTimestamp,
    balanceSheets: balanceSheets(p),
    shareHolders: flatShareholders(p),
    id: p.id,
  };
}

/** IT-address and IT-name: the record head, its timestamps and the Openapi id. */
const lookupRecord = (p: CompanyProfile, office: Json): Json => ({
  ...recordHead(p, office),
  creationTimestamp: p.creationTimestamp,
  lastUpdateTimestamp: p.lastUpdateTimestamp,
  id: p.id,
});

export const addressRecord = (p: CompanyProfile): Json => lookupRecord(p, registeredOffice(p.address));
export const nameRecord = (p: CompanyProfile): Json => lookupRecord(p, { town: p.address.town.name });

export const pecRecord = (p: CompanyProfile): Json => ({ pec: p.pec, history: p.pecHistory.map((h) => ({ ...h })) });
export const sdiRecord = (p: CompanyProfile): Json => ({ sdiCode: p.sdiCode, id: p.id });

/** IT-closed: ceased on or before `date` (YYYY-MM-DD) when given, ceased at all otherwise. */
export function closedRecord(p: CompanyProfile, date?: string): Json {
  const ceased = p.status === 'CESSATA' && (date === undefined || (p.endDate !== null && p.endDate <= date));
  return { taxCodeCeased: ceased, id: p.id };
}

// ---------------------------------------------------------------------------------------------
// Beneficial owners

interface Owner {
  person: Person;
  share: number;
}

function effectiveOwners(vat: string, factor: number, depth: number, seen: Set<string>, out: Map<string, Owner>): void {
  if (depth > 10 || seen.has(vat) || !isRegistered(vat)) return;
  seen.add(vat);
  for (const h of profileOf(vat).shareholders) {
    const share = (factor * h.percent) / 100;
    if (h.holder.kind === 'person') {
      const prev = out.get(h.holder.taxCode);
      out.set(h.holder.taxCode, { person: h.holder, share: (prev?.share ?? 0) + share });
    } else effectiveOwners(h.holder.vat, share, depth + 1, seen, out);
  }
  seen.delete(vat);
}

function uboEntry(person: Person, roles: Json[]): Json {
  const r = person.residence;
  const t = person.birthTown;
  return {
    name: person.name,
    surname: person.surname,
    taxCode: person.taxCode,
    birthDate: person.birthDate,
    birthTown: t.name,
    birthProvince: { code: t.province, description: t.provinceName },
    address: {
      toponym: r.toponym,
      street: r.street,
      streetNumber: r.streetNumber,
      zipCode: r.zip,
      town: r.town.name,
      province: { code: r.town.province, description: r.town.provinceName },
      region: { code: r.town.regionCode, description: r.town.regionName },
    },
    roles,
  };
}

/**
 * Ultimate beneficial owners: natural persons holding at least 25% once holdings are multiplied
 * along the ownership chain; when there are none, the company's legal representatives.
 */
export function uboRecords(p: CompanyProfile): Json[] {
  const owners = new Map<string, Owner>();
  effectiveOwners(p.vat, 100, 0, new Set(), owners);
  const rolesOf = (taxCode: string): Json[] =>
    p.managers
      .filter((m) => m.who.kind === 'person' && m.who.taxCode === taxCode)
      .flatMap((m) => m.roles.map((r) => ({ code: r.code, description: ROLES[r.code].it, type: 'CARICA' })));
  const qualifying = [...owners.values()].filter((o) => o.share >= 25 - 1e-9).sort((a, b) => b.share - a.share);
  if (qualifying.length > 0) {
    return qualifying.map((o) => uboEntry(o.person, [{ code: 'TEP', description: 'TITOLARE EFFETTIVO PER PROPRIETA', type: 'PROPRIETA' }, ...rolesOf(o.person.taxCode)]));
  }
  return p.managers.filter((m): m is Manager & { who: Person } => m.legalRep && m.who.kind === 'person').map((m) => uboEntry(m.who, rolesOf(m.who.taxCode)));
}

// ---------------------------------------------------------------------------------------------
// Sections of the composite shapes

const STATUS_SECTION: Record<string, { code: string; description: string }> = {
  ATTIVA: { code: 'A', description: 'Enable' },
  CESSATA: { code: 'CF', description: 'Out of business (in a positive way)' },
  INATTIVA: { code: 'I', description: 'Inactive' },
  SOSPESA: { code: 'S', description: 'Dormant' },
  REGISTRATA: { code: 'I', description: 'Inactive' },
  IN_ISCRIZIONE: { code: 'I', description: 'Inactive' },
};

const OFFICE_TYPES = {
  SSL: 'Administrative headquarter and registered office',
  UL: 'Local units',
} as const;

function sectionAddress(a: StreetAddress): Json {
  return {
    streetName: streetLineComma(a),
    zipCode: a.zip,
    town: a.town.name,
    province: { code: a.town.province, description: a.town.provinceName },
    region: { code: a.town.regionCode, description: a.town.regionName },
    country: { code: 'IT', description: 'Italia' },
  };
}

function companyDetails(p: CompanyProfile, office = p.offices[0]): Json {
  return {
    vatCode: p.vat,
    taxCode: p.taxCode,
    lastUpdateDate: isoOfSeconds(p.lastUpdateTimestamp),
    cciaa: office.cciaa,
    reaCode: office.rea,
    companyName: p.name,
    officeType: { code: office.type, description: OFFICE_TYPES[office.type] },
    openapiNumber: office.openapiNumber,
    serviceNumber: office.openapiNumber,
  };
}

function personManager(m: Manager & { who: Person }, refDay: string): Json {
  const w = m.who;
  return {
    name: w.name,
    surname: w.surname,
    roles: m.roles.map((r) => ({ role: { code: r.code, description: ROLES[r.code].en }, roleStartDate: dateTime(r.start) })),
    gender: w.gender === 'M' ? { code: 'M', description: 'Man' } : { code: 'W', description: 'Woman' },
    taxCode: w.taxCode,
    birthDate: dateTime(w.birthDate),
    age: ageOn(w.birthDate, refDay),
    birthTown: `${w.birthTown.name} (${w.birthTown.province})`,
    isLegalRepresentative: m.legalRep,
  };
}

function managersSection(p: CompanyProfile): Json[] {
  const refDay = dayOfSeconds(p.lastUpdateTimestamp);
  return p.managers.map((m) =>
    m.who.kind === 'person'
      ? personManager(m as Manager & { who: Person }, refDay)
      : {
          companyName: m.who.name,
          roles: m.roles.map((r) => ({ role: { code: r.code, description: ROLES[r.code].en }, roleStartDate: dateTime(r.start) })),
          taxCode: m.who.taxCode,
          isLegalRepresentative: m.legalRep,
        },
  );
}

function holderInformation(holder: Party, since: string): Json {
  const a = holder.kind === 'person' ? holder.residence : holder.address;
  if (holder.kind === 'person') {
    return { taxCode: holder.taxCode, name: holder.name, surname: holder.surname, streetName: streetLine(a), sinceDate: dateTime(since), zipCode: a.zip, town: a.town.name };
  }
  return {
    taxCode: holder.taxCode,
    openapiNumber: holder.openapiNumber,
    serviceNumber: holder.openapiNumber,
    companyName: holder.name,
    sinceDate: dateTime(since),
    streetName: streetLine(a),
    zipCode: a.zip,
    town: a.town.name,
  };
}

function shareholdersSection(p: CompanyProfile): Json[] {
  return p.shareholders.map((h: Holding) => ({
    shareholdersInformation: [holderInformation(h.holder, h.since)],
    percentShare: h.percent,
    shareType: { code: 'PRO', description: 'Ownership' },
  }));
}

function parentCompany(ref: CompanyRef): Json {
  const a = ref.address;
  return {
    companyName: ref.name,
    streetName: streetLineComma(a),
    town: a.town.name,
    zipCode: a.zip,
    province: { code: a.town.province, description: a.town.provinceName },
    country: { code: 'IT', description: 'Italia' },
  };
}

function corporateGroups(p: CompanyProfile): Json {
  const fixed = p.fixedSections?.corporateGroups;
  if (fixed) return fixed as Json;
  const stem = (name: string): string => name.replace(/\s+(S\.R\.L\.S?|S\.P\.A\.)$/, '');
  if (p.groupTop && p.parent) {
    return {
      belongsToGroup: true,
      groupName: `${stem(p.groupTop.name)} GROUP`,
      holdingCompanyName: p.groupTop.name,
      holdingCountry: { code: 'IT', description: 'ITALIA' },
      nationalParentCompany: parentCompany(p.parent),
      hasForeignParentCompany: false,
    };
  }
  if (p.holdings.some((h) => h.percent > 50)) {
    return {
      belongsToGroup: true,
      groupName: `${stem(p.name)} GROUP`,
      holdingCompanyName: p.name,
      holdingCountry: { code: 'IT', description: 'ITALIA' },
      nationalParentCompany: { province: { code: 'ND99', description: 'N. A.' } },
      hasForeignParentCompany: false,
    };
  }
  return { belongsToGroup: false, hasForeignParentCompany: false };
}

function subsidiaries(p: CompanyProfile): Json[] {
  return p.holdings
    .filter((h) => h.percent > 50)
    .map((h) => {
      const a = h.company.address;
      return {
        taxCode: h.company.taxCode,
        companyName: h.company.name,
        streetName: streetLineComma(a),
        zipCode: a.zip,
        town: a.town.name,
        province: { code: a.town.province, description: a.town.provinceName },
      };
    });
}

function affiliateCompanies(p: CompanyProfile): Json | undefined {
  const h = p.holdings.find((x) => x.percent <= 50);
  return h ? { taxCode: h.company.taxCode, companyName: h.company.name, percentShare: h.percent } : undefined;
}

function ecofin(p: CompanyProfile): Json {
  const last = lastFiled(p);
  const turnover = last?.turnover ?? 0;
  const employees = employeesNow(p);
  return {
    balanceSheetDate: dateTime(last?.balanceSheetDate ?? null),
    turnoverRange: turnoverRange(turnover),
    turnoverYear: last?.year ?? null,
    turnover: last?.turnover ?? null,
    turnoverTrend: p.turnoverTrend,
    shareCapital: last?.shareCapital ?? p.years[0]?.shareCapital ?? null,
    netWorth: last?.netWorth ?? null,
    enterpriseSize: enterpriseSize(employees, turnover),
  };
}

function employeesStatistic(p: CompanyProfile): Json {
  const fixed = p.fixedSections?.employeesStatistic;
  if (fixed) return fixed as Json;
  const rng = new Rng(`staff:${p.vat}`);
  const permanent = Math.round(rng.float(55, 100, 0));
  const fullTime = Math.round(rng.float(50, 100, 0));
  const whiteCollar = Math.round(rng.float(10, 100, 0));
  return {
    fixedTermContract: 100 - permanent,
    permanentContract: permanent,
    partialTimeContract: 100 - fullTime,
    fullTimeContract: fullTime,
    director: Math.round(rng.float(0, 8, 0)),
    frameworkContract: Math.round(rng.float(0, 5, 0)),
    whiteCollar,
    apprentice: Math.round(rng.float(0, 10, 0)),
  } satisfies Record<EmployeeStatisticsField, number>;
}

function webAndSocial(p: CompanyProfile): Json {
  const out: Json = {};
  if (p.website) out.website = p.website;
  out.hasSocial = Object.keys(p.socials).length > 0;
  Object.assign(out, p.socials);
  return out;
}

function foreignTrade(p: CompanyProfile): Json {
  const fixed = p.fixedSections?.foreignTrade;
  if (fixed) return fixed as Json;
  const t = p.trade;
  const out: Json = { isImporter: t.importer };
  if (t.importer) Object.assign(out, { importPercentShare: t.importShare, importCountries: t.importCountries });
  out.isExporter = t.exporter;
  if (t.exporter) Object.assign(out, { exportPercentShare: t.exportShare, exportCountries: t.exportCountries });
  return out;
}

function internationalClassification(p: CompanyProfile): Json {
  const fixed = p.fixedSections?.internationalClassification;
  if (fixed) return fixed as Json;
  return {
    nace: { code: p.activity.code, description: p.activity.nace },
    primarySic: { code: p.activity.sic.code, description: p.activity.sic.description },
    secondarySic: p.secondaryActivity?.sic.code ?? null,
  };
}

function fixedOr(p: CompanyProfile, key: string, make: () => unknown): unknown {
  const v = p.fixedSections?.[key];
  return v !== undefined ? v : make();
}

/** Every section the emulator knows, by name. */
function sectionMakers(p: CompanyProfile): Record<string, () => unknown> {
  const last = lastFiled(p);
  const employees = employeesNow(p);
  const makers: Record<string, () => unknown> = {
    companyDetails: () => companyDetails(p),
    legalForm: () => ({
      legalForm: legalFormFamily(p.legalForm),
      detailedLegalForm: { code: p.legalForm, description: LEGAL_FORM_EN[p.legalForm] ?? legalFormByCode(p.legalForm)?.description ?? null },
    }),
    companyStatus: () => ({ activityStatus: STATUS_SECTION[p.status] }),
    companyDates: () => {
      const out: Json = {
        registrationDate: dateTime(p.registrationDate),
        startDate: dateTime(p.startDate),
        incorporationDate: dateTime(p.incorporationDate),
        foundingDate: dateTime(p.incorporationDate),
      };
      if (p.endDate) out.endDate = dateTime(p.endDate);
      return out;
    },
    address: () => sectionAddress(p.address),
    marketable: () => ({ isMarketable: p.status === 'ATTIVA' }),
    branches: () => ({ numberOfBranches: p.offices.filter((o) => o.type === 'UL').length }),
    atecoClassification: () => {
      const out: Json = { ateco: { code: p.activity.code, description: p.activity.en } };
      if (p.secondaryActivity) out.secondaryAteco = p.secondaryActivity.code;
      out.ateco2022 = { code: p.activity.code, description: p.activity.en };
      if (p.secondaryActivity) out.secondaryAteco2022 = p.secondaryActivity.code;
      return out;
    },
    internationalClassification: () => internationalClassification(p),
    ecofin: () => ecofin(p),
    employees: () => ({ employeeRange: employeeRange(employees), employee: employees, employeeTrend: p.employeeTrend }),
    operatingResults: () => operatingResults(p),
    employeesStatistic: () => employeesStatistic(p),
    innovativeSmeAndSu: () => fixedOr(p, 'innovativeSmeAndSu', () => ({ isInnovativeStartUp: p.innovativeStartup, isInnovativeSme: p.innovativeSme })),
    mail: () => ({ email: p.email }),
    contacts: () => ({ telephoneNumber: p.phone, fax: p.fax }),
    webAndSocial: () => webAndSocial(p),
    pec: () => p.pec,
    publicTenders: () => fixedOr(p, 'publicTenders', () => p.tenders.map((t) => ({ ...t }))),
    foreignTrade: () => foreignTrade(p),
    managers: () => managersSection(p),
    shareholders: () => shareholdersSection(p),
    corporateGroups: () => corporateGroups(p),
    subsidiaries: () => subsidiaries(p),
    affiliateCompanies: () => affiliateCompanies(p),
    artisanBusinessRegistry: () =>
      p.artisan
        ? {
            belongsToArtisanBusinessRegistry: true,
            artisanBusinessRegistry: { registrationDate: dateTime(p.artisan.registrationDate), registrationNumber: p.artisan.registrationNumber },
          }
        : { belongsToArtisanBusinessRegistry: false },
    soaCertification: () => ({ hasSoaCertification: p.soa }),
    rae: () => fixedOr(p, 'rae', () => raeOf(p.activity.code)),
    sae: () => fixedOr(p, 'sae', () => saeOf(p.legalForm, p.activity.code)),
    allOffices: () =>
      p.offices.map((o) => ({ companyDetails: companyDetails(p, o), companyStatus: { activityStatus: STATUS_SECTION[p.status] }, address: sectionAddress(o.address) })),
  };
  for (const s of LINE_SECTIONS) makers[s] = () => (last ? lineItems(p, s) : []);
  for (const s of RATIO_SECTIONS) makers[s] = () => (last ? ratios(p, s) : {});
  return makers;
}

/** A composite dataset (`data` object of IT-marketing, IT-stakeholders, IT-aml, IT-full). */
export function compositeRecord(p: CompanyProfile, shape: CompositeShape): Json {
  const makers = sectionMakers(p);
  const out: Json = {};
  for (const section of COMPOSITE_SECTIONS[shape]) {
    const make = makers[section];
    if (!make) continue;
    const value = make();
    if (value !== undefined) out[section] = value;
  }
  return out;
}
