/**
 * The company generator: a VAT number in, a whole company out (identity, people, ownership,
 * figures), always the same for the same VAT. Pinned companies (`sandbox.ts`) override parts of
 * it; everything else derives from seeded randomness keyed by the VAT number.
 */
import { hexId } from '../core.ts';
import { companyIdOfVat } from '../company-ids.ts';
import type { ActivityStatus, CompanyProfile, CompanyRef, Holding, Manager, Office, Party, Role, YearFigures } from './model.ts';
import { OPENAPI_FIXED_SECTIONS } from './openapi-spa.ts';
import { childLinks, ownershipChain, parentLinks, type OwnershipLink } from './ownership.ts';
import { generatePerson, personFrom, pickSurname, type Person } from './people.ts';
import { pickAddress, pickTown, townByCadastral, type StreetAddress, type Town } from './places.ts';
import { dayBetween, dayToSeconds, isoDay, Rng } from '../random.ts';
import { AUDIT_FIRMS, FOREIGN_BIRTH_PLACES, OPENAPI_VAT, pinnedByVat, type PinnedCompany, type PinnedPerson, type PinnedStreet } from './sandbox.ts';
import { ACTIVITIES, activityByCode, LEGAL_FORM_SUFFIX, PEC_DOMAINS, SDI_CODES, type Activity, type RoleCode } from './tables.ts';

/** The last financial year with filed balance sheets. */
export const LAST_BALANCE_YEAR = 2023;

/** What other companies need to know about a company: no people, no figures, no links. */
export interface Identity {
  vat: string;
  taxCode: string;
  name: string;
  legalForm: string;
  activity: Activity;
  status: ActivityStatus;
  address: StreetAddress;
  openapiNumber: string;
  incorporationDate: string;
  registrationDate: string;
  startDate: string;
  endDate: string | null;
  employees: number;
}

const addDays = (day: string, days: number): string => isoDay(new Date(Date.parse(`${day}T00:00:00Z`) + days * 86_400_000));
const laterOf = (a: string, b: string): string => (a > b ? a : b);

function resolveTown(cadastral: string): Town {
  const town = townByCadastral(cadastral);
  if (town) return town;
  const foreign = FOREIGN_BIRTH_PLACES[cadastral];
  if (!foreign) throw new Error(`unknown cadastral code ${cadastral}`);
  return {
    name: foreign.name,
    istat: '',
    cadastral,
    province: foreign.province,
    provinceName: foreign.name,
    regionCode: '',
    regionName: '',
    zips: [''],
    population: 0,
    gps: [0, 0],
  };
}

function pinnedAddress(town: Town, street: PinnedStreet | undefined, rng: Rng, seed: string): StreetAddress {
  if (!street) return pickAddress(rng, town, seed);
  const base = pickAddress(rng, town, seed);
  return { toponym: street.toponym, street: street.street, streetNumber: street.streetNumber, town, zip: street.zip, gps: street.gps ?? base.gps };
}

const pinnedPerson = (p: PinnedPerson): Person =>
  personFrom(
    { name: p.name, surname: p.surname, gender: p.gender, birthDate: p.birthDate, birthTown: resolveTown(p.birthTown), taxCode: p.taxCode },
    `${p.surname}:${p.name}:${p.birthDate}`,
  );

const NAME_PREFIXES = ['NUOVA', 'EURO', 'ITAL', 'GLOBAL', 'PRIMA', 'NOVA', 'MEDITERRANEA', 'TECNO', 'GENERAL'] as const;
const NAME_SUFFIXES = ['ITALIA', 'GROUP', 'SERVICE', 'SUD', 'NORD', 'CENTRO', '& PARTNERS', 'PLUS', '2000', 'NET'] as const;

/** Employees now, by size band. */
function pickEmployees(rng: Rng): number {
  const band = rng.weighted<[number, number]>([
    [[0, 1], 15],
    [[2, 5], 25],
    [[6, 10], 18],
    [[11, 20], 15],
    [[21, 50], 12],
    [[51, 100], 7],
    [[101, 250], 5],
    [[251, 1200], 3],
  ]);
  return rng.int(band[0], band[1]);
}

function generatedIdentity(vat: string): Identity {
  const rng = new Rng(`identity:${vat}`);
  const parents = parentLinks(vat);
  const children = childLinks(vat);
  const holding = children.length > 0 && rng.chance(0.6);
  const activity = holding ? (activityByCode('6420') as Activity) : rng.pick(ACTIVITIES.filter((a) => a.code !== '6420'));
  let legalForm: string;
  if (parents.length === 1 && parents[0].percent === 100)
    legalForm = rng.weighted([
      ['SU', 50],
      ['SR', 35],
      ['SP', 15],
    ]);
  else if (parents.length > 0 || holding)
    legalForm = rng.weighted([
      ['SR', 60],
      ['SP', 40],
    ]);
  else
    legalForm = rng.weighted([
      ['SR', 48],
      ['RS', 7],
      ['SU', 6],
      ['SP', 6],
      ['SN', 12],
      ['AS', 12],
      ['SC', 6],
      ['OO', 3],
    ]);
  const status = rng.weighted<ActivityStatus>([
    ['ATTIVA', 88],
    ['CESSATA', 6],
    ['INATTIVA', 2],
    ['SOSPESA', 1],
    ['REGISTRATA', 2],
    ['IN_ISCRIZIONE', 1],
  ]);
  const town = pickTown(rng);
  const address = pickAddress(rng, town, vat);
  const incorporationYear = 2023 - Math.floor(53 * rng.next() ** 1.6);
  const incorporationDate = dayBetween(rng, incorporationYear, incorporationYear);
  const registrationDate = addDays(incorporationDate, rng.int(3, 25));
  const startDate = addDays(registrationDate, rng.int(0, 120));
  const endDate = status === 'CESSATA' ? dayBetween(rng, Math.max(Number(startDate.slice(0, 4)) + 2, 2015), 2024) : null;
  const p0 = generatePerson(`${vat}:person:0`);
  const p1 = generatePerson(`${vat}:person:1`);
  const word = rng.pick(activity.words);
  const surname = rng.chance(0.5) ? p0.surname : pickSurname(rng);
  let base: string;
  if (legalForm === 'SN') base = rng.chance(0.5) ? `${p0.surname} & ${p1.surname}` : `${word} DI ${p0.surname} ${p0.name} & C.`;
  else if (legalForm === 'AS') base = `${rng.chance(0.5) ? p0.surname : word} ${rng.chance(0.5) ? word : rng.pick(NAME_SUFFIXES)} DI ${p0.surname} ${p0.name} & C.`;
  else if (legalForm === 'SC' || legalForm === 'OO') base = `${word} ${rng.pick(['NUOVA', 'SOLIDALE', 'INSIEME', town.name])}`;
  else if (holding) base = rng.chance(0.6) ? `${surname} HOLDING` : `${rng.pick(NAME_PREFIXES)} PARTECIPAZIONI`;
  else
    base = rng.weighted([
      [`${surname} ${word}`, 35],
      [`${word} ${rng.pick(NAME_SUFFIXES)}`, 25],
      [`${word} ${town.name}`, 15],
      [`${rng.pick(NAME_PREFIXES)} ${word}`, 25],
    ]);
  const suffix = LEGAL_FORM_SUFFIX[legalForm] ?? '';
  return {
    vat,
    taxCode: vat,
    name: suffix ? `${base} ${suffix}` : base,
    legalForm,
    activity,
    status,
    address,
    openapiNumber: `IT${hexId(`oan:${vat}`).slice(0, 8).toUpperCase()}S0001`,
    incorporationDate,
    registrationDate,
    startDate,
    endDate,
    employees: status === 'CESSATA' ? 0 : holding ? rng.int(1, 8) : pickEmployees(rng),
  };
}

function pinnedIdentity(p: PinnedCompany): Identity {
  const rng = new Rng(`identity:${p.vat}`);
  const town = resolveTown(p.town);
  const incorporationDate = p.incorporationDate ?? dayBetween(rng, 1990, 2020);
  const registrationDate = p.details?.registrationDate ?? addDays(incorporationDate, rng.int(3, 25));
  const startDate = p.details?.startDate ?? addDays(registrationDate, rng.int(0, 90));
  const activity = activityByCode(p.activity);
  if (!activity) throw new Error(`pinned company ${p.vat}: unknown activity ${p.activity}`);
  return {
    vat: p.vat,
    taxCode: p.ownerTaxCode ?? p.vat,
    name: p.name,
    legalForm: p.legalForm,
    activity,
    status: p.status ?? 'ATTIVA',
    address: pinnedAddress(town, p.street, rng, p.vat),
    openapiNumber: p.details?.openapiNumber ?? `IT${hexId(`oan:${p.vat}`).slice(0, 8).toUpperCase()}S0001`,
    incorporationDate,
    registrationDate,
    startDate,
    endDate: p.endDate ?? null,
    employees: p.employees ?? 5,
  };
}

const identities = new Map<string, Identity>();

/** The identity of a company (name, legal form, address, dates). */
export function identityOf(vat: string): Identity {
  let id = identities.get(vat);
  if (!id) {
    const pinned = pinnedByVat(vat);
    id = pinned ? pinnedIdentity(pinned) : generatedIdentity(vat);
    if (identities.size > 50_000) identities.clear();
    identities.set(vat, id);
  }
  return id;
}

/** A company as another company's record names it. */
export function companyRef(vat: string): CompanyRef {
  const id = identityOf(vat);
  return { kind: 'company', vat, taxCode: id.taxCode, name: id.name, address: id.address, openapiNumber: id.openapiNumber };
}

/** Splits `total` percent into `parts` integer shares, the first the largest. */
function splitPercent(rng: Rng, total: number, parts: number): number[] {
  if (parts <= 1) return [total];
  const weights = Array.from({ length: parts }, (_, i) => (i === 0 ? 2 : 1) * (0.5 + rng.next()));
  const sum = weights.reduce((a, b) => a + b, 0);
  const shares = weights.map((w) => Math.max(1, Math.floor((w / sum) * total)));
  shares[0] += total - shares.reduce((a, b) => a + b, 0);
  return shares;
}

function roleStart(rng: Rng, identity: Identity): string {
  const from = Number(identity.incorporationDate.slice(0, 4));
  return laterOf(dayBetween(rng, from, Math.max(from, 2023)), identity.incorporationDate);
}

function buildYears(rng: Rng, identity: Identity, legalForm: string): { years: YearFigures[]; employeeTrend: number; turnoverTrend: number } {
  const incYear = Number(identity.incorporationDate.slice(0, 4));
  const endYear = identity.endDate ? Number(identity.endDate.slice(0, 4)) : null;
  const lastYear = endYear ?? LAST_BALANCE_YEAR + 1;
  const capital =
    legalForm === 'DI' || legalForm === 'SN' || legalForm === 'AS' || legalForm === 'SC' || legalForm === 'OO'
      ? legalForm === 'DI'
        ? null
        : rng.pick([2500, 5000, 10000])
      : legalForm === 'RS'
        ? rng.pick([1000, 2000, 5000])
        : legalForm === 'SP' || legalForm === 'AU'
          ? rng.pick([50000, 120000, 500000, 1000000, 2500000])
          : rng.pick([10000, 10000, 20000, 50000, 100000]);
  const employeesNow = Math.max(identity.employees, endYear ? rng.int(1, 6) : 0);
  const productivity = identity.activity.turnoverPerEmployee * (0.6 + rng.next() * 0.9);
  const growth = 1 + (rng.next() * 0.16 - 0.05);
  const years: YearFigures[] = [];
  let reserves = 0;
  for (let y = Math.max(incYear, 2017); y <= Math.min(lastYear, LAST_BALANCE_YEAR + 1); y++) {
    const factor = growth ** (y - LAST_BALANCE_YEAR) * (0.92 + rng.next() * 0.16);
    const employees = Math.max(0, Math.round(employeesNow * factor));
    const filed = y <= LAST_BALANCE_YEAR && (endYear === null || y < endYear);
    if (!filed) {
      years.push({ year: y, employees, balanceSheetDate: null, turnover: null, netWorth: null, shareCapital: capital });
      continue;
    }
    const turnover = Math.round(Math.max(25_000, Math.max(1, employees) * productivity * factor));
    reserves += Math.round(turnover * (rng.next() * 0.1 - 0.02));
    const netWorth = (capital ?? 0) + reserves;
    const totalStaffCost = Math.round(employees * (30_000 + rng.next() * 18_000));
    years.push({
      year: y,
      employees,
      balanceSheetDate: `${y}-12-31`,
      turnover,
      netWorth,
      shareCapital: capital,
      totalStaffCost,
      totalAssets: Math.round(turnover * (0.4 + rng.next() * 0.8)),
      avgGrossSalary: employees > 0 ? Math.round((totalStaffCost / employees) * 100) / 100 : 0,
    });
  }
  years.reverse();
  const filed = years.filter((y) => y.turnover !== null);
  const pct = (a: number | null | undefined, b: number | null | undefined): number => (a && b ? Math.round(((a - b) / b) * 10_000) / 100 : 0);
  return {
    years,
    employeeTrend: pct(filed[0]?.employees, filed[1]?.employees),
    turnoverTrend: pct(filed[0]?.turnover, filed[1]?.turnover),
  };
}

function slugOf(name: string): string {
  return (
    name
      .replace(/\b(S\.R\.L\.S?|S\.P\.A\.|S\.N\.C\.|S\.A\.S\.|SOCIETA' COOPERATIVA( SOCIALE)?)$/, '')
      .toLowerCase()
      .replace(/[^a-z0-9]/g, '')
      .slice(0, 20) || 'impresa'
  );
}

function buildPeople(vat: string, identity: Identity, parents: OwnershipLink[], rng: Rng): { managers: Manager[]; shareholders: Holding[] } {
  const pinned = pinnedByVat(vat);
  const people = Array.from({ length: 8 }, (_, i) => generatePerson(`${vat}:person:${i}`));
  const lf = identity.legalForm;
  const start = (): string => roleStart(rng, identity);

  // Shareholders: company parents first, natural persons for the rest of the capital.
  const shareholders: Holding[] = parents.map((l) => ({ holder: companyRef(l.parent), percent: l.percent, since: laterOf(l.since, identity.incorporationDate) }));
  if (pinned?.personHolders) {
    for (const h of pinned.personHolders) shareholders.push({ holder: pinnedPerson(h.person), percent: h.percent, since: h.since });
  } else if (lf !== 'DI' && lf !== 'SC' && lf !== 'OO') {
    const rest = 100 - parents.reduce((s, l) => s + l.percent, 0);
    if (rest > 0) {
      const count = lf === 'SU' || lf === 'AU' ? 1 : lf === 'SN' || lf === 'AS' ? rng.int(2, 3) : rng.int(1, 3);
      splitPercent(rng, rest, count).forEach((percent, i) =>
        shareholders.push({ holder: people[i], percent, since: laterOf(dayBetween(rng, 2000, 2023), identity.incorporationDate) }),
      );
    }
  }

  // Managers.
  const managers: Manager[] = [];
  const add = (who: Party, codes: RoleCode[], legalRep: boolean): void => {
    const roles: Role[] = codes.map((code) => ({ code, start: start() }));
    managers.push({ who, roles, legalRep });
  };
  if (pinned?.personManagers) {
    for (const m of pinned.personManagers) managers.push({ who: pinnedPerson(m.person), roles: m.roles.map((r) => ({ ...r })), legalRep: m.legalRep });
  } else if (lf === 'DI') {
    add(people[0], ['TIT'], true);
  } else if (lf === 'SN') {
    const partners = shareholders.filter((h) => h.holder.kind === 'person');
    for (const h of partners) add(h.holder, ['SOC'], true);
  } else if (lf === 'AS') {
    const partners = shareholders.filter((h) => h.holder.kind === 'person');
    partners.forEach((h, i) => add(h.holder, [i === 0 ? 'SOA' : 'SAC'], i === 0));
  } else if (lf === 'SC' || lf === 'OO') {
    add(people[0], ['PCA'], true);
    const board = rng.int(2, 4);
    for (let i = 1; i <= board; i++) add(people[i], ['CON'], false);
  } else {
    if (identity.employees < 50 && rng.chance(0.6)) add(people[0], ['AUN'], true);
    else {
      add(people[0], ['PCA'], true);
      add(people[1], ['ADE'], true);
      const board = rng.int(1, 2);
      for (let i = 2; i < 2 + board; i++) add(people[i], ['CON'], false);
    }
    if (lf === 'SP' || lf === 'AU' || identity.employees >= 50) {
      add(people[4], ['PCS'], false);
      add(people[5], ['SIN'], false);
      const auditor = rng.pick(AUDIT_FIRMS);
      if (auditor !== vat) add(companyRef(auditor), ['REV'], false);
    }
    if (rng.chance(0.2)) add(people[6], ['PP'], false);
  }
  if (identity.status === 'CESSATA' && !pinned?.personManagers && managers[0]) managers[0].roles.push({ code: 'LIQ', start: identity.endDate ?? start() });
  // A company that owns it all appears among the managers as sole owner (as in the vendor's example).
  const sole = parents.find((l) => l.percent === 100);
  if (sole) managers.splice(1, 0, { who: companyRef(sole.parent), roles: [{ code: 'SOU', start: laterOf(sole.since, identity.incorporationDate) }], legalRep: false });
  return { managers, shareholders };
}

function buildOffices(vat: string, identity: Identity, rea: string, rng: Rng): Office[] {
  const offices: Office[] = [{ type: 'SSL', cciaa: identity.address.town.province, rea, address: identity.address, openapiNumber: identity.openapiNumber }];
  const pinned = pinnedByVat(vat);
  if (pinned?.details?.localUnits) {
    for (const u of pinned.details.localUnits) {
      const town = resolveTown(u.town);
      offices.push({ type: 'UL', cciaa: u.cciaa, rea: u.rea, address: pinnedAddress(town, u.street, rng, `${vat}:${u.rea}`), openapiNumber: u.openapiNumber });
    }
    return offices;
  }
  const units = identity.employees > 100 ? rng.int(1, 4) : identity.employees > 10 ? rng.int(0, 2) : rng.chance(0.15) ? 1 : 0;
  for (let i = 1; i <= units; i++) {
    const town = pickTown(rng);
    offices.push({
      type: 'UL',
      cciaa: town.province,
      rea: String(rng.int(100_000, 2_500_000)),
      address: pickAddress(rng, town, `${vat}:unit:${i}`),
      openapiNumber: identity.openapiNumber.replace(/S0001$/, `U${String(i).padStart(4, '0')}`),
    });
  }
  return offices;
}

const COUNTRIES = ['DE', 'FR', 'ES', 'US', 'CN', 'CH', 'GB', 'NL', 'BE', 'AT', 'PL', 'TR'] as const;

function buildProfile(vat: string): CompanyProfile {
  const identity = identityOf(vat);
  const pinned = pinnedByVat(vat);
  const details = pinned?.details;
  const rng = new Rng(`profile:${vat}`);
  const parents = parentLinks(vat);
  const children = childLinks(vat);
  const { managers, shareholders } = buildPeople(vat, identity, parents, new Rng(`people:${vat}`));
  const figures = details?.years
    ? { years: details.years, employeeTrend: details.employeeTrend ?? 0, turnoverTrend: details.turnoverTrend ?? 0 }
    : buildYears(new Rng(`years:${vat}`), identity, identity.legalForm);
  const slug = slugOf(identity.name);
  const domain = rng.pick(PEC_DOMAINS);
  const creationTimestamp = details?.creationTimestamp ?? dayToSeconds(dayBetween(rng, 2021, 2021)) + rng.int(0, 86_399);
  const lastUpdateTimestamp = details?.lastUpdateTimestamp ?? dayToSeconds(dayBetween(rng, 2024, 2024)) + rng.int(0, 86_399);
  const pec = details?.pec ?? `${slug}@${domain}`;
  const pecHistory =
    details?.pecHistory ?? (rng.chance(0.3) ? [{ pec: `${slug}${rng.int(1, 99)}@${rng.pick(PEC_DOMAINS)}`, timestamp: creationTimestamp + rng.int(86_400, 86_400 * 500) }] : []);
  const rea = details?.rea ?? String(rng.int(100_000, 2_500_000));
  const chain = ownershipChain(vat);
  const majority = parents.slice().sort((a, b) => b.percent - a.percent || a.parent.localeCompare(b.parent))[0];
  const manufacturing = /^(10|11|25|28)/.test(identity.activity.code);
  const importer = rng.chance(manufacturing ? 0.5 : 0.15);
  const exporter = rng.chance(manufacturing ? 0.6 : 0.15);
  const participation = rng.chance(chain.length > 0 ? 0.2 : 0.02);
  const tenders = rng.chance(0.15)
    ? Array.from({ length: rng.int(1, 3) }, (_, i) => {
        const applied = rng.int(1, 60);
        return { year: String(LAST_BALANCE_YEAR - i), applied, won: rng.int(0, applied), value: rng.float(5_000, 900_000) };
      })
    : [];
  const artisanForms = ['DI', 'SN', 'AS'];
  const artisan =
    artisanForms.includes(identity.legalForm) && ['1071', '4520', '4321'].includes(identity.activity.code) && rng.chance(0.7)
      ? { registrationDate: identity.registrationDate, registrationNumber: String(rng.int(10_000, 999_999)) }
      : null;
  const socials: Record<string, string> = details?.socials ?? {};
  if (!details && rng.chance(0.4)) {
    socials.facebook = `https://www.facebook.com/${slug}`;
    if (rng.chance(0.6)) socials.linkedin = `https://www.linkedin.com/company/${slug}/`;
    if (rng.chance(0.4)) socials.instagram = `https://www.instagram.com/${slug}/`;
  }
  const secondary = rng.chance(0.4) ? rng.pick(ACTIVITIES.filter((a) => a.code !== identity.activity.code)) : null;
  return {
    vat,
    taxCode: identity.taxCode,
    id: companyIdOfVat(vat),
    name: identity.name,
    legalForm: identity.legalForm,
    status: identity.status,
    address: identity.address,
    cciaa: identity.address.town.province,
    rea,
    activity: identity.activity,
    secondaryActivity: vat === OPENAPI_VAT ? (activityByCode('6202') ?? null) : secondary,
    pec,
    pecHistory,
    sdiCode: details?.sdiCode ?? rng.pick(SDI_CODES),
    sdiCodeTimestamp: details?.sdiCodeTimestamp ?? creationTimestamp,
    email: details?.email ?? `info@${slug}.it`,
    phone: details?.phone ?? `0${rng.int(10, 99)}${rng.int(1_000_000, 9_999_999)}`,
    fax: details?.fax ?? (rng.chance(0.5) ? `0${rng.int(10, 99)}${rng.int(1_000_000, 9_999_999)}` : null),
    website: details?.website ?? (rng.chance(0.6) ? `www.${slug}.it` : null),
    socials,
    incorporationDate: identity.incorporationDate,
    registrationDate: identity.registrationDate,
    startDate: identity.startDate,
    endDate: identity.endDate,
    creationTimestamp,
    lastUpdateTimestamp,
    years: figures.years,
    employeeTrend: figures.employeeTrend,
    turnoverTrend: figures.turnoverTrend,
    managers,
    shareholders,
    holdings: children.map((l) => ({ company: companyRef(l.child), percent: l.percent, since: l.since })),
    groupTop: chain.length > 0 ? companyRef(chain[chain.length - 1]) : null,
    parent: majority ? companyRef(majority.parent) : null,
    offices: buildOffices(vat, identity, rea, rng),
    openapiNumber: identity.openapiNumber,
    vatGroup: { participation, leader: participation && chain.length === 0 && children.length > 0 },
    publicAdministration: pinned?.publicAdministration ?? false,
    splitPayment: pinned?.splitPayment ?? false,
    innovativeStartup: pinned?.innovativeStartup ?? (['6201', '6202'].includes(identity.activity.code) && identity.incorporationDate >= '2019-01-01' && rng.chance(0.4)),
    innovativeSme: rng.chance(0.02),
    trade: {
      importer,
      exporter,
      importShare: importer ? rng.int(5, 60) : 0,
      exportShare: exporter ? rng.int(5, 80) : 0,
      importCountries: importer ? rng.sample(COUNTRIES, rng.int(1, 3)).join(', ') : '',
      exportCountries: exporter ? rng.sample(COUNTRIES, rng.int(1, 4)).join(', ') : '',
    },
    tenders,
    artisan,
    soa: ['4120', '4321'].includes(identity.activity.code) && rng.chance(0.5),
    fixedSections: vat === OPENAPI_VAT ? OPENAPI_FIXED_SECTIONS : undefined,
  };
}

const profiles = new Map<string, CompanyProfile>();

/** The whole company of a registered VAT number (callers check `isRegistered` first). */
export function profileOf(vat: string): CompanyProfile {
  let p = profiles.get(vat);
  if (!p) {
    p = buildProfile(vat);
    if (profiles.size > 20_000) profiles.clear();
    profiles.set(vat, p);
  }
  return p;
}

/** Latest year with a filed balance sheet. */
export function lastFiled(p: CompanyProfile): YearFigures | undefined {
  return p.years.find((y) => y.turnover !== null);
}

/** Employees now (the newest year that states them). */
export function employeesNow(p: CompanyProfile): number {
  return p.years.find((y) => y.employees !== null)?.employees ?? 0;
}
