/**
 * IT-search and FR-search over a finite, deterministic universe: the pinned companies, a pool of
 * generated companies, and the companies linked to them by ownership (so that a search by
 * `shareHolderTaxCode` finds subsidiaries). Filters, paging, dry runs and data enrichment follow
 * REFERENCE §4.1.
 *
 * Error numbers: 308 unknown parameter, 309 no search parameter, 311 bad `lat` (vendor's); the
 * emulator's own for other bad values: 310 not a number, 312 bad `long`, 313 bad `radius`,
 * 314 `companyName` shorter than 3 characters, 315 bad `limit`/`skip`, 316 bad `pec` (vendor's),
 * 317 bad `dataEnrichment`, 320 bad `activityStatus`. FR-search: 806 unknown parameter, 807 no
 * parameter, 811 bad `departmentCode`, 900 bad `lat` (vendor's), 901 other bad values.
 */
import { fail, ok, type EmuRequest, type EmuResponse } from '../core.ts';
import { priceOf } from '../../contract/prices.ts';
import { foreignAdvanced, foreignByCore, foreignStart, frSearchFields, sampleCore, type Country, type ForeignCompany } from './foreign.ts';
import { vatOfCore } from '../company-ids.ts';
import { ACTIVITY_STATUSES, type ActivityStatus, type CompanyProfile } from './model.ts';
import { childLinks, isRegistered, parentLinks } from './ownership.ts';
import { distanceMetres } from './places.ts';
import { employeesNow, lastFiled, profileOf } from './profile.ts';
import { hash32 } from '../random.ts';
import { PINNED_COMPANIES } from './sandbox.ts';
import { addressRecord, advancedRecord, flatShareholders, nameRecord, startRecord } from './shapes.ts';

/** Size of the generated pool (before ownership relatives are added). */
const POOL_SIZE = 400;
const MAX_RESULTS = 1000;

let universe: CompanyProfile[] | null = null;

/** Every Italian company IT-search can find. */
export function searchUniverse(): CompanyProfile[] {
  if (universe) return universe;
  const vats = new Set<string>(PINNED_COMPANIES.map((c) => c.vat));
  for (let i = 0; vats.size < POOL_SIZE + PINNED_COMPANIES.length && i < POOL_SIZE * 3; i++) {
    const vat = vatOfCore((hash32(`pool:${i}:hi`) % 100_000) * 100_000 + (hash32(`pool:${i}:lo`) % 100_000));
    if (!isRegistered(vat)) continue;
    vats.add(vat);
  }
  for (const vat of [...vats]) {
    for (const l of parentLinks(vat)) vats.add(l.parent);
    for (const l of childLinks(vat)) vats.add(l.child);
  }
  universe = [...vats].filter(isRegistered).map(profileOf);
  universe.sort((a, b) => a.name.localeCompare(b.name) || a.vat.localeCompare(b.vat));
  return universe;
}

const IT_KEYS = new Set([
  'dryRun',
  'dataEnrichment',
  'lat',
  'long',
  'radius',
  'companyName',
  'autocomplete',
  'province',
  'townCode',
  'atecoCode',
  'cciaa',
  'reaCode',
  'minTurnover',
  'maxTurnover',
  'minEmployees',
  'maxEmployees',
  'sdiCode',
  'legalFormCode',
  'shareHolderTaxCode',
  'activityStatus',
  'pec',
  'creationTimestamp',
  'lastUpdateTimestamp',
  'skip',
  'limit',
]);
/** Parameters that shape the answer rather than filter. */
const NOT_FILTERS = new Set(['dryRun', 'dataEnrichment', 'skip', 'limit']);

const ENRICHMENTS = ['start', 'advanced', 'pec', 'address', 'shareholders', 'name'] as const;

type Predicate<T> = (item: T) => boolean;

const words = (s: string): string[] =>
  s
    .toUpperCase()
    .split(/[^A-Z0-9À-Ý']+/)
    .filter(Boolean);

/** Whole-word match, or a `*` wildcard pattern over the whole name. */
function nameMatcher(query: string): Predicate<string> {
  const q = query.trim().toUpperCase();
  if (q.includes('*')) {
    const re = new RegExp(
      `^${q
        .split('*')
        .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
        .join('.*')}$`,
    );
    return (name) => re.test(name.toUpperCase());
  }
  const wanted = words(q);
  return (name) => {
    const have = new Set(words(name));
    return wanted.every((w) => have.has(w));
  };
}

class BadParam extends Error {
  constructor(readonly response: EmuResponse) {
    super('bad parameter');
  }
}

function numberParam(q: URLSearchParams, key: string, code = 310, status = 406): number | undefined {
  const v = q.get(key);
  if (v === null || v.trim() === '') return undefined;
  const n = Number(v);
  if (!Number.isFinite(n)) throw new BadParam(fail(status, code, `invalid parameter '${key}'`));
  return n;
}

interface Paging {
  skip: number;
  limit: number;
}

function paging(q: URLSearchParams, code: number): Paging {
  const skip = numberParam(q, 'skip', code) ?? 0;
  const limit = numberParam(q, 'limit', code) ?? MAX_RESULTS;
  if (skip < 0 || !Number.isInteger(skip)) throw new BadParam(fail(406, code, "invalid parameter, set 'skip' to 0 or more"));
  if (limit < 1 || !Number.isInteger(limit)) throw new BadParam(fail(406, code, "invalid parameter, set 'limit' between 1 and 1000"));
  return { skip, limit: Math.min(limit, MAX_RESULTS) };
}

/** lat/long/radius → a predicate on [lon, lat], or null when not asked. */
function geoFilter(q: URLSearchParams, latCode: number, otherCode: number): Predicate<[number, number]> | null {
  const lat = q.get('lat');
  const long = q.get('long');
  if (lat === null && long === null) return null;
  const latN = Number(lat);
  if (lat === null || lat.trim() === '' || !Number.isFinite(latN) || latN < -90 || latN > 90) {
    throw new BadParam(fail(422, latCode, "invalid parameter, set 'lat' between -90 and 90"));
  }
  const longN = Number(long);
  if (long === null || long.trim() === '' || !Number.isFinite(longN) || longN < -180 || longN > 180) {
    throw new BadParam(fail(422, otherCode, "invalid parameter, set 'long' between -180 and 180"));
  }
  const radius = q.get('radius') === null ? 1000 : Number(q.get('radius'));
  if (!Number.isFinite(radius) || radius <= 0) throw new BadParam(fail(422, latCode === 311 ? 313 : otherCode, "invalid parameter, set 'radius' greater than 0"));
  return (gps) => distanceMetres([longN, latN], gps) <= radius;
}

function itFilters(q: URLSearchParams): Array<Predicate<CompanyProfile>> {
  const filters: Array<Predicate<CompanyProfile>> = [];
  const str = (k: string): string | undefined => {
    const v = q.get(k);
    return v === null || v.trim() === '' ? undefined : v.trim();
  };
  const companyName = str('companyName');
  if (companyName !== undefined) {
    if (companyName.replace(/\*/g, '').length < 3) throw new BadParam(fail(406, 314, "invalid parameter, 'companyName' needs at least 3 characters"));
    const m = nameMatcher(companyName);
    filters.push((p) => m(p.name));
  }
  const autocomplete = str('autocomplete');
  if (autocomplete !== undefined) filters.push((p) => p.name.toUpperCase().startsWith(autocomplete.toUpperCase()));
  const eq = (key: string, get: (p: CompanyProfile) => string | null): void => {
    const v = str(key);
    if (v !== undefined) filters.push((p) => (get(p) ?? '').toUpperCase() === v.toUpperCase());
  };
  eq('province', (p) => p.address.town.province);
  eq('townCode', (p) => p.address.town.cadastral);
  eq('cciaa', (p) => p.cciaa);
  eq('reaCode', (p) => p.rea);
  eq('sdiCode', (p) => p.sdiCode);
  eq('legalFormCode', (p) => p.legalForm);
  const ateco = str('atecoCode');
  if (ateco !== undefined) filters.push((p) => !ateco.includes('.') && p.activity.code.startsWith(ateco));
  const status = str('activityStatus');
  if (status !== undefined) {
    if (!ACTIVITY_STATUSES.includes(status.toUpperCase() as ActivityStatus)) throw new BadParam(fail(406, 320, 'activityStatus not valid'));
    filters.push((p) => p.status === status.toUpperCase());
  }
  const pec = str('pec');
  if (pec !== undefined) {
    if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(pec)) throw new BadParam(fail(406, 316, 'pec not valid'));
    filters.push((p) => p.pec.toLowerCase() === pec.toLowerCase());
  }
  const holder = str('shareHolderTaxCode');
  if (holder !== undefined) filters.push((p) => p.shareholders.some((h) => h.holder.taxCode.toUpperCase() === holder.toUpperCase()));
  const range = (minKey: string, maxKey: string, get: (p: CompanyProfile) => number | null): void => {
    const min = numberParam(q, minKey);
    const max = numberParam(q, maxKey);
    if (min !== undefined) filters.push((p) => (get(p) ?? -Infinity) >= min);
    if (max !== undefined) filters.push((p) => (get(p) ?? Infinity) <= max);
  };
  range('minTurnover', 'maxTurnover', (p) => lastFiled(p)?.turnover ?? null);
  range('minEmployees', 'maxEmployees', (p) => employeesNow(p));
  const created = numberParam(q, 'creationTimestamp');
  if (created !== undefined) filters.push((p) => p.creationTimestamp > created);
  const updated = numberParam(q, 'lastUpdateTimestamp');
  if (updated !== undefined) filters.push((p) => p.lastUpdateTimestamp > updated);
  const geo = geoFilter(q, 311, 312);
  if (geo) filters.push((p) => geo(p.address.gps));
  return filters;
}

function enrich(p: CompanyProfile, how: (typeof ENRICHMENTS)[number] | null): unknown {
  switch (how) {
    case 'start':
      return startRecord(p);
    case 'advanced':
      return advancedRecord(p);
    case 'address':
      return addressRecord(p);
    case 'name':
      return nameRecord(p);
    case 'pec':
      return { taxCode: p.taxCode, companyName: p.name, vatCode: p.vat, id: p.id, pec: p.pec, history: p.pecHistory.map((h) => ({ ...h })) };
    case 'shareholders':
      return { taxCode: p.taxCode, companyName: p.name, vatCode: p.vat, id: p.id, shareHolders: flatShareholders(p) };
    default:
      return { id: p.id };
  }
}

/** The answer of a dry run: the count and what the real search would cost. */
function dryRunAnswer(count: number, cost: number): EmuResponse {
  return { status: 200, price: 0, json: { count, cost, success: true, message: '', error: null, data: { count, cost } } };
}

/** `GET /IT-search`. */
export function itSearch(req: EmuRequest): EmuResponse {
  const q = req.query;
  try {
    for (const key of q.keys()) if (!IT_KEYS.has(key)) return fail(400, 308, `unknown parameter: ${key}`);
    if (![...q.keys()].some((k) => !NOT_FILTERS.has(k))) return fail(400, 309, 'you have not passed any search parameters');
    const enrichment = q.get('dataEnrichment');
    if (enrichment !== null && enrichment !== '' && !(ENRICHMENTS as readonly string[]).includes(enrichment)) return fail(406, 317, 'dataEnrichment not valid');
    const page = paging(q, 315);
    const filters = itFilters(q);
    const matches = searchUniverse().filter((p) => filters.every((f) => f(p)));
    if (q.get('dryRun') === '1') return dryRunAnswer(matches.length, priceOf('company', 'GET', '/IT-search'));
    const pageItems = matches.slice(page.skip, page.skip + page.limit);
    if (pageItems.length === 0) return { status: 204, body: '' };
    const how = enrichment ? (enrichment as (typeof ENRICHMENTS)[number]) : null;
    return ok(pageItems.map((p) => enrich(p, how)));
  } catch (err) {
    if (err instanceof BadParam) return err.response;
    throw err;
  }
}

// ---------------------------------------------------------------------------------------------
// FR-search

const FR_KEYS = new Set([
  'dryRun',
  'dataEnrichment',
  'lat',
  'long',
  'radius',
  'companyName',
  'autocomplete',
  'town',
  'townCode',
  'nafCode',
  'departmentCode',
  'regionCode',
  'minTurnover',
  'maxTurnover',
  'minEmployees',
  'maxEmployees',
  'creditWorthy',
  'legalFormCode',
  'activityStatus',
  'creationTimestamp',
  'lastUpdateTimestamp',
  'skip',
  'limit',
]);

let frUniverse: ForeignCompany[] | null = null;

function frCompanies(): ForeignCompany[] {
  if (!frUniverse) {
    const fr: Country = 'FR';
    frUniverse = Array.from({ length: 200 }, (_, i) => foreignByCore(fr, sampleCore(fr, `frpool:${i}`)));
    frUniverse.sort((a, b) => a.name.localeCompare(b.name) || a.core.localeCompare(b.core));
  }
  return frUniverse;
}

/** `GET /FR-search`. */
export function frSearch(req: EmuRequest): EmuResponse {
  const q = req.query;
  try {
    for (const key of q.keys()) if (!FR_KEYS.has(key)) return fail(400, 806, `unknown parameter: ${key}`);
    if (![...q.keys()].some((k) => !NOT_FILTERS.has(k))) return fail(400, 807, 'you have not passed any search parameters');
    const page = paging(q, 901);
    const filters: Array<Predicate<ReturnType<typeof frSearchFields>>> = [];
    const str = (k: string): string | undefined => {
      const v = q.get(k);
      return v === null || v.trim() === '' ? undefined : v.trim();
    };
    const name = str('companyName');
    if (name !== undefined) {
      if (name.replace(/\*/g, '').length < 3) return fail(406, 901, "invalid parameter, 'companyName' needs at least 3 characters");
      const m = nameMatcher(name);
      filters.push((c) => m(c.name));
    }
    const auto = str('autocomplete');
    if (auto !== undefined) filters.push((c) => c.name.toUpperCase().startsWith(auto.toUpperCase()));
    const dept = str('departmentCode');
    if (dept !== undefined && !/^(\d{2,3}|2[AB])$/i.test(dept)) return fail(406, 811, 'departmentCode not valid');
    const eq = (key: string, get: (c: ReturnType<typeof frSearchFields>) => string | null): void => {
      const v = str(key);
      if (v !== undefined) filters.push((c) => (get(c) ?? '').toUpperCase() === v.toUpperCase());
    };
    eq('town', (c) => c.town);
    eq('townCode', (c) => c.townCode);
    eq('nafCode', (c) => c.nafCode);
    eq('departmentCode', (c) => c.departmentCode);
    eq('regionCode', (c) => c.regionCode);
    eq('legalFormCode', (c) => c.legalForm);
    eq('activityStatus', (c) => c.status);
    const cw = numberParam(q, 'creditWorthy', 901);
    if (cw !== undefined) filters.push((c) => c.creditWorthy === cw);
    const range = (minKey: string, maxKey: string, get: (c: ReturnType<typeof frSearchFields>) => number): void => {
      const min = numberParam(q, minKey, 901);
      const max = numberParam(q, maxKey, 901);
      if (min !== undefined) filters.push((c) => get(c) >= min);
      if (max !== undefined) filters.push((c) => get(c) <= max);
    };
    range('minTurnover', 'maxTurnover', (c) => c.turnover);
    range('minEmployees', 'maxEmployees', (c) => c.employees);
    const geo = geoFilter(q, 900, 901);
    if (geo) filters.push((c) => geo(c.gps));
    const all = frCompanies();
    const created = numberParam(q, 'creationTimestamp', 901);
    const updated = numberParam(q, 'lastUpdateTimestamp', 901);
    const matches = all.filter((c) => {
      const f = frSearchFields(c);
      return filters.every((p) => p(f)) && (created === undefined || c.creationTimestamp > created) && (updated === undefined || c.lastUpdateTimestamp > updated);
    });
    if (q.get('dryRun') === '1') return dryRunAnswer(matches.length, priceOf('company', 'GET', '/FR-search'));
    const items = matches.slice(page.skip, page.skip + page.limit);
    if (items.length === 0) return { status: 204, body: '' };
    const how = q.get('dataEnrichment');
    return ok(items.map((c) => (how === 'start' ? foreignStart(c) : how === 'advanced' ? foreignAdvanced(c) : { id: c.id })));
  } catch (err) {
    if (err instanceof BadParam) return err.response;
    throw err;
  }
}
