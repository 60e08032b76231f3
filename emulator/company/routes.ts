/**
 * The company area's routes: every endpoint of the vendor spec, wired to the generator, the
 * renderers and the per-endpoint error numbers.
 */
import { fail, ok, type EmuRequest, type EmuResponse, type Route } from '../core.ts';
import { isValidFiscalCode, isValidItalianVat } from '../../contract/checksums.ts';
import type { CompositeShape } from '../../contract/company-payloads.ts';
import { priceOf } from '../../contract/prices.ts';
import type { AsyncRequests } from './async.ts';
import { readCallback } from '../callbacks.ts';
import { IT_DATASETS } from './datasets.ts';
import { ERRORS, FOREIGN_ERRORS, invalid, notFound, required, type EndpointErrors, type ErrorKey } from './errors.ts';
import { COUNTRIES, EU_VAT_PREFIXES, foreignAdvanced, foreignLookup, foreignStart, ISO_COUNTRIES, isCountry, wwTop } from './foreign.ts';
import { ANY, lookupCompany, NO_ID, type Accepts } from './lookup.ts';
import type { CompanyProfile } from './model.ts';
import type { Monitors } from './monitor.ts';
import { isRegistered } from './ownership.ts';
import { lastFiled, profileOf } from './profile.ts';
import { closedRecord, compositeRecord, uboRecords, vatGroupRecord } from './shapes.ts';
import { frSearch, itSearch } from './search.ts';
import { LEGAL_FORMS, legalFormByCode } from './tables.ts';

/** What the routes need from the module. */
export interface CompanyState {
  requests: AsyncRequests;
  monitors: Monitors;
  /** How long a slow dataset (`IT-full`, …) takes to prepare, whichever flow buys it; 0: ready at once. */
  prepareMs(dataset: string): number;
  /** How long a slow dataset's GET waits for it before answering 302 → IT-check_id (the vendor's 30 s). */
  waitMs(): number;
}

type Json = Record<string, unknown>;

const HEX24 = /^[0-9a-f]{24}$/i;

/** Both `/X` (answering "… required") and `/X/:id`. */
function lookupRoutes(name: string, errors: EndpointErrors, accepts: Accepts, render: (p: CompanyProfile, req: EmuRequest) => EmuResponse): Route[] {
  const handle = (req: EmuRequest, id: string | undefined): EmuResponse => {
    const r = lookupCompany(id, accepts);
    if (r.kind === 'missing') return required(errors);
    if (r.kind === 'invalid') return invalid(errors);
    if (r.kind === 'notFound') return notFound(errors, r.value);
    return render(r.profile, req);
  };
  return [
    { method: 'GET', pattern: `/${name}`, handler: (req) => handle(req, undefined) },
    { method: 'GET', pattern: `/${name}/:id`, handler: (req, params) => handle(req, params.id) },
  ];
}

const list = (record: unknown): EmuResponse => ok([record]);

function closedHandler(p: CompanyProfile, req: EmuRequest): EmuResponse {
  const date = req.query.get('date');
  if (date !== null && date !== '' && !/^\d{4}-\d{2}-\d{2}$/.test(date)) return fail(406, 326, 'date not valid');
  return list(closedRecord(p, date || undefined));
}

function vatGroupHandler(p: CompanyProfile, req: EmuRequest): EmuResponse {
  const taxCode = req.query.get('taxCode');
  if (taxCode === null || taxCode === '') return list(vatGroupRecord(p));
  if (!isValidFiscalCode(taxCode)) return fail(406, 330, 'taxCode not valid');
  const consistent = taxCode.toUpperCase() === p.taxCode.toUpperCase();
  return list({
    ...vatGroupRecord(p),
    taxCodeVatCodeConsistent: consistent,
    taxCodeEntrant: false,
    taxCodePresent: consistent,
    vatGroupMembers: [],
  });
}

function uboHandler(p: CompanyProfile): EmuResponse {
  const owners = uboRecords(p);
  if (owners.length === 0) return { status: 200, json: { data: [], success: true, message: 'no ultimate beneficial owner found', error: null } };
  return ok(owners);
}

function splitPaymentHandler(p: CompanyProfile): EmuResponse {
  if (!p.splitPayment) return fail(404, 502, 'no company found');
  return list({
    taxCode: p.taxCode,
    companyName: p.name,
    startingDateTimestamp: p.creationTimestamp,
    companyType: 'Enti pubblici e societa controllate',
    lastUpdateTimestamp: p.lastUpdateTimestamp,
  });
}

function paHandler(p: CompanyProfile): EmuResponse {
  if (!p.publicAdministration) return fail(404, 602, 'no company found');
  const manager = p.managers.find((m) => m.legalRep && m.who.kind === 'person');
  const a = p.address;
  return list({
    paId: Number(p.vat.slice(0, 9)),
    companyName: p.name,
    taxCode: p.taxCode,
    vatCode: p.vat,
    establishmentDate: p.incorporationDate,
    terminationDate: p.endDate,
    phone: p.phone,
    fax: p.fax,
    url: p.website,
    managerName: manager?.who.kind === 'person' ? manager.who.name : null,
    managerSurname: manager?.who.kind === 'person' ? manager.who.surname : null,
    managerTitle: 'LEGALE RAPPRESENTANTE',
    ipaEntityCode: p.id.slice(0, 6).toUpperCase(),
    ipaTypeCode: 'PA',
    ipaTypeDescription: 'PUBBLICHE AMMINISTRAZIONI',
    lastUpdateTimestamp: p.lastUpdateTimestamp,
    pa: true,
    paInvoicingOffice: [
      {
        administrationCode: p.id.slice(0, 6),
        ouCode: 'Uff_eFatturaPA',
        sdiCode: `UF${p.id.slice(6, 10).toUpperCase()}`,
        ouDescription: 'Uff_eFatturaPA',
        region: a.town.regionName,
        province: a.town.province,
        town: a.town.name,
        streetName: `${a.toponym} ${a.street}, ${a.streetNumber}`,
        zipCode: a.zip,
        taxCode: p.taxCode,
        taxCodeVerificationDate: p.registrationDate,
        sfeStartDate: '2015-03-31',
        lastUpdateTimestamp: p.lastUpdateTimestamp,
      },
    ],
    atecoClassification: { ateco: { code: p.activity.code, description: p.activity.it } },
    detailedLegalForm: { code: p.legalForm, description: legalFormByCode(p.legalForm)?.description ?? null },
    address: { registeredOffice: { town: a.town.name, province: a.town.province, zipCode: a.zip, streetName: `${a.toponym} ${a.street} ${a.streetNumber}` } },
  });
}

const COMPOSITES: Array<[string, CompositeShape]> = [
  ['IT-full', 'full'],
  ['IT-aml', 'aml'],
  ['IT-marketing', 'marketing'],
  ['IT-stakeholders', 'stakeholders'],
];

function compositeRoutes(state: CompanyState): Route[] {
  const routes: Route[] = [];
  for (const [name, shape] of COMPOSITES) {
    const getErrors = ERRORS[`GET ${name}` as ErrorKey];
    const postErrors = ERRORS[`POST ${name}` as ErrorKey];
    // The vendor's GET: waits for the dataset as long as its limit allows, then answers 302 with
    // the request to follow (`IT-check_id`), charged as the dataset (it was bought).
    const get = async (req: EmuRequest, id: string | undefined): Promise<EmuResponse> => {
      const r = lookupCompany(id, NO_ID);
      if (r.kind === 'missing') return required(getErrors);
      if (r.kind === 'invalid') return invalid(getErrors);
      if (r.kind === 'notFound') return notFound(getErrors, r.value);
      const p = r.profile;
      const prepare = state.prepareMs(name);
      if (prepare <= 0) return ok(compositeRecord(p, shape));
      const pending = state.requests.create({
        endpoint: name,
        vat: p.vat,
        owner: req.token.owner,
        delayMs: prepare,
        callback: null,
        dataset: () => compositeRecord(profileOf(p.vat), shape),
      });
      if (await state.requests.settled(pending, state.waitMs())) return ok(pending.result);
      const left = pending.dueAt - state.requests.now();
      return {
        status: 302,
        headers: { location: `${req.baseUrl}/IT-check_id/${pending.id}`, 'retry-after': String(Math.max(1, Math.ceil(left / 1000))) },
        json: { data: { state: 'PENDING', id: pending.id }, success: true, message: '', error: null },
        price: priceOf('company', 'GET', req.path),
      };
    };
    const post = (req: EmuRequest, id: string | undefined): EmuResponse => {
      const r = lookupCompany(id, NO_ID);
      if (r.kind === 'missing') return required(postErrors);
      if (r.kind === 'invalid') return invalid(postErrors);
      if (r.kind === 'notFound') return notFound(postErrors, r.value);
      const body = typeof req.body === 'object' && req.body !== null ? (req.body as Json) : {};
      const cb = readCallback(body, { form: 'standard', username: req.token.owner, retry: 'refuse', required: true });
      if ('error' in cb) return cb.error;
      if (!cb.callback) return fail(428, 704, "url not set in 'callback', required");
      const vat = r.profile.vat;
      const pending = state.requests.create({
        endpoint: name,
        vat,
        owner: req.token.owner,
        delayMs: state.prepareMs(name),
        callback: cb.callback,
        dataset: () => compositeRecord(profileOf(vat), shape),
      });
      return ok({ state: 'PENDING', id: pending.id });
    };
    routes.push(
      { method: 'GET', pattern: `/${name}`, handler: (req) => get(req, undefined) },
      { method: 'GET', pattern: `/${name}/:id`, handler: (req, params) => get(req, params.id) },
      { method: 'POST', pattern: `/${name}`, handler: (req) => post(req, undefined) },
      { method: 'POST', pattern: `/${name}/:id`, handler: (req, params) => post(req, params.id) },
    );
  }
  return routes;
}

function checkIdRoutes(state: CompanyState): Route[] {
  const handle = (req: EmuRequest, id: string | undefined): EmuResponse => {
    if (!id) return fail(400, 242, 'id required');
    if (!HEX24.test(id)) return fail(406, 243, 'id not valid');
    const r = state.requests.get(id);
    // Another account's request does not exist for this token.
    if (!r || r.owner !== req.token.owner) return fail(404, 244, `no request matches this id: ${id}`);
    if (r.state === 'PENDING') return ok({ state: 'PENDING', id: r.id });
    return ok(r.result);
  };
  return [
    { method: 'GET', pattern: '/IT-check_id', price: 0, handler: (req) => handle(req, undefined) },
    { method: 'GET', pattern: '/IT-check_id/:id', price: 0, handler: (req, params) => handle(req, params.id) },
  ];
}

function legalFormRoutes(): Route[] {
  return [
    { method: 'GET', pattern: '/IT-legalforms', handler: () => ok(LEGAL_FORMS.map((f) => ({ ...f }))) },
    {
      method: 'GET',
      pattern: '/IT-legalforms/:code',
      handler: (_req, params) => {
        const f = legalFormByCode(params.code ?? '');
        return f ? ok([{ ...f }]) : fail(404, 336, `no legalform matches this code: ${params.code ?? ''}`);
      },
    },
  ];
}

function euStart(raw: string | undefined): EmuResponse {
  const value = (raw ?? '').replace(/\s/g, '').toUpperCase();
  if (value.length < 3) return fail(400, 400, 'countryCode and vatCode required');
  const country = value.slice(0, 2);
  const number = value.slice(2);
  if (!EU_VAT_PREFIXES.has(country)) return fail(406, 401, 'countryCode not valid');
  const answer = (valid: boolean, formatValid: boolean, name: string | null, address: string | null): EmuResponse =>
    ok([{ valid, formatValid, countryCode: country, vatCode: number, companyName: name, companyAddress: address }]);
  if (country === 'IT') {
    if (!/^\d{11}$/.test(number)) return answer(false, false, null, null);
    if (!isValidItalianVat(number) || !isRegistered(number)) return answer(false, true, null, null);
    const p = profileOf(number);
    const a = p.address;
    return answer(p.status !== 'CESSATA', true, p.name, `${a.toponym} ${a.street} ${a.streetNumber}, ${a.zip} ${a.town.name} (${a.town.province})`);
  }
  const lookupCountry = country === 'EL' ? 'GR' : country === 'XI' ? 'GB' : country;
  const r = foreignLookup(lookupCountry, isCountry(lookupCountry) ? value.replace(/^EL|^XI/, lookupCountry) : number);
  if (r.kind === 'invalid' || r.kind === 'missing') return answer(false, false, null, null);
  if (r.kind === 'notFound') return answer(false, true, null, null);
  const c = r.company;
  return answer(c.active, true, c.name.toUpperCase(), `${c.street} ${c.streetNumber}, ${c.town[1]} ${c.town[0]}`.toUpperCase());
}

function foreignRoutes(): Route[] {
  const routes: Route[] = [];
  for (const country of COUNTRIES) {
    for (const level of ['start', 'advanced'] as const) {
      const name = `${country}-${level}`;
      const errors = FOREIGN_ERRORS[name];
      const handle = (id: string | undefined): EmuResponse => {
        const r = foreignLookup(country, id);
        if (r.kind === 'missing') return fail(400, errors.required[0], errors.required[1]);
        if (r.kind === 'invalid') return fail(406, errors.invalid[0], errors.invalid[1]);
        if (r.kind === 'notFound') return fail(404, errors.notFound, `no company matches this id: ${id ?? ''}`);
        return ok([level === 'start' ? foreignStart(r.company) : foreignAdvanced(r.company)]);
      };
      routes.push(
        { method: 'GET', pattern: `/${name}`, handler: () => handle(undefined) },
        { method: 'GET', pattern: `/${name}/:id`, handler: (_req, params) => handle(params.id) },
      );
    }
  }
  return routes;
}

/** An Italian company in the worldwide shape (WW-* with country IT). */
function italianWorldwide(p: CompanyProfile, level: 'start' | 'advanced' | 'top'): Json {
  const a = p.address;
  const out: Json = {
    id: p.id,
    lastUpdateTimestamp: p.lastUpdateTimestamp,
    companyName: p.name,
    taxCode: p.taxCode,
    vatCode: `IT${p.vat}`,
    address: {
      registeredOffice: {
        town: a.town.name,
        country: 'IT',
        zipCode: a.zip,
        streetName: `${a.toponym} ${a.street} ${a.streetNumber}`,
        streetNumber: a.streetNumber,
        gps: { coordinates: [a.gps[0], a.gps[1]] },
      },
    },
    activityStatus: p.status === 'ATTIVA' ? 'ACTIVE' : 'INACTIVE',
    incorporationDate: p.incorporationDate,
  };
  if (level === 'start') return out;
  const filed = p.years.filter((y) => y.turnover !== null);
  const last = lastFiled(p);
  const sheet = (y: CompanyProfile['years'][number]): Json => ({
    year: y.year,
    balanceSheetDate: y.balanceSheetDate,
    employees: y.employees,
    netWorth: y.netWorth,
    operatingRevenue: y.turnover,
    equity: y.netWorth,
    totalAssets: y.totalAssets ?? null,
  });
  return {
    ...out,
    contacts: { fax: p.fax, phone: p.phone, website: p.website },
    internationalClassification: { nace: { code: p.activity.code, description: p.activity.nace }, sic: { code: p.activity.sic.code, description: p.activity.sic.description } },
    balanceSheets: { last: last ? sheet(last) : null, all: filed.map(sheet) },
  };
}

function worldwideRoutes(): Route[] {
  const routes: Route[] = [];
  for (const level of ['start', 'advanced', 'top'] as const) {
    const name = `WW-${level}`;
    const errors = FOREIGN_ERRORS[name];
    const handle = (country: string | undefined, id: string | undefined): EmuResponse => {
      if (!country) return fail(400, errors.required[0], errors.required[1]);
      const iso = country.toUpperCase();
      if (!ISO_COUNTRIES.has(iso)) return fail(406, 2000, "the country's ISO code does not exist");
      if (!id) return fail(400, errors.required[0], 'vatCode, companyNumber, taxCode or id required');
      if (iso === 'IT') {
        const r = lookupCompany(id, ANY);
        if (r.kind === 'invalid' || r.kind === 'missing') return fail(406, errors.invalid[0], errors.invalid[1]);
        if (r.kind === 'notFound') return fail(404, errors.notFound, `no company matches this id: ${id}`);
        return ok([italianWorldwide(r.profile, level)]);
      }
      const r = foreignLookup(iso, id);
      if (r.kind === 'missing') return fail(400, errors.required[0], errors.required[1]);
      if (r.kind === 'invalid') return fail(406, errors.invalid[0], errors.invalid[1]);
      if (r.kind === 'notFound') return fail(404, errors.notFound, `no company matches this id: ${id}`);
      const c = r.company;
      return ok([level === 'top' ? wwTop(c) : level === 'advanced' ? foreignAdvanced(c) : foreignStart(c)]);
    };
    routes.push(
      { method: 'GET', pattern: `/${name}`, handler: () => handle(undefined, undefined) },
      { method: 'GET', pattern: `/${name}/:country`, handler: (_req, params) => handle(params.country, undefined) },
      { method: 'GET', pattern: `/${name}/:country/:id`, handler: (_req, params) => handle(params.country, params.id) },
    );
  }
  return routes;
}

function monitorRoutes(state: CompanyState): Route[] {
  return [
    { method: 'POST', pattern: '/monitor', handler: (req) => state.monitors.create(req) },
    { method: 'GET', pattern: '/monitor', handler: (req) => state.monitors.list(req) },
    { method: 'GET', pattern: '/monitor/:id', handler: (req, params) => state.monitors.get(req, params.id ?? '') },
    { method: 'DELETE', pattern: '/monitor', handler: (req) => state.monitors.delete(req, undefined) },
    { method: 'DELETE', pattern: '/monitor/:id', handler: (req, params) => state.monitors.delete(req, params.id) },
  ];
}

/** Every route of the company area. */
export function companyRoutes(state: CompanyState): Route[] {
  // One-record endpoints: the record of the shared dataset table, in a one-element list.
  const listed = (['IT-start', 'IT-advanced', 'IT-address', 'IT-name', 'IT-pec', 'IT-sdicode'] as const).flatMap((name) =>
    lookupRoutes(name, ERRORS[name], ANY, (p) => list(IT_DATASETS[name](p))),
  );
  return [
    ...listed,
    ...lookupRoutes('IT-closed', ERRORS['IT-closed'], ANY, closedHandler),
    ...lookupRoutes('IT-vatgroup', ERRORS['IT-vatgroup'], { vat: true, id: true }, vatGroupHandler),
    ...lookupRoutes('IT-shareholders', ERRORS['IT-shareholders'], ANY, (p) => ok(IT_DATASETS['IT-shareholders'](p))),
    ...lookupRoutes('IT-ubo', ERRORS['IT-ubo'], ANY, uboHandler),
    ...lookupRoutes('IT-splitpayment', ERRORS['IT-splitpayment'], NO_ID, splitPaymentHandler),
    ...lookupRoutes('IT-pa', ERRORS['IT-pa'], NO_ID, paHandler),
    ...compositeRoutes(state),
    ...checkIdRoutes(state),
    { method: 'GET', pattern: '/IT-search', handler: itSearch },
    ...legalFormRoutes(),
    { method: 'GET', pattern: '/EU-start', handler: () => euStart(undefined) },
    { method: 'GET', pattern: '/EU-start/:id', handler: (_req, params) => euStart(params.id) },
    ...foreignRoutes(),
    { method: 'GET', pattern: '/FR-search', handler: frSearch },
    ...worldwideRoutes(),
    ...monitorRoutes(state),
  ];
}
