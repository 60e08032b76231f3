/**
 * Every 200 example of the vendor's company spec (subgraphs/company/fixtures/vendor-examples.json,
 * all 62 examples of company.openapi.json) goes through the whole stack (gateway → company
 * subgraph → upstream client → a stub answering the example, envelope included) and comes out of
 * the gateway with its values intact, or is listed in `NOT_REACHED` with the reason no operation
 * makes the layer receive it.
 *
 * One table, one row per example. A row holds the GraphQL operation that makes the layer buy exactly
 * that endpoint, the one upstream request it must cause, and the GraphQL `data` the example must
 * come out as, built from the example through the documented mapping (schema.graphql):
 *
 * - strings as given (surrounding blanks trimmed; an empty string and the vendor's `"NULL"` are "no value", null);
 * - dates as the `DateTime` the schema promises: ISO 8601 in UTC with milliseconds (`2013-07-19` →
 *   `2013-07-19T00:00:00.000Z`, Unix seconds → their instant, extra fraction digits cut to ms);
 * - `{code, description}` objects as `CodedValue`, null without a code;
 * - GPS coordinates in GeoJSON order (`[longitude, latitude]`);
 * - enums as their mapped values (register status ATTIVA → ACTIVE, dataset IT-advanced → IT_ADVANCED …),
 *   and the code as written in the `raw…` field beside each;
 * - sections the payload lacks as null.
 *
 * The example is read through a recorder: after each row, every value of the example must have been
 * read by the row's mapping, or be listed in the row's `notExposed` with the reason it is not
 * exposed, so a row cannot silently cover only part of its payload; a listed path that no unread
 * value of the example matches fails the row too (the lists hold only what is truly left out).
 * Values the payload repeats (a record's last balance sheet, France's `coCode`) are read by
 * checking they equal what is exposed.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeItalianVat } from '../../../contract/checksums.ts';
import {
  BALANCE_SHEET_SECTIONS,
  COMPANY_DATES_FIELDS,
  EMPLOYEE_STATISTICS_FIELDS,
  INCOME_STATEMENT_SECTIONS,
  OPERATING_RESULTS_FIELDS,
  RATIO_FIELDS,
  WEB_AND_SOCIAL_LINKS,
} from '../../../contract/company-payloads.ts';
import { json, startStub, type Stub } from '../../support/stub.ts';
import { startTestStack, type GraphQLResponse, type TestStack } from '../../support/stack.ts';

type Obj = Record<string, unknown>;

const EXAMPLES = JSON.parse(readFileSync(new URL('../../../subgraphs/company/fixtures/vendor-examples.json', import.meta.url), 'utf8')) as Record<string, unknown>;
const exampleKeys = Object.keys(EXAMPLES).filter((k) => !k.startsWith('_'));

function example(key: string): Obj {
  const body = EXAMPLES[key];
  if (!body || typeof body !== 'object') throw new Error(`no vendor example "${key}"`);
  return structuredClone(body) as Obj;
}

/** The first record of an example's `data` (untracked: for building requests, not expectations). */
function firstRecord(key: string): Obj {
  const data = example(key).data;
  return (Array.isArray(data) ? (data[0] as Obj) : (data as Obj)) ?? {};
}

// ---------------------------------------------------------------------------------------------
// Stub upstream: every example by its method and path template; `#variant` examples by the
// request's `dataEnrichment` (search) or the synchronous answer (composite tiers).
// ---------------------------------------------------------------------------------------------

interface Route {
  key: string;
  method: string;
  pattern: RegExp;
  variant: string | null;
}

const ROUTES: Route[] = exampleKeys.map((key) => {
  const m = /^(\w+) (\S+)(?: #(.+))?$/.exec(key);
  if (!m) throw new Error(`unexpected example key ${key}`);
  const [, method, template, variant] = m;
  const pattern = new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`);
  return { key, method, pattern, variant: variant ?? null };
});

/** The example a request is answered with, or null (404). */
function exampleFor(method: string, path: string, query: URLSearchParams): string | null {
  const candidates = ROUTES.filter((r) => r.method === method && r.pattern.test(path));
  if (candidates.length <= 1) return candidates[0]?.key ?? null;
  // IT-vatgroup: asked with a tax code or without; IT-ubo: a company without beneficial owners.
  const variant = (v: string): string | undefined => candidates.find((r) => r.variant === v)?.key;
  if (variant('with taxCode')) return (query.has('taxCode') ? variant('with taxCode') : variant('without taxCode')) ?? null;
  if (variant('presence')) return (path === `/IT-ubo/${NO_UBO_VAT}` ? variant('non-presence') : variant('presence')) ?? null;
  const enrichment = query.get('dataEnrichment');
  const byEnrichment = candidates.find((r) => r.variant !== null && (enrichment ? r.variant.toLowerCase() === enrichment.toLowerCase() : r.variant === 'NoEnrichment'));
  if (byEnrichment) return byEnrichment.key;
  return (candidates.find((r) => r.variant === 'synchronous') ?? candidates[0]).key;
}

interface Served {
  method: string;
  path: string;
  query: URLSearchParams;
  body: string;
  authorization: string | undefined;
  example: string | null;
}

// ---------------------------------------------------------------------------------------------
// Example recorder: which values of an example a row's mapping read.
// ---------------------------------------------------------------------------------------------

class Recorder {
  readonly read = new Set<string>();
  readonly whole = new Set<string>();
  private readonly proxies = new WeakMap<object, object>();
  private readonly info = new WeakMap<object, { target: object; path: string }>();

  wrap<T extends object>(target: T, path = ''): T {
    const known = this.proxies.get(target);
    if (known) return known as T;
    const proxy = new Proxy(target, {
      get: (t, key, receiver) => {
        const value: unknown = Reflect.get(t, key, receiver);
        if (typeof key !== 'string' || key === 'length' || !Object.prototype.hasOwnProperty.call(t, key)) return value;
        const child = Array.isArray(t) ? `${path}[${key}]` : path ? `${path}.${key}` : key;
        this.read.add(child);
        return value !== null && typeof value === 'object' ? this.wrap(value, child) : value;
      },
    });
    this.proxies.set(target, proxy);
    this.info.set(proxy, { target, path });
    return proxy;
  }

  /** The plain value behind a recorded one, all of which counts as read (JSON passed through). */
  raw(value: unknown): unknown {
    if (value === null || typeof value !== 'object') return value;
    const i = this.info.get(value);
    if (!i) return value;
    this.whole.add(i.path);
    return structuredClone(i.target);
  }

  /**
   * Leaves of `plain` that were not read and are not listed in `notExposed`, and the listed paths
   * that match no unread leaf (stale entries), as `listed but read or absent: <path>`.
   */
  unread(plain: unknown, notExposed: NotExposed): string[] {
    const out: string[] = [];
    const used = new Set<string>();
    const generic = (p: string): string => p.replace(/\[\d+\]/g, '[]');
    const listed = (p: string): boolean => {
      const g = generic(p);
      const hit = Object.keys(notExposed).find((n) => g === n || g.startsWith(`${n}.`) || g.startsWith(`${n}[`));
      if (hit !== undefined) used.add(hit);
      return hit !== undefined;
    };
    const covered = (p: string): boolean => {
      if (this.read.has(p)) return true;
      for (const w of this.whole) if (w === '' || p === w || p.startsWith(`${w}.`) || p.startsWith(`${w}[`)) return true;
      return false;
    };
    const walk = (v: unknown, p: string): void => {
      const children = v !== null && typeof v === 'object' ? Object.entries(v as Obj) : [];
      if (children.length === 0) {
        if (!covered(p) && !listed(p)) out.push(p);
        return;
      }
      for (const [k, c] of children) walk(c, Array.isArray(v) ? `${p}[${k}]` : p ? `${p}.${k}` : k);
    };
    walk(plain, '');
    for (const n of Object.keys(notExposed)) if (!used.has(n) && !ENVELOPE_KEYS.has(n)) out.push(`listed but read or absent: ${n}`);
    return out;
  }
}

/** Example values the schema does not carry: path (from the body; array indexes as `[]`) → why. */
type NotExposed = Readonly<Record<string, string>>;

/** Envelope fields: checked by the upstream client, not data. */
const ENVELOPE: NotExposed = {
  success: 'envelope: checked by the upstream client',
  message: 'envelope: checked by the upstream client',
  error: 'envelope: checked by the upstream client',
};
const ENVELOPE_KEYS = new Set(Object.keys(ENVELOPE));

// ---------------------------------------------------------------------------------------------
// The documented mapping, value by value
// ---------------------------------------------------------------------------------------------

const obj = (v: unknown): Obj | null => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : null);
const list = (v: unknown): unknown[] | null => (Array.isArray(v) ? (v as unknown[]) : null);
const records = (v: unknown): Obj[] => (list(v) ?? []).map((x) => obj(x) ?? {});

/** A string value: as given, blanks around it trimmed; empty means no value. Numbers as written. */
function text(v: unknown): string | null {
  if (typeof v === 'number') return String(v);
  if (typeof v !== 'string') return null;
  const t = v.trim();
  return t === '' || t === 'NULL' ? null : t;
}

const num = (v: unknown): number | null => (typeof v === 'number' ? v : null);

/** A value looked at without reading it (the recorder does not see it). */
const peek = (o: Obj, key: string): unknown => Object.getOwnPropertyDescriptor(o, key)?.value;

function bool(v: unknown): boolean | null {
  if (typeof v === 'boolean') return v;
  if (v === 1) return true;
  if (v === 0) return false;
  return null;
}

/** The `DateTime` form of a vendor date (date, local date-time taken as UTC, Unix seconds); null when it is no date. */
function dt(v: unknown): string | null {
  if (typeof v === 'number') return new Date(v * 1000).toISOString();
  if (typeof v !== 'string') return null;
  const m = /^(\d{4}-\d{2}-\d{2})(?:T(\d{2}:\d{2}:\d{2})(?:\.(\d+))?Z?)?$/.exec(v.trim());
  if (!m) return null;
  const [, date, time, fraction] = m;
  const iso = `${date}T${time ?? '00:00:00'}.${(fraction ?? '').slice(0, 3).padEnd(3, '0')}Z`;
  return Number.isNaN(Date.parse(iso)) ? null : iso;
}

function coded(v: unknown): Obj | null {
  const c = obj(v);
  const [code, description] = [text(c?.code), text(c?.description)];
  return c && code !== null ? { code, description } : null;
}

function geo(gps: unknown): Obj | null {
  const c = list(obj(gps)?.coordinates);
  return c && c.length >= 2 ? { latitude: num(c[1]), longitude: num(c[0]) } : null;
}

const lines = (v: unknown): Obj[] | null => (list(v) ? records(v).map((l) => ({ code: text(l.code), value: num(l.value) })) : null);

/** Register status of IT-start / IT-search: the RegistryStatus value and the ActivityStatus code it implies. */
const REGISTER: Readonly<Record<string, readonly [string, string | null]>> = {
  ATTIVA: ['ACTIVE', 'A'],
  CESSATA: ['CEASED', null],
  REGISTRATA: ['REGISTERED', 'I'],
  INATTIVA: ['INACTIVE', 'I'],
  SOSPESA: ['SUSPENDED', 'S'],
  IN_ISCRIZIONE: ['REGISTRATION_PENDING', 'I'],
};

// --- Italian companies: IT-start, IT-advanced (and IT-search items) ---------------------------

const IT_START_FIELDS = `vatCode taxCode id companyName lastUpdateDate recordCreationDate registryStatus rawRegistryStatus activityStatus rawActivityStatus
  sdiCode sdiCodeUpdateDate
  address { streetName toponym street streetNumber hamlet zipCode town townCode province { code } region { code description } coordinates { latitude longitude } }`;

function itStart(r: Obj): Obj {
  const ro = obj(obj(r.address)?.registeredOffice);
  const status = REGISTER[text(r.activityStatus) ?? ''];
  return {
    vatCode: text(r.vatCode),
    taxCode: text(r.taxCode),
    id: text(r.id),
    companyName: text(r.companyName),
    lastUpdateDate: dt(r.lastUpdateTimestamp),
    recordCreationDate: dt(r.creationTimestamp),
    registryStatus: status?.[0] ?? null,
    rawRegistryStatus: text(r.activityStatus),
    activityStatus: status?.[1] ?? null,
    // the business status is read from the register status: that is its raw value
    rawActivityStatus: text(r.activityStatus),
    sdiCode: text(r.sdiCode),
    sdiCodeUpdateDate: dt(r.sdiCodeTimestamp),
    address: ro
      ? {
          streetName: text(ro.streetName),
          toponym: text(ro.toponym),
          street: text(ro.street),
          streetNumber: text(ro.streetNumber),
          hamlet: text(ro.hamlet),
          zipCode: text(ro.zipCode),
          town: text(ro.town),
          townCode: text(ro.townCode),
          province: text(ro.province) === null ? null : { code: text(ro.province) },
          region: coded(ro.region),
          coordinates: geo(ro.gps),
        }
      : null,
  };
}

const IT_START_DATES = `dates { registrationDate }`;
const itStartDates = (r: Obj): Obj => ({ dates: { registrationDate: dt(r.registrationDate) } });

const IT_ADVANCED_FIELDS = `${IT_START_FIELDS}
  chamberOfCommerce reaCode pec ceased taxCodeCeased taxCodeCeasedUpdateDate
  detailedLegalForm { code description }
  atecoClassification { ateco { code description } ateco2022 { code description } ateco2025 { code description } }
  dates { registrationDate startDate endDate }
  vatGroup { participates isLeader registryOk }
  ecofin { balanceSheetDate turnoverYear turnover shareCapital netWorth }
  employees { count }
  balanceSheets { year balanceSheetDate employees turnover netWorth shareCapital totalStaffCost totalAssets averageGrossSalary }
  shareholders { percentShare owners { __typename taxCode ... on ShareholderPerson { name surname } ... on ShareholderCompany { companyName } } }`;

function itAdvanced(r: Obj): Obj {
  const ateco = obj(r.atecoClassification);
  const vat = obj(r.vatGroup) ?? obj(r.gruppo_iva);
  const sheets = obj(r.balanceSheets);
  const last = obj(sheets?.last);
  sameAsListed(last, records(sheets?.all));
  return {
    ...itStart(r),
    chamberOfCommerce: text(r.cciaa),
    reaCode: text(r.reaCode),
    pec: text(r.pec),
    detailedLegalForm: coded(r.detailedLegalForm),
    ceased: bool(r.cessata),
    // the vendor schema says boolean; a value that is none (the example's timestamp) is null, and
    // left unread (peeked at), so the row must list it as not exposed
    taxCodeCeased: typeof peek(r, 'taxCodeCeased') === 'boolean' ? r.taxCodeCeased : null,
    taxCodeCeasedUpdateDate: dt(r.taxCodeCeasedTimestamp),
    // The schema's `ateco` is ATECO 2007; IT-advanced's `ateco` is ATECO 2025 (vendor schema).
    atecoClassification: ateco ? { ateco: coded(ateco.ateco2007), ateco2022: coded(ateco.ateco2022), ateco2025: coded(ateco.ateco) } : null,
    dates: { registrationDate: dt(r.registrationDate), startDate: dt(r.startDate), endDate: dt(r.endDate) },
    vatGroup: vat ? { participates: bool(vat.vatGroupParticipation), isLeader: bool(vat.isVatGroupLeader), registryOk: bool(vat.registryOk) } : null,
    ecofin: last
      ? {
          balanceSheetDate: dt(last.balanceSheetDate),
          turnoverYear: num(last.year),
          turnover: num(last.turnover),
          shareCapital: num(last.shareCapital),
          netWorth: num(last.netWorth),
        }
      : null,
    employees: last ? { count: num(last.employees) } : null,
    balanceSheets: records(sheets?.all)
      .map((y) => ({
        year: num(y.year),
        balanceSheetDate: dt(y.balanceSheetDate),
        employees: num(y.employees),
        turnover: num(y.turnover),
        netWorth: num(y.netWorth),
        shareCapital: num(y.shareCapital),
        totalStaffCost: num(y.totalStaffCost),
        totalAssets: num(y.totalAssets),
        averageGrossSalary: num(y.avgGrossSalary),
      }))
      .sort((a, b) => Number(b.year) - Number(a.year)),
    shareholders: records(r.shareHolders).map((h) => ({ percentShare: num(h.percentShare), owners: [owner(h, false)] })),
  };
}

/**
 * A record's last balance sheet is one of its yearly ones: read it by checking it equals the year
 * it repeats (so none of its values is left out unnoticed).
 */
function sameAsListed(last: Obj | null, all: Obj[]): void {
  if (!last) return;
  const year = all.find((y) => y.year === last.year);
  expect(year, `the last balance sheet (${String(last.year)}) is one of the yearly ones`).toBeDefined();
  for (const key of Object.keys(last)) expect(last[key], `balanceSheets.last.${key}`).toEqual(year?.[key]);
}

/** What IT-advanced records hold that the schema does not carry (IT-start records: nothing). */
const IT_ADVANCED_NOT_EXPOSED: NotExposed = {
  taxCodeCeased: 'the example holds a timestamp where the vendor schema says boolean; `taxCodeCeased` is Boolean, so no value (its time is `taxCodeCeasedUpdateDate`)',
};
const inData = (paths: NotExposed, isList = true): NotExposed => Object.fromEntries(Object.entries(paths).map(([p, why]) => [`data${isList ? '[]' : ''}.${p}`, why]));

// --- Italian companies: composite tiers ----------------------------------------------------------

const COMPOSITE_ADDRESS = `address { streetName zipCode town province { code description } region { code description } country { code description } }`;
const COMPOSITE_IDENTITY = `vatCode taxCode companyName serviceNumber chamberOfCommerce reaCode officeType rawOfficeType lastUpdateDate numberOfBranches ${COMPOSITE_ADDRESS}`;

/**
 * The descriptions of the codes the schema carries as enums are fixed by the code (contract: the
 * description enum lists them in the order of the codes): the code's enum value says it all. They
 * are read by checking they are the description of their code.
 */
const ENUM_DESCRIPTION: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  officeType: { SSL: 'Administrative headquarter and registered office', SL: 'Registered office', UL: 'Local units', S: 'Administrative headquarter', D: 'Division' },
  activityStatus: {
    A: 'Enable',
    CF: 'Out of business (in a positive way)',
    CS: 'Out of business (in a negative way)',
    I: 'Inactive',
    IF: 'In closure (in a positive way)',
    IS: 'In closure (in a negative way)',
    S: 'Dormant',
  },
  gender: { M: 'Man', W: 'Woman', F: 'Woman' },
};
/** The code of an enum-coded `{code, description}`, its description checked against the code. */
function enumCode(kind: keyof typeof ENUM_DESCRIPTION, v: unknown): string | null {
  const c = obj(v);
  const code = text(c?.code);
  const description = text(c?.description);
  if (code !== null && description !== null) expect(description, `${kind} ${code}`).toBe(ENUM_DESCRIPTION[kind]?.[code]);
  return code;
}

function compositeAddress(v: unknown): Obj | null {
  const a = obj(v);
  return a
    ? { streetName: text(a.streetName), zipCode: text(a.zipCode), town: text(a.town), province: coded(a.province), region: coded(a.region), country: coded(a.country) }
    : null;
}

function details(v: unknown): Obj {
  const d = obj(v) ?? {};
  return {
    vatCode: text(d.vatCode),
    taxCode: text(d.taxCode),
    companyName: text(d.companyName),
    serviceNumber: text(d.openapiNumber) ?? text(d.serviceNumber),
    chamberOfCommerce: text(d.cciaa),
    reaCode: text(d.reaCode),
    officeType: enumCode('officeType', d.officeType),
    rawOfficeType: text(obj(d.officeType)?.code),
    lastUpdateDate: dt(d.lastUpdateDate),
  };
}

const compositeIdentity = (d: Obj): Obj => ({ ...details(d.companyDetails), numberOfBranches: num(obj(d.branches)?.numberOfBranches), address: compositeAddress(d.address) });

const statusCode = (v: unknown): string | null => enumCode('activityStatus', obj(v)?.activityStatus);
const status = (v: unknown): Obj => ({ activityStatus: statusCode(v), rawActivityStatus: text(obj(obj(v)?.activityStatus)?.code) });

const ECOFIN = `ecofin { balanceSheetDate turnoverRange { code description } turnoverYear turnover turnoverTrend shareCapital netWorth enterpriseSize { code description } }`;
function ecofin(v: unknown): Obj | null {
  const e = obj(v);
  return e
    ? {
        balanceSheetDate: dt(e.balanceSheetDate),
        turnoverRange: coded(e.turnoverRange),
        turnoverYear: num(e.turnoverYear),
        turnover: num(e.turnover),
        turnoverTrend: num(e.turnoverTrend),
        shareCapital: num(e.shareCapital),
        netWorth: num(e.netWorth),
        enterpriseSize: coded(e.enterpriseSize),
      }
    : null;
}

const EMPLOYEES = `employees { range { code description } count trend }`;
function employees(v: unknown): Obj | null {
  const e = obj(v);
  return e ? { range: coded(e.employeeRange), count: num(e.employee), trend: num(e.employeeTrend) } : null;
}

const STATISTICS = `employeeStatistics { ${EMPLOYEE_STATISTICS_FIELDS.join(' ')} }`;
function statistics(v: unknown): Obj | null {
  const s = obj(v);
  return s ? Object.fromEntries(EMPLOYEE_STATISTICS_FIELDS.map((f) => [f, num(s[f])])) : null;
}

const WEB = `webAndSocial { hasSocial ${WEB_AND_SOCIAL_LINKS.join(' ')} }`;
function web(v: unknown): Obj | null {
  const w = obj(v);
  return w ? { hasSocial: bool(w.hasSocial), ...Object.fromEntries(WEB_AND_SOCIAL_LINKS.map((f) => [f, text(w[f])])) } : null;
}

const CONTACTS = `email contacts { telephoneNumber fax }`;
const contacts = (d: Obj): Obj => {
  const c = obj(d.contacts);
  return { email: text(obj(d.mail)?.email), contacts: c ? { telephoneNumber: text(c.telephoneNumber), fax: text(c.fax) } : null };
};

const ATECO = `atecoClassification { ateco { code description } secondaryAteco ateco2022 { code description } secondaryAteco2022 }
  internationalClassification { primarySic { code description } secondarySic nace { code description } }`;
function classification(d: Obj): Obj {
  const a = obj(d.atecoClassification);
  const i = obj(d.internationalClassification);
  return {
    atecoClassification: a
      ? { ateco: coded(a.ateco), secondaryAteco: text(a.secondaryAteco), ateco2022: coded(a.ateco2022), secondaryAteco2022: text(a.secondaryAteco2022) }
      : null,
    internationalClassification: i ? { primarySic: coded(i.primarySic), secondarySic: text(i.secondarySic), nace: coded(i.nace) } : null,
  };
}

const INNOVATIVE = `isInnovativeStartUp isInnovativeSme`;
const innovative = (d: Obj): Obj => ({
  isInnovativeStartUp: bool(obj(d.innovativeSmeAndSu)?.isInnovativeStartUp),
  isInnovativeSme: bool(obj(d.innovativeSmeAndSu)?.isInnovativeSme),
});

const GROUP = `corporateGroup { belongsToGroup groupName holdingCompanyName holdingCountry { code description } hasForeignParentCompany
  nationalParentCompany { companyName streetName town zipCode province { code description } country { code description } } }`;
function group(v: unknown): Obj | null {
  const g = obj(v);
  if (!g) return null;
  const p = obj(g.nationalParentCompany);
  return {
    belongsToGroup: bool(g.belongsToGroup),
    groupName: text(g.groupName),
    holdingCompanyName: text(g.holdingCompanyName),
    holdingCountry: coded(g.holdingCountry),
    hasForeignParentCompany: bool(g.hasForeignParentCompany),
    nationalParentCompany: p
      ? { companyName: text(p.companyName), streetName: text(p.streetName), town: text(p.town), zipCode: text(p.zipCode), province: coded(p.province), country: coded(p.country) }
      : null,
  };
}

const OFFICES = `allOffices { companyName vatCode taxCode serviceNumber chamberOfCommerce reaCode officeType rawOfficeType lastUpdateDate activityStatus rawActivityStatus ${COMPOSITE_ADDRESS} }`;
const offices = (v: unknown): Obj[] | null =>
  list(v) ? records(v).map((o) => ({ ...details(o.companyDetails), ...status(o.companyStatus), address: compositeAddress(o.address) })) : null;

const MANAGERS = `managers { __typename taxCode isLegalRepresentative roles { role { code description } startDate }
  ... on ManagerPerson { name surname gender rawGender birthDate age birthTown } ... on ManagerCompany { companyName } }`;
const GENDER: Readonly<Record<string, string>> = { M: 'M', F: 'W', W: 'W' };
const isCompanyName = (r: Obj): boolean => text(r.companyName) !== null && text(r.name) === null && text(r.surname) === null;
function managers(v: unknown): Obj[] | null {
  if (!list(v)) return null;
  return records(v).map((m) => {
    const common = {
      taxCode: text(m.taxCode),
      isLegalRepresentative: bool(m.isLegalRepresentative),
      roles: records(m.roles).map((r) => ({ role: coded(r.role), startDate: dt(r.roleStartDate) })),
    };
    if (isCompanyName(m)) return { __typename: 'ManagerCompany', ...common, companyName: text(m.companyName) };
    return {
      __typename: 'ManagerPerson',
      ...common,
      name: text(m.name),
      surname: text(m.surname),
      gender: GENDER[enumCode('gender', m.gender) ?? ''] ?? null,
      rawGender: text(obj(m.gender)?.code),
      birthDate: dt(m.birthDate),
      age: num(m.age),
      birthTown: text(m.birthTown),
    };
  });
}

const SHAREHOLDERS = `shareholders { percentShare shareType { code description } owners { __typename taxCode sinceDate streetName zipCode town
  ... on ShareholderPerson { name surname } ... on ShareholderCompany { companyName serviceNumber } } }`;
/** An owner of a shareholding; `full` with the composite tiers' since date, address and service number. */
function owner(h: Obj, full: boolean): Obj {
  const company = isCompanyName(h);
  const common: Obj = { __typename: company ? 'ShareholderCompany' : 'ShareholderPerson', taxCode: text(h.taxCode) };
  if (full) Object.assign(common, { sinceDate: dt(h.sinceDate), streetName: text(h.streetName), zipCode: text(h.zipCode), town: text(h.town) });
  if (!company) return { ...common, name: text(h.name), surname: text(h.surname) };
  return full ? { ...common, companyName: text(h.companyName), serviceNumber: text(h.openapiNumber) ?? text(h.serviceNumber) } : { ...common, companyName: text(h.companyName) };
}
const shareholders = (v: unknown): Obj[] | null =>
  list(v)
    ? records(v).map((s) => ({ percentShare: num(s.percentShare), shareType: coded(s.shareType), owners: records(s.shareholdersInformation).map((h) => owner(h, true)) }))
    : null;

const ECONOMICS = `publicTenders { year applied won value }
  foreignTrade { isImporter importPercentShare importCountries isExporter exportPercentShare exportCountries }
  operatingResults { ${OPERATING_RESULTS_FIELDS.join(' ')} }
  rae { code description } sae { code description }`;
function economics(d: Obj): Obj {
  const ft = obj(d.foreignTrade);
  const or = obj(d.operatingResults);
  return {
    publicTenders: list(d.publicTenders) ? records(d.publicTenders).map((t) => ({ year: text(t.year), applied: num(t.applied), won: num(t.won), value: num(t.value) })) : null,
    foreignTrade: ft
      ? {
          isImporter: bool(ft.isImporter),
          importPercentShare: num(ft.importPercentShare),
          importCountries: text(ft.importCountries),
          isExporter: bool(ft.isExporter),
          exportPercentShare: num(ft.exportPercentShare),
          exportCountries: text(ft.exportCountries),
        }
      : null,
    operatingResults: or ? Object.fromEntries(OPERATING_RESULTS_FIELDS.map((f) => [f, num(or[f])])) : null,
    rae: coded(d.rae),
    sae: coded(d.sae),
  };
}

const sections = (d: Obj, names: readonly string[]): Obj => Object.fromEntries(names.map((s) => [s, lines(d[s])]));
const selectSections = (field: string, names: readonly string[]): string => `${field} { ${names.map((s) => `${s} { code value }`).join(' ')} }`;

const SELECT_RATIOS = `ratios { ${Object.entries(RATIO_FIELDS)
  .map(([s, fields]) => `${s} { ${fields.join(' ')} }`)
  .join(' ')} }`;
function ratios(d: Obj): Obj {
  return Object.fromEntries(
    Object.entries(RATIO_FIELDS).map(([s, fields]) => {
      const section = obj(d[s]);
      if (!section) return [s, null];
      // The vendor's keys, blanks around them trimmed (`"secondaryMarginStructure "` in the example);
      // only the listed fields are read, so a field the list lacks is left unread and fails the row.
      const keyOf = new Map(Object.keys(section).map((k) => [k.trim(), k]));
      return [s, Object.fromEntries(fields.map((f) => [f, num(section[keyOf.get(f) ?? f])]))];
    }),
  );
}

// --- Companies outside Italy -----------------------------------------------------------------------

const FOREIGN_ADDRESS = `{ streetName streetName2 streetName3 streetName4 toponym street streetNumber zipCode town country townCode region { code description }
  department { code description } coordinates { latitude longitude } nativeTown county nuts1 nuts2 nuts3 usMetropolitanArea usState
  locationAreas { type description } isBranchOffice }`;
/** The address fields only some records have, as a VAT registry check gives them: none. */
const NO_ADDRESS_DETAIL = Object.fromEntries(
  ['streetName2', 'streetName3', 'streetName4', 'toponym', 'nativeTown', 'county', 'nuts1', 'nuts2', 'nuts3', 'usMetropolitanArea', 'usState', 'locationAreas'].map((k) => [
    k,
    null,
  ]),
);
const FOREIGN_BASIC = `id level country companyName nativeCompanyName tradingName aliasName vatCode taxCode companyNumber leiCode siretCode sirenCode regonNumber
  establishmentNumber activityStatus registrationDate incorporationDate lastUpdateDate recordCreationDate companySize address ${FOREIGN_ADDRESS}
  identifiers { label number types } vatRegistration { valid formatValid }`;
/** Fields only the advanced enrichment of FR-search holds. */
const FOREIGN_ADVANCED_KEYS = ['contacts', 'classification', 'legalForm', 'balanceSheets', 'creditWorthy', 'offices'];
const FOREIGN_FIELDS = `${FOREIGN_BASIC} contacts { phone fax website } legalForm { code description } creditWorthy
  classification { nace { code description } naics { code description } sic { code description } naf { code description }
    secondaryNace { code description } secondaryNaics { code description } secondarySic { code description }
    codes { scheme isPrimary code description core section division group } national { types primary secondary } }
  balanceSheets { year balanceSheetDate employees turnover netWorth operatingRevenue equity totalAssets }
  offices { siretCode companyName activityStatus address ${FOREIGN_ADDRESS} }`;

function foreignAddress(v: unknown): Obj | null {
  const a = obj(v);
  const registered = obj(a?.registeredOffice);
  const office = registered ?? obj(a?.branchOffice);
  if (!office) return null;
  return {
    streetName: text(office.streetName),
    streetName2: text(office.streetName2),
    streetName3: text(office.streetName3),
    streetName4: text(office.streetName4),
    toponym: text(office.toponym),
    street: text(office.street),
    streetNumber: text(office.streetNumber),
    zipCode: text(office.zipCode),
    town: text(office.town),
    country: text(office.country),
    townCode: text(office.townCode),
    region: coded(office.region),
    department: coded(office.department),
    coordinates: geo(office.gps),
    nativeTown: text(office.nativeTown),
    county: text(office.county),
    nuts1: text(office.nuts1),
    nuts2: text(office.nuts2),
    nuts3: text(office.nuts3),
    usMetropolitanArea: text(office.usMetropolitanArea),
    usState: text(office.usState),
    locationAreas: list(office.locationArea) ? records(office.locationArea).map((a) => ({ type: text(a.type), description: text(a.description) })) : null,
    isBranchOffice: registered === null,
  };
}

/** Every code of a classification (`{code, description}` or WW-top's `{primary: [...], secondary: [...]}`) with its levels. */
function industryCodes(scheme: string, v: unknown): Obj[] {
  const c = obj(v);
  if (!c) return [];
  const ranked: Array<[boolean, Obj[]]> =
    'primary' in c || 'secondary' in c
      ? [
          [true, records(c.primary)],
          [false, records(c.secondary)],
        ]
      : [[true, [c]]];
  return ranked.flatMap(([isPrimary, items]) =>
    items
      .filter((i) => text(i.code) !== null)
      .map((i) => ({
        scheme,
        isPrimary,
        code: text(i.code),
        description: text(i.description),
        core: text(i.core),
        section: text(i.section),
        division: text(i.division),
        group: text(i.group),
      })),
  );
}

/** A classification: `{code, description}` (start/advanced) or `{primary: [...], secondary: [...]}` (top). */
function primaryCode(v: unknown): Obj | null {
  const c = obj(v);
  if (c && ('primary' in c || 'secondary' in c)) return coded(records(c.primary)[0]);
  return coded(c);
}
function secondaryCodes(v: unknown): Obj[] | null {
  const c = obj(v);
  return c && 'secondary' in c
    ? records(c.secondary)
        .map(coded)
        .filter((x): x is Obj => x !== null)
    : null;
}

function foreign(r: Obj, level: string, country: string): Obj {
  const address = foreignAddress(r.address);
  const ic = obj(r.internationalClassification);
  const nc = obj(r.nationalClassification);
  const sheets = obj(r.balanceSheets);
  if (list(sheets?.all)) sameAsListed(obj(sheets?.last), records(sheets?.all));
  // France repeats the VAT number as `coCode` (used when vatCode is missing)
  if (text(r.coCode) !== null && text(r.vatCode) !== null) expect(text(r.coCode)).toBe(text(r.vatCode));
  const yearly = list(sheets?.all) ? records(sheets?.all) : obj(sheets?.last) ? [obj(sheets?.last) as Obj] : [];
  const c = obj(r.contacts);
  const officeList = list(r.allOffices) ?? list(r.allOffice);
  return {
    id: text(r.id),
    level,
    country: address?.country ?? country,
    companyName: text(r.companyName),
    nativeCompanyName: text(r.nativeCompanyName),
    tradingName: text(r.tradingName),
    aliasName: text(r.aliasName),
    vatCode: text(r.vatCode) ?? text(r.coCode),
    taxCode: text(r.taxCode),
    companyNumber: text(r.companyNumber),
    leiCode: text(r.leiCode),
    siretCode: text(r.siretCode),
    sirenCode: text(r.sirenCode),
    regonNumber: text(r.regonNumber),
    establishmentNumber: text(r.establishmentNumber),
    activityStatus: text(r.activityStatus),
    registrationDate: dt(r.registrationDate),
    incorporationDate: dt(r.incorporationDate),
    lastUpdateDate: dt(r.lastUpdateTimestamp),
    recordCreationDate: dt(r.creationTimestamp),
    companySize: text(r.companySize),
    address,
    identifiers: list(r.markers) ? records(r.markers).map((m) => ({ label: text(m.label), number: text(m.number), types: (list(m.types) ?? []).map(text) })) : null,
    vatRegistration: null,
    contacts: c ? { phone: text(c.phone), fax: text(c.fax), website: text(c.website) } : null,
    legalForm: coded(r.detailedLegalForm),
    creditWorthy: bool(r.creditWorthy),
    classification:
      ic || nc
        ? {
            nace: primaryCode(ic?.nace),
            naics: primaryCode(ic?.naics),
            sic: primaryCode(ic?.sic),
            naf: coded(ic?.naf),
            secondaryNace: secondaryCodes(ic?.nace),
            secondaryNaics: secondaryCodes(ic?.naics),
            secondarySic: secondaryCodes(ic?.sic),
            codes: ic ? [...industryCodes('NACE', ic.nace), ...industryCodes('NAICS', ic.naics), ...industryCodes('SIC', ic.sic)] : null,
            national: nc ? { types: (list(nc.type) ?? []).map(text), primary: (list(nc.primary) ?? []).map(text), secondary: (list(nc.secondary) ?? []).map(text) } : null,
          }
        : null,
    balanceSheets: sheets
      ? yearly
          .map((y) => ({
            year: num(y.year),
            balanceSheetDate: dt(y.balanceSheetDate),
            employees: num(y.employees),
            turnover: num(y.turnover),
            netWorth: num(y.netWorth),
            operatingRevenue: num(y.operatingRevenue),
            equity: num(y.equity),
            totalAssets: num(y.totalAssets),
          }))
          .sort((a, b) => Number(b.year) - Number(a.year))
      : null,
    offices: officeList
      ? records(officeList).map((o) => ({
          siretCode: text(o.siretCode),
          companyName: text(o.companyName),
          activityStatus: text(o.activityStatus),
          address: foreignAddress(o.address),
        }))
      : null,
  };
}

/** A VAT number with its country prefix (added when the number lacks it). */
const prefixed = (country: string | null, vat: string | null): string | null => (vat === null || country === null || vat.startsWith(country) ? vat : `${country}${vat}`);

const omit = (o: Obj, keys: readonly string[]): Obj => Object.fromEntries(Object.entries(o).filter(([k]) => !keys.includes(k)));

// --- Monitors -----------------------------------------------------------------------------------------

const MONITOR_FIELDS = `id code dataset rawDataset monitoredFields companyId vatCode taxCode companyName createdOn checkedOn nextOn expiresOn autorenew updatedFields latestDataset previousDataset`;
function monitor(m: Obj, rec: Recorder): Obj {
  const dataset = text(m.dataset);
  return {
    id: text(m.id),
    code: text(m.code),
    dataset: dataset === null ? null : dataset.toUpperCase().replace('-', '_'),
    rawDataset: dataset,
    monitoredFields: list(m.monitoredFields) ? (list(m.monitoredFields) ?? []).map(text) : null,
    companyId: text(m.companyId),
    vatCode: text(m.vatCode),
    taxCode: text(m.taxCode),
    companyName: text(m.companyName),
    createdOn: dt(m.createdOn),
    checkedOn: dt(m.checkedOn),
    nextOn: dt(m.nextOn),
    expiresOn: dt(m.expiresOn),
    autorenew: bool(m.autorenew),
    updatedFields: rec.raw(m.updatedFields) ?? null,
    latestDataset: rec.raw(m.latestDataset) ?? null,
    previousDataset: rec.raw(m.previousDataset) ?? null,
  };
}
/** The monitor's callback settings and owner account: not part of CompanyMonitor. */
const MONITOR_NOT_EXPOSED: NotExposed = {
  'data.callback': 'the callback settings the monitor was created with: the layer’s own (signed) callback, not company data',
  'data.owner': 'the upstream account (e-mail) that owns the monitor: never exposed',
};

// ---------------------------------------------------------------------------------------------
// The table
// ---------------------------------------------------------------------------------------------

interface UpstreamRequest {
  method: 'GET' | 'POST' | 'DELETE';
  path: string;
  /** Query parameters to check; null = must be absent. */
  query?: Record<string, string | null>;
}

interface Row {
  /** The endpoint, as the vendor spec names it. */
  endpoint: string;
  /** Key of the example in vendor-examples.json. */
  example: string;
  /** The one upstream request the operation must make. */
  request: UpstreamRequest;
  operation: string;
  variables?: Obj;
  /** The GraphQL `data` the example must come out as, from the (recorded) example body. */
  expected(body: Obj, rec: Recorder): Obj;
  /** Example values the schema has no field for (paths from the body; array indexes as `[]`). */
  notExposed?: NotExposed;
  /** Extra checks of the upstream request body. */
  requestBody?(body: string): void;
  /** Several upstream requests (instead of the one `request`), in order. */
  flow?: readonly string[];
  /** Further examples the flow served, each read through the recorder like the row's own. */
  alsoServed?: ReadonlyArray<{ example: string; read(body: Obj): void; notExposed?: NotExposed }>;
}

const VAT = '12485671007';
/** A company whose slow datasets the stub prepares asynchronously (302 → IT-check_id). */
const SLOW_VAT = makeItalianVat('0211111111');
/** The request id of the vendor's PENDING example. */
const PENDING_ID = '66a8ed9b82cf2ae627012068';
const itRecords = (body: Obj): Obj[] => records(body.data);
const itSingle = (body: Obj): Obj => itRecords(body)[0] ?? {};
const compositeData = (body: Obj): Obj => obj(body.data) ?? {};

const IT_SEARCH_PAGE = `count total cost skip limit dryRun`;
const searchPage = (items: Obj[]): Obj => ({ count: items.length, total: null, cost: null, skip: 0, limit: 10, dryRun: false, items });

/** Examples no GraphQL operation makes the layer receive, and why. */
const NOT_REACHED: Readonly<Record<string, string>> = {
  ...Object.fromEntries(
    ['IT-aml', 'IT-marketing', 'IT-stakeholders', 'IT-full'].map((tier) => [
      `POST /${tier}/{vatCode_or_taxCode}`,
      'the PENDING receipt {state, id} of the asynchronous POST variant: the same body as the IT-check_id PENDING example (read in the 302 row); the POST + callback purchase has its own tests (slow-purchase)',
    ]),
  ),
  ...Object.fromEntries(
    ['Address', 'Pec', 'Shareholders', 'Name'].map((e) => [
      `GET /IT-search #${e}`,
      `searchCompanies asks IT-search for the start or advanced enrichment only (their records hold every field of the ${e.toLowerCase()} enrichment)`,
    ]),
  ),
  'GET /IT-shareholders/{vatCode_taxCode_or_id}': 'not bought: it lists only holders above 10 %, less than IT-advanced’s shareHolders, which the planner buys instead',
};

/** A company the stub answers IT-ubo's "no beneficial owner" example for. */
const NO_UBO_VAT = makeItalianVat('0222222222');

/** One register an IPA record cites, from its flat `<prefix>…` fields; null when all are empty. */
function paListing(r: Obj, prefix: string): Obj | null {
  const code = text(r[`${prefix}TypeCode`]);
  const description = text(r[`${prefix}TypeDescription`]);
  const out: Obj = {
    entityCode: text(r[`${prefix}EntityCode`]),
    typeId: text(r[`${prefix}TypeId`]),
    type: code === null ? null : { code, description },
    inclusionDate: dt(r[`${prefix}InclusionDate`]),
    exclusionDate: dt(r[`${prefix}ExclusionDate`]),
  };
  return Object.values(out).some((v) => v !== null) ? out : null;
}

const PA_LISTING = `entityCode typeId type { code description } inclusionDate exclusionDate`;
const UBO_FIELDS = `name surname taxCode birthDate birthTown birthProvince { code description }
  address { toponym street streetNumber zipCode town province { code description } region { code description } }
  roles { code description type }`;

function beneficialOwner(o: Obj): Obj {
  const a = obj(o.address);
  return {
    name: text(o.name),
    surname: text(o.surname),
    taxCode: text(o.taxCode),
    birthDate: dt(o.birthDate),
    birthTown: text(o.birthTown),
    birthProvince: coded(o.birthProvince),
    address: a
      ? {
          toponym: text(a.toponym),
          street: text(a.street),
          streetNumber: text(a.streetNumber),
          zipCode: text(a.zipCode),
          town: text(a.town),
          province: coded(a.province),
          region: coded(a.region),
        }
      : null,
    roles: records(o.roles).map((r) => ({ code: text(r.code), description: text(r.description), type: text(r.type) })),
  };
}

/** Managers, shareholdings and group: the ownership sections of IT-stakeholders and IT-aml. */
const OWNERSHIP = `${MANAGERS} ${SHAREHOLDERS} ${GROUP}`;
const ownership = (d: Obj): Obj => ({ managers: managers(d.managers), shareholders: shareholders(d.shareholders), corporateGroup: group(d.corporateGroups) });

/** IT-ubo bought for `vat`, answered with `example`. */
function uboRow(endpoint: string, example: string, vat: string): Row {
  return {
    endpoint,
    example,
    request: { method: 'GET', path: `/IT-ubo/${vat}` },
    operation: `query($v: String!) { company(vatCode: $v) { beneficialOwners { ${UBO_FIELDS} } } }`,
    variables: { v: vat },
    expected: (b) => ({ company: { beneficialOwners: itRecords(b).map(beneficialOwner) } }),
  };
}

/** The sections of the Marketing shape beyond the identity (IT-full holds them too). */
const MARKETING = `activityStatus rawActivityStatus pec ${CONTACTS} ${WEB} ${ATECO} ${ECOFIN} ${EMPLOYEES} ${STATISTICS} ${INNOVATIVE} ${GROUP} ${OFFICES}`;
const marketing = (d: Obj): Obj => ({
  ...status(d.companyStatus),
  pec: text(d.pec),
  ...contacts(d),
  webAndSocial: web(d.webAndSocial),
  ...classification(d),
  ecofin: ecofin(d.ecofin),
  employees: employees(d.employees),
  employeeStatistics: statistics(d.employeesStatistic),
  ...innovative(d),
  corporateGroup: group(d.corporateGroups),
  allOffices: offices(d.allOffices),
});

/** IT-marketing (sections of the Marketing shape) bought for `vat`, answered with `example`. */
function marketingRow(endpoint: string, example: string, vat: string): Row {
  return {
    endpoint,
    example,
    request: { method: 'GET', path: `/IT-marketing/${vat}` },
    operation: `query($v: String!) { company(vatCode: $v) { ${COMPOSITE_IDENTITY} ${MARKETING} } }`,
    variables: { v: vat },
    expected: (b) => {
      const d = compositeData(b);
      return { company: { ...compositeIdentity(d), ...marketing(d) } };
    },
  };
}

const ROWS: Row[] = [
  // Single-purpose endpoints the planner weighs like tiers (the cheapest source of their fields). They
  // come first: an endpoint already bought for the company is free, so later rows would reuse it.
  {
    endpoint: 'IT-name',
    example: 'GET /IT-name/{vatCode_taxCode_or_id}',
    request: { method: 'GET', path: `/IT-name/${VAT}` },
    operation: `query($v: String!) { company(vatCode: $v) { vatCode taxCode id companyName lastUpdateDate } }`,
    variables: { v: VAT },
    expected: (b) => {
      const r = itSingle(b);
      return { company: { vatCode: text(r.vatCode), taxCode: text(r.taxCode), id: text(r.id), companyName: text(r.companyName), lastUpdateDate: dt(r.lastUpdateTimestamp) } };
    },
    notExposed: inData({
      'address.registeredOffice.town': 'IT-name gives the town alone: the address (and its town) is bought from IT-address or IT-start, which hold it whole',
      creationTimestamp: '`recordCreationDate` is bought from IT-start or IT-advanced; IT-name is bought for the name and keys',
    }),
  },
  {
    endpoint: 'IT-address',
    example: 'GET /IT-address/{vatCode_taxCode_or_id}',
    request: { method: 'GET', path: `/IT-address/${VAT}` },
    operation: `query($v: String!) { company(vatCode: $v) { vatCode taxCode id companyName lastUpdateDate
      address { streetName toponym street streetNumber hamlet zipCode town townCode province { code } region { code description } coordinates { latitude longitude } } } }`,
    variables: { v: VAT },
    expected: (b) => {
      const r = itSingle(b);
      const picked = Object.fromEntries(['taxCode', 'companyName', 'vatCode', 'address', 'lastUpdateTimestamp', 'id'].map((k) => [k, r[k]]));
      const { vatCode, taxCode, id, companyName, lastUpdateDate, address } = itStart(picked);
      return { company: { vatCode, taxCode, id, companyName, lastUpdateDate, address } };
    },
    notExposed: inData({ creationTimestamp: '`recordCreationDate` is bought from IT-start or IT-advanced; IT-address is bought for the address' }),
  },
  {
    endpoint: 'IT-sdicode',
    example: 'GET /IT-sdicode/{vatCode_taxCode_or_id}',
    request: { method: 'GET', path: `/IT-sdicode/${VAT}` },
    operation: `query($v: String!) { company(vatCode: $v) { sdiCode } }`,
    variables: { v: VAT },
    expected: (b) => ({ company: { sdiCode: text(itSingle(b).sdiCode) } }),
    notExposed: inData({ id: 'the Openapi id is bought from IT-start, IT-advanced or IT-name; IT-sdicode is bought for the SDI code' }),
  },
  {
    endpoint: 'IT-pec',
    example: 'GET /IT-pec/{vatCode_taxCode_or_id}',
    request: { method: 'GET', path: `/IT-pec/${VAT}` },
    operation: `query($v: String!) { company(vatCode: $v) { pec pecHistory { pec recordedAt } } }`,
    variables: { v: VAT },
    expected: (b) => {
      const r = itSingle(b);
      return { company: { pec: text(r.pec), pecHistory: records(r.history).map((h) => ({ pec: text(h.pec), recordedAt: dt(h.timestamp) })) } };
    },
  },
  {
    endpoint: 'IT-vatgroup',
    example: 'GET /IT-vatgroup/{vatCode_or_id} #without taxCode',
    request: { method: 'GET', path: `/IT-vatgroup/${VAT}` },
    operation: `query($v: String!) { company(vatCode: $v) { vatGroup { participates isLeader registryOk } } }`,
    variables: { v: VAT },
    expected: (b) => {
      const r = itSingle(b);
      return { company: { vatGroup: { participates: bool(r.vatGroupParticipation), isLeader: bool(r.isVatGroupLeader), registryOk: bool(r.registryOk) } } };
    },
  },
  {
    endpoint: 'IT-closed',
    example: 'GET /IT-closed/{vatCode_taxCode_or_id}',
    request: { method: 'GET', path: `/IT-closed/${VAT}` },
    operation: `query($v: String!) { company(vatCode: $v) { vatCode isCeased } }`,
    variables: { v: VAT },
    expected: (b) => ({ company: { vatCode: VAT, isCeased: bool(itSingle(b).taxCodeCeased) } }),
    notExposed: inData({ id: 'the Openapi id is bought from IT-start, IT-advanced or IT-name; IT-closed is bought for the live ceased flag' }),
  },
  {
    endpoint: 'IT-vatgroup (with taxCode)',
    example: 'GET /IT-vatgroup/{vatCode_or_id} #with taxCode',
    request: { method: 'GET', path: `/IT-vatgroup/${VAT}`, query: { taxCode: 'RSSMRA80A01H501U' } },
    operation: `query($v: String!, $t: String!) { company(vatCode: $v) {
      vatGroupTaxCodeCheck(taxCode: $t) { participates isLeader registryOk taxCodeConsistent taxCodeEntrant taxCodePresent members } } }`,
    variables: { v: VAT, t: 'RSSMRA80A01H501U' },
    expected: (b) => {
      const r = itSingle(b);
      return {
        company: {
          vatGroupTaxCodeCheck: {
            participates: bool(r.vatGroupParticipation),
            isLeader: bool(r.isVatGroupLeader),
            registryOk: bool(r.registryOk),
            taxCodeConsistent: bool(r.taxCodeVatCodeConsistent),
            taxCodeEntrant: bool(r.taxCodeEntrant),
            taxCodePresent: bool(r.taxCodePresent),
            members: list(r.vatGroupMembers),
          },
        },
      };
    },
  },
  uboRow('IT-ubo (owners found)', 'GET /IT-ubo/{vatCode_taxCode_or_id} #presence', VAT),
  uboRow('IT-ubo (none found)', 'GET /IT-ubo/{vatCode_taxCode_or_id} #non-presence', NO_UBO_VAT),
  {
    endpoint: 'IT-pa',
    example: 'GET /IT-pa/{taxCode_vatCode}',
    request: { method: 'GET', path: `/IT-pa/${VAT}` },
    operation: `query($v: String!) { company(vatCode: $v) { publicAdministration {
      paId companyName taxCode vatCode establishmentDate terminationDate phone fax url managerName managerSurname managerTitle
      ipaEntityCode ipaCategory { code description } ipaType { code description } ipaInclusionDate ipaCategoryId ipaExclusionDate
      isPublicAdministration participationStatus
      siope { ${PA_LISTING} } miur { ${PA_LISTING} } treasury { ${PA_LISTING} } nationalHealthServiceCode istatS13 { ${PA_LISTING} } harmonisedAccounting { ${PA_LISTING} }
      ateco { code description } detailedLegalForm { code description }
      address { streetName toponym street streetNumber hamlet zipCode town townCode townIstatCode townNumber province { code description } provinceNumber region { code description } area { code description } }
      invoicingOffices { administrationCode officeCode description sdiCode streetName zipCode town province region taxCode invoicingStartDate taxCodeVerificationDate lastUpdateDate }
      lastUpdateDate } } }`,
    variables: { v: VAT },
    expected: (b) => {
      const r = itSingle(b);
      const ro = obj(obj(r.address)?.registeredOffice) ?? {};
      const town = obj(ro.town) ?? {};
      const province = obj(ro.province) ?? {};
      const flat = (prefix: string): Obj | null => {
        const code = text(r[`${prefix}Code`]);
        const description = text(r[`${prefix}Description`]);
        return code === null ? null : { code, description };
      };
      return {
        company: {
          publicAdministration: {
            paId: text(r.paId),
            companyName: text(r.companyName),
            taxCode: text(r.taxCode),
            vatCode: text(r.vatCode),
            establishmentDate: dt(r.establishmentDate),
            terminationDate: dt(r.terminationDate),
            phone: text(r.phone),
            fax: text(r.fax),
            url: text(r.url),
            managerName: text(r.managerName),
            managerSurname: text(r.managerSurname),
            managerTitle: text(r.managerTitle),
            ipaEntityCode: text(r.ipaEntityCode),
            ipaCategory: flat('ipaCategory'),
            ipaType: flat('ipaType'),
            ipaInclusionDate: dt(r.ipaInclusionDate),
            ipaCategoryId: text(r.ipaCategoryId),
            ipaExclusionDate: dt(r.ipaExclusionDate),
            isPublicAdministration: bool(r.pa),
            participationStatus: text(r.participationStatus),
            siope: paListing(r, 'siope'),
            miur: paListing(r, 'miur'),
            treasury: paListing(r, 'dt'),
            nationalHealthServiceCode: text(r.ssnEntityCode),
            istatS13: paListing(r, 's13Istat'),
            harmonisedAccounting: paListing(r, 'dlgs1182011'),
            ateco: coded(obj(r.atecoClassification)?.ateco),
            detailedLegalForm: coded(r.detailedLegalForm),
            address: {
              streetName: text(ro.streetName),
              toponym: text(ro.toponym),
              street: text(ro.street),
              streetNumber: text(ro.streetNumber),
              hamlet: text(ro.hamlet),
              zipCode: text(ro.zipCode),
              town: text(town.description),
              townCode: text(town.code),
              townIstatCode: text(town.istat),
              townNumber: text(town.number),
              province: coded(ro.province),
              provinceNumber: text(province.number),
              region: coded(ro.region),
              area: coded(ro.area),
            },
            invoicingOffices: records(r.paInvoicingOffice).map((o) => ({
              administrationCode: text(o.administrationCode),
              officeCode: text(o.ouCode),
              description: text(o.ouDescription),
              sdiCode: text(o.sdiCode),
              streetName: text(o.streetName),
              zipCode: text(o.zipCode),
              town: text(o.town),
              province: text(o.province),
              region: text(o.region),
              taxCode: text(o.taxCode),
              invoicingStartDate: dt(o.sfeStartDate),
              taxCodeVerificationDate: dt(o.taxCodeVerificationDate),
              lastUpdateDate: dt(o.lastUpdateTimestamp),
            })),
            lastUpdateDate: dt(r.lastUpdateTimestamp),
          },
        },
      };
    },
  },
  {
    endpoint: 'IT-splitpayment',
    example: 'GET /IT-splitpayment/{taxCode_vatCode}',
    request: { method: 'GET', path: `/IT-splitpayment/${VAT}` },
    operation: `query($v: String!) { company(vatCode: $v) { splitPayment { companyName taxCode companyType startDate lastUpdateDate } } }`,
    variables: { v: VAT },
    expected: (b) => {
      const r = itSingle(b);
      return {
        company: {
          splitPayment: {
            companyName: text(r.companyName),
            taxCode: text(r.taxCode),
            companyType: text(r.companyType),
            startDate: dt(r.startingDateTimestamp),
            lastUpdateDate: dt(r.lastUpdateTimestamp),
          },
        },
      };
    },
  },
  {
    endpoint: 'IT-start',
    example: 'GET /IT-start/{vatCode_taxCode_or_id}',
    request: { method: 'GET', path: `/IT-start/${VAT}` },
    operation: `query($v: String!) { company(vatCode: $v) { ${IT_START_FIELDS} ${IT_START_DATES} } }`,
    variables: { v: VAT },
    expected: (b) => ({ company: { ...itStart(itSingle(b)), ...itStartDates(itSingle(b)) } }),
  },
  {
    endpoint: 'IT-advanced',
    example: 'GET /IT-advanced/{vatCode_taxCode_or_id}',
    request: { method: 'GET', path: `/IT-advanced/${VAT}` },
    operation: `query($v: String!) { company(vatCode: $v) { ${IT_ADVANCED_FIELDS} } }`,
    variables: { v: VAT },
    expected: (b) => ({ company: itAdvanced(itSingle(b)) }),
    notExposed: inData(IT_ADVANCED_NOT_EXPOSED),
  },
  marketingRow('IT-marketing', 'GET /IT-marketing/{vatCode_or_taxCode} #synchronous', VAT),
  // A slow dataset the upstream is still preparing: 302 → IT-check_id, PENDING, then the dataset.
  {
    ...marketingRow('IT-marketing (302 → IT-check_id)', 'GET /IT-check_id/{id} #DONE', SLOW_VAT),
    flow: [`GET /IT-marketing/${SLOW_VAT}`, `GET /IT-check_id/${PENDING_ID}`, `GET /IT-check_id/${PENDING_ID}`],
    alsoServed: [
      {
        // the body of the 302 and of the first poll: the layer polls the id it names while it is PENDING
        example: 'GET /IT-check_id/{id} #PENDING',
        read: (b) => {
          expect(text(obj(b.data)?.state)).toBe('PENDING');
          expect(text(obj(b.data)?.id)).toBe(PENDING_ID);
        },
      },
    ],
  },
  {
    endpoint: 'IT-stakeholders',
    example: 'GET /IT-stakeholders/{vatCode_or_taxCode} #synchronous',
    request: { method: 'GET', path: `/IT-stakeholders/${VAT}` },
    operation: `query($v: String!) { company(vatCode: $v) { ${COMPOSITE_IDENTITY} ${OWNERSHIP} ${EMPLOYEES} ${STATISTICS} } }`,
    variables: { v: VAT },
    expected: (b) => {
      const d = compositeData(b);
      return { company: { ...compositeIdentity(d), ...ownership(d), employees: employees(d.employees), employeeStatistics: statistics(d.employeesStatistic) } };
    },
  },
  {
    endpoint: 'IT-aml',
    example: 'GET /IT-aml/{vatCode_or_taxCode} #synchronous',
    request: { method: 'GET', path: `/IT-aml/${VAT}` },
    operation: `query($v: String!) { company(vatCode: $v) {
      ${COMPOSITE_IDENTITY} ${OWNERSHIP} ${ECONOMICS} ${ECOFIN} ${selectSections('balanceSheet', ['debts'])} } }`,
    variables: { v: VAT },
    expected: (b) => {
      const d = compositeData(b);
      return {
        company: {
          ...compositeIdentity(d),
          ...ownership(d),
          ...economics(d),
          ecofin: ecofin(d.ecofin),
          balanceSheet: sections(d, ['debts']),
        },
      };
    },
  },
  {
    endpoint: 'IT-full',
    example: 'GET /IT-full/{vatCode_or_taxCode} #synchronous',
    request: { method: 'GET', path: `/IT-full/${VAT}` },
    operation: `query($v: String!) { company(vatCode: $v) {
      ${COMPOSITE_IDENTITY} ${MARKETING} legalForm rawLegalForm legalFormDescription detailedLegalForm { code description }
      dates { ${COMPANY_DATES_FIELDS.join(' ')} } isMarketable
      artisanRegistry { isRegistered registrationDate registrationNumber } hasSoaCertification
      ${MANAGERS} ${SHAREHOLDERS} ${ECONOMICS}
      ${selectSections('balanceSheet', BALANCE_SHEET_SECTIONS)} ${selectSections('incomeStatement', INCOME_STATEMENT_SECTIONS)} ${SELECT_RATIOS} } }`,
    variables: { v: VAT },
    expected: (b) => {
      const d = compositeData(b);
      const lf = obj(d.legalForm);
      const dates = obj(d.companyDates);
      const artisan = obj(d.artisanBusinessRegistry);
      return {
        company: {
          ...compositeIdentity(d),
          ...marketing(d),
          legalForm: text(obj(lf?.legalForm)?.code),
          rawLegalForm: text(obj(lf?.legalForm)?.code),
          legalFormDescription: text(obj(lf?.legalForm)?.description),
          detailedLegalForm: coded(lf?.detailedLegalForm),
          dates: dates ? Object.fromEntries(COMPANY_DATES_FIELDS.map((f) => [f, dt(dates[f])])) : null,
          isMarketable: bool(obj(d.marketable)?.isMarketable),
          artisanRegistry: artisan
            ? {
                isRegistered: bool(artisan.belongsToArtisanBusinessRegistry),
                registrationDate: dt(obj(artisan.artisanBusinessRegistry)?.registrationDate),
                registrationNumber: text(obj(artisan.artisanBusinessRegistry)?.registrationNumber),
              }
            : null,
          hasSoaCertification: bool(obj(d.soaCertification)?.hasSoaCertification),
          managers: managers(d.managers),
          shareholders: shareholders(d.shareholders),
          ...economics(d),
          balanceSheet: sections(d, BALANCE_SHEET_SECTIONS),
          incomeStatement: sections(d, INCOME_STATEMENT_SECTIONS),
          ratios: ratios(d),
        },
      };
    },
  },
  {
    endpoint: 'IT-search (no enrichment)',
    example: 'GET /IT-search #NoEnrichment',
    request: { method: 'GET', path: '/IT-search', query: { companyName: 'OPENAPI', dataEnrichment: null } },
    operation: `query($f: CompanySearchFilter!) { searchCompanies(filter: $f, limit: 10) { ${IT_SEARCH_PAGE} items { id } } }`,
    variables: { f: { companyName: 'OPENAPI' } },
    expected: (b) => ({ searchCompanies: searchPage(itRecords(b).map((r) => ({ id: text(r.id) }))) }),
  },
  {
    endpoint: 'IT-search (dataEnrichment=start)',
    example: 'GET /IT-search #Start',
    request: { method: 'GET', path: '/IT-search', query: { companyName: 'OPENAPI', dataEnrichment: 'start' } },
    operation: `query($f: CompanySearchFilter!) { searchCompanies(filter: $f, limit: 10) { ${IT_SEARCH_PAGE} items { ${IT_START_FIELDS} ${IT_START_DATES} } } }`,
    variables: { f: { companyName: 'OPENAPI' } },
    expected: (b) => ({ searchCompanies: searchPage(itRecords(b).map((r) => ({ ...itStart(r), ...itStartDates(r) }))) }),
  },
  {
    endpoint: 'IT-search (dataEnrichment=advanced)',
    example: 'GET /IT-search #Advanced',
    request: { method: 'GET', path: '/IT-search', query: { companyName: 'OPENAPI', dataEnrichment: 'advanced' } },
    operation: `query($f: CompanySearchFilter!) { searchCompanies(filter: $f, limit: 10) { ${IT_SEARCH_PAGE} items { ${IT_ADVANCED_FIELDS} } } }`,
    variables: { f: { companyName: 'OPENAPI' } },
    expected: (b) => ({ searchCompanies: searchPage(itRecords(b).map(itAdvanced)) }),
    notExposed: inData(IT_ADVANCED_NOT_EXPOSED),
  },
  {
    endpoint: 'IT-legalforms',
    example: 'GET /IT-legalforms',
    request: { method: 'GET', path: '/IT-legalforms' },
    operation: `{ legalForms { code description } }`,
    expected: (b) => ({ legalForms: records(b.data).map((f) => ({ code: text(f.code), description: text(f.description) })) }),
  },
  {
    endpoint: 'IT-legalforms/{code}',
    example: 'GET /IT-legalforms/{code}',
    request: { method: 'GET', path: '/IT-legalforms/SP' },
    operation: `{ legalForms(code: "SP") { code description } }`,
    expected: (b) => ({ legalForms: records(b.data).map((f) => ({ code: text(f.code), description: text(f.description) })) }),
  },
  {
    endpoint: 'EU-start',
    example: 'GET /EU-start/{vatCode_taxCode}',
    request: { method: 'GET', path: '/EU-start/IE6388047V' },
    operation: `query($c: String!, $id: String!) { foreignCompany(country: $c, id: $id, level: VAT_REGISTRY) { ${FOREIGN_FIELDS} } }`,
    variables: { c: 'IE', id: '6388047V' },
    expected: (b) => {
      const r = itSingle(b);
      const country = text(r.countryCode);
      const none = Object.fromEntries(Object.keys(foreign({}, 'VAT_REGISTRY', '')).map((k) => [k, null]));
      return {
        foreignCompany: {
          ...none,
          level: 'VAT_REGISTRY',
          country,
          companyName: text(r.companyName),
          // ForeignCompany.vatCode is documented "with country prefix"; VIES gives the number without it
          vatCode: prefixed(country, text(r.vatCode)),
          // VIES gives the address as one line
          address: {
            streetName: text(r.companyAddress),
            street: null,
            streetNumber: null,
            zipCode: null,
            town: null,
            country,
            townCode: null,
            region: null,
            department: null,
            coordinates: null,
            ...NO_ADDRESS_DETAIL,
            isBranchOffice: false,
          },
          vatRegistration: { valid: bool(r.valid), formatValid: bool(r.formatValid) },
        },
      };
    },
  },
  // The countries with their own endpoints: <CC>-start and <CC>-advanced.
  ...(['FR', 'DE', 'ES', 'PT', 'GB', 'BE', 'AT', 'CH', 'PL'] as const).flatMap((cc) =>
    (['start', 'advanced'] as const).map((tier): Row => {
      const example = exampleKeys.find((k) => k.startsWith(`GET /${cc}-${tier}/`));
      if (!example) throw new Error(`no ${cc}-${tier} example`);
      const rec = firstRecord(example);
      const id = String(rec.siretCode ?? rec.vatCode);
      const level = tier === 'start' ? 'START' : 'ADVANCED';
      return {
        endpoint: `${cc}-${tier}`,
        example,
        request: { method: 'GET', path: `/${cc}-${tier}/${encodeURIComponent(id)}` },
        operation: `query($c: String!, $id: String!, $l: ForeignCompanyLevel) { foreignCompany(country: $c, id: $id, level: $l) { ${FOREIGN_FIELDS} } }`,
        variables: { c: cc, id, l: level },
        expected: (b) => ({ foreignCompany: foreign(itSingle(b), level, cc) }),
      };
    }),
  ),
  // Worldwide endpoints, for a country without its own (the examples' companies are Polish and Lithuanian).
  ...(
    [
      ['WW-start', 'START', 'NO'],
      ['WW-advanced', 'ADVANCED', 'NO'],
      ['WW-top', 'TOP', 'LT'],
    ] as const
  ).map(([name, level, cc]): Row => {
    const example = exampleKeys.find((k) => k.startsWith(`GET /${name}/`));
    if (!example) throw new Error(`no ${name} example`);
    const id = String(firstRecord(example).vatCode);
    return {
      endpoint: name,
      example,
      request: { method: 'GET', path: `/${name}/${cc}/${encodeURIComponent(id)}` },
      operation: `query($c: String!, $id: String!, $l: ForeignCompanyLevel) { foreignCompany(country: $c, id: $id, level: $l) { ${FOREIGN_FIELDS} } }`,
      variables: { c: cc, id, l: level },
      expected: (b) => ({ foreignCompany: foreign(itSingle(b), level, cc) }),
    };
  }),
  {
    endpoint: 'FR-search (no enrichment)',
    example: 'GET /FR-search #NoEnrichment',
    request: { method: 'GET', path: '/FR-search', query: { companyName: 'PARIS', dataEnrichment: null } },
    operation: `query($f: FrenchCompanySearchFilter!) { frenchCompanySearch(filter: $f, limit: 10) { ${IT_SEARCH_PAGE} items { id level } } }`,
    variables: { f: { companyName: 'PARIS' } },
    expected: (b) => ({ frenchCompanySearch: searchPage(records(b.data).map((r) => ({ id: text(r.id), level: 'START' }))) }),
  },
  {
    endpoint: 'FR-search (dataEnrichment=start)',
    example: 'GET /FR-search #Start',
    request: { method: 'GET', path: '/FR-search', query: { companyName: 'PARIS', dataEnrichment: 'start' } },
    operation: `query($f: FrenchCompanySearchFilter!) { frenchCompanySearch(filter: $f, limit: 10) { ${IT_SEARCH_PAGE} items { ${FOREIGN_BASIC} } } }`,
    variables: { f: { companyName: 'PARIS' } },
    expected: (b) => ({ frenchCompanySearch: searchPage(records(b.data).map((r) => omit(foreign(r, 'START', 'FR'), FOREIGN_ADVANCED_KEYS))) }),
  },
  {
    endpoint: 'FR-search (dataEnrichment=advanced)',
    example: 'GET /FR-search #Advanced',
    request: { method: 'GET', path: '/FR-search', query: { companyName: 'PARIS', dataEnrichment: 'advanced' } },
    operation: `query($f: FrenchCompanySearchFilter!) { frenchCompanySearch(filter: $f, limit: 10) { ${IT_SEARCH_PAGE} items { ${FOREIGN_FIELDS} } } }`,
    variables: { f: { companyName: 'PARIS' } },
    expected: (b) => ({ frenchCompanySearch: searchPage(records(b.data).map((r) => foreign(r, 'ADVANCED', 'FR'))) }),
  },
  {
    endpoint: 'monitor (list)',
    example: 'GET /monitor',
    request: { method: 'GET', path: '/monitor' },
    operation: `{ companyMonitors { ${MONITOR_FIELDS} } }`,
    expected: (b, rec) => ({ companyMonitors: records(b.data).map((m) => monitor(m, rec)) }),
  },
  {
    endpoint: 'monitor (create)',
    example: 'POST /monitor',
    request: { method: 'POST', path: '/monitor' },
    operation: `mutation($input: CreateCompanyMonitorInput!) { createCompanyMonitor(input: $input) { ${MONITOR_FIELDS} } }`,
    variables: {
      input: { code: VAT, dataset: 'IT_ADVANCED', monitoredFields: ['pec'], callbackUrl: 'https://webhook.site/28a4dddf-eca1-47f2-88d8-94878995e4d8' },
    },
    expected: (b, rec) => ({ createCompanyMonitor: monitor(compositeData(b), rec) }),
    notExposed: MONITOR_NOT_EXPOSED,
    requestBody: (body) => {
      const sent = JSON.parse(body) as Obj;
      expect(sent).toMatchObject({ code: VAT, dataset: 'IT-advanced', monitoredFields: ['pec'], autorenew: true, callback: { method: 'JSON' } });
      // the upstream is given a callback URL (the layer's own, or the caller's): an http(s) URL
      expect(String(obj(sent.callback)?.url)).toMatch(/^https?:\/\//);
    },
  },
  {
    endpoint: 'monitor/{id} (get)',
    example: 'GET /monitor/{id}',
    request: { method: 'GET', path: '/monitor/6981e3571a222556460af532' },
    operation: `query($id: ID!) { companyMonitor(id: $id) { ${MONITOR_FIELDS} } }`,
    variables: { id: '6981e3571a222556460af532' },
    expected: (b, rec) => ({ companyMonitor: monitor(compositeData(b), rec) }),
    notExposed: MONITOR_NOT_EXPOSED,
  },
  {
    endpoint: 'monitor/{id} (delete)',
    example: 'DELETE /monitor/{id}',
    request: { method: 'DELETE', path: '/monitor/6981e3571a222556460af532' },
    operation: `mutation($id: ID!) { deleteCompanyMonitor(id: $id) }`,
    variables: { id: '6981e3571a222556460af532' },
    // The answer's data is an empty list: the mutation answers with the id it deleted.
    expected: (b) => {
      expect(list(b.data)).toEqual([]);
      return { deleteCompanyMonitor: '6981e3571a222556460af532' };
    },
  },
];

// ---------------------------------------------------------------------------------------------
// Comparison: the response and the expectation walked in parallel, every difference listed
// ---------------------------------------------------------------------------------------------

function differences(actual: unknown, expected: unknown, path = ''): string[] {
  const show = (v: unknown): string => (v === undefined ? 'nothing' : JSON.stringify(v));
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual)) return [`${path}: expected ${show(expected)}, got ${show(actual)}`];
    const out: string[] = [];
    if (actual.length !== expected.length) out.push(`${path}: expected ${expected.length} items, got ${actual.length}`);
    for (let i = 0; i < Math.min(actual.length, expected.length); i++) out.push(...differences(actual[i], expected[i], `${path}[${i}]`));
    return out;
  }
  if (expected !== null && typeof expected === 'object') {
    if (actual === null || typeof actual !== 'object' || Array.isArray(actual)) return [`${path}: expected ${show(expected)}, got ${show(actual)}`];
    const e = expected as Obj;
    const a = actual as Obj;
    const keys = new Set([...Object.keys(e), ...Object.keys(a)]);
    return [...keys].flatMap((k) => differences(a[k], e[k], path ? `${path}.${k}` : k));
  }
  return Object.is(actual, expected) ? [] : [`${path}: expected ${show(expected)}, got ${show(actual)}`];
}

// ---------------------------------------------------------------------------------------------

let stub: Stub;
let t: TestStack;
const served: Served[] = [];
let checkPolls = 0;

beforeAll(async () => {
  stub = await startStub((req, res) => {
    const url = new URL(req.path, 'http://stub');
    const path = url.pathname.replace(/\/+$/, '') || '/';
    const auth = req.headers.authorization;
    const slow = req.method === 'GET' && path === `/IT-marketing/${SLOW_VAT}`;
    const check = req.method === 'GET' && path.startsWith('/IT-check_id/');
    // the slow company's dataset: 302 with the PENDING body, then PENDING once, then DONE
    const key = slow || (check && checkPolls++ === 0) ? 'GET /IT-check_id/{id} #PENDING' : check ? 'GET /IT-check_id/{id} #DONE' : exampleFor(req.method, path, url.searchParams);
    served.push({ method: req.method, path, query: url.searchParams, body: req.body, authorization: typeof auth === 'string' ? auth : undefined, example: key });
    if (slow) json(res, 302, EXAMPLES['GET /IT-check_id/{id} #PENDING'], { location: `/IT-check_id/${PENDING_ID}`, 'retry-after': '0' });
    else if (key) json(res, 200, EXAMPLES[key]);
    else json(res, 404, { data: null, success: false, message: `no example for ${req.method} ${path}`, error: 404 });
  });
  // Slow datasets by the GET (302 → IT-check_id): the examples are the GET's answers.
  t = await startTestStack({ OPENAPI_COMPANY_URL: stub.url, OPENAPI_TOKEN: 'test-token', OPENAPI_MAX_RETRIES: '0', COMPANY_SLOW_PURCHASE: 'poll' });
});

afterAll(async () => {
  await t?.close();
  await stub?.close();
});

describe('company vendor examples through the gateway', () => {
  it.each(ROWS.map((row) => [row.endpoint, row] as const))('%s', async (_name, row) => {
    const before = served.length;
    const res: GraphQLResponse<Obj> = await t.gql<Obj>(row.operation, row.variables);
    expect(res.errors, JSON.stringify(res.errors)).toBeUndefined();

    // Exactly one upstream request (or the row's flow), to the row's endpoint, answered with the row's example.
    const calls = served.slice(before);
    expect(calls.map((c) => `${c.method} ${c.path}`)).toEqual(row.flow ?? [`${row.request.method} ${row.request.path}`]);
    const call = calls[0];
    expect(calls.at(-1)?.example).toBe(row.example);
    expect(call.authorization).toBe('Bearer test-token');
    for (const [name, value] of Object.entries(row.request.query ?? {})) expect(call.query.get(name), `query parameter ${name}`).toBe(value);
    row.requestBody?.(call.body);

    // The example's values, through the mapping, field by field.
    const rec = new Recorder();
    const plain = example(row.example);
    const expected = row.expected(rec.wrap(structuredClone(plain)), rec);
    expect(differences(res.data, expected)).toEqual([]);

    // And the mapping read every value of the example (or the row says the schema has no field for it).
    expect(rec.unread(plain, { ...ENVELOPE, ...row.notExposed })).toEqual([]);
    for (const also of row.alsoServed ?? []) {
      expect(calls.some((c) => c.example === also.example)).toBe(true);
      const r = new Recorder();
      const body = example(also.example);
      also.read(r.wrap(structuredClone(body)));
      expect(r.unread(body, { ...ENVELOPE, ...also.notExposed }), also.example).toEqual([]);
    }
  });

  it('has a row for every 200 example of the spec, or a reason why no operation reaches it', () => {
    const used = new Set(ROWS.flatMap((r) => [r.example, ...(r.alsoServed ?? []).map((a) => a.example)]));
    const missing = exampleKeys.filter((k) => !used.has(k) && !(k in NOT_REACHED));
    expect(missing).toEqual([]);
    // and the reasons are not stale
    expect(Object.keys(NOT_REACHED).filter((k) => used.has(k) || !exampleKeys.includes(k))).toEqual([]);
  });
});
