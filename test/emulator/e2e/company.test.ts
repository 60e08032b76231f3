/**
 * The emulator over HTTP: auth and wallet, the company area's data (checksums, consistency across
 * endpoints, ownership chains), the slow 302 → IT-check_id flow, callbacks, search, monitoring and
 * the control API. Every server started here is stopped in `afterAll`/`finally`.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { DEFAULT_TOKEN, scopeAllows, startEmulator, type CallRecord, type RunningEmulator } from '../../../emulator/server.ts';
import { createCompanyModule, isRegistered } from '../../../emulator/company/index.ts';
import { isValidFiscalCode, isValidItalianVat, makeItalianVat } from '../../../contract/checksums.ts';
import { untilInFlight } from '../../support/inflight.ts';
import { startReceiver } from '../../support/receiver.ts';
import { waitFor } from '../../support/wait.ts';

type Json = Record<string, unknown>;

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Json;
  text: string;
}

let emu: RunningEmulator;

async function call(method: string, path: string, opts: { token?: string | null; body?: unknown; form?: Record<string, string>; timeoutMs?: number } = {}): Promise<Answer> {
  const headers: Record<string, string> = {};
  const token = opts.token === undefined ? DEFAULT_TOKEN : opts.token;
  if (token) headers.authorization = `Bearer ${token}`;
  let body: string | undefined;
  if (opts.form) {
    headers['content-type'] = 'application/x-www-form-urlencoded';
    body = new URLSearchParams(opts.form).toString();
  } else if (opts.body !== undefined) {
    headers['content-type'] = 'application/json';
    body = typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body);
  }
  const res = await request(`${emu.url}${path}`, { method: method as 'GET', headers, body, signal: opts.timeoutMs ? AbortSignal.timeout(opts.timeoutMs) : undefined });
  const text = await res.body.text();
  let parsed: Json = {};
  if (text) parsed = JSON.parse(text) as Json;
  return { status: res.statusCode, headers: res.headers, body: parsed, text };
}

const get = (path: string, token?: string | null): Promise<Answer> => call('GET', path, { token });
const control = async (method: string, path: string, body?: unknown): Promise<unknown> => (await call(method, `/_emulator/${path}`, { token: null, body })).body;
const data = (a: Answer): Json[] => a.body.data as Json[];
const first = (a: Answer): Json => data(a)[0];
const obj = (a: Answer): Json => a.body.data as Json;

async function newToken(init: { scopes?: string[]; credit?: number; owner?: string } = {}): Promise<string> {
  const t = (await control('POST', 'tokens', init)) as { token: string };
  return t.token;
}

const OPENAPI = '12485671007';
const OPEN_HOLDING = '16935371001';
const ALFA_HOLDING = '03456780158';
const ALFA_INDUSTRIE = '03456781057';
const ALFA_LOGISTICA = '03456782055';
const ALFA_TRASPORTI = '03456783053';
const BETA = '04123450159';
const DELTA = '04123450787';
const CEASED = '05234560158';
const SOLE_TRADER = '07456780159';
const SOLE_TRADER_CF = 'RSSMRA80A01H501U';

beforeAll(async () => {
  emu = await startEmulator({ modules: [createCompanyModule()] });
});

afterAll(async () => {
  await emu.close();
});

describe('authentication', () => {
  it('answers 401 Wrong Token (error 125) without a token or with an unknown one', async () => {
    for (const token of [null, 'not-a-token']) {
      const a = await get(`/company/IT-start/${OPENAPI}`, token);
      expect(a.status).toBe(401);
      expect(a.body).toEqual({ success: false, message: 'Wrong Token', error: 125, data: null });
    }
  });

  it('checks scopes against the sandbox host, per endpoint and method', async () => {
    const onlyStart = await newToken({ scopes: ['GET:test.company.openapi.com/IT-start'] });
    expect((await get(`/company/IT-start/${OPENAPI}`, onlyStart)).status).toBe(200);
    expect((await get(`/company/IT-advanced/${OPENAPI}`, onlyStart)).status).toBe(401);
    expect((await call('POST', `/company/IT-full/${OPENAPI}`, { token: onlyStart, body: {} })).status).toBe(401);

    const production = await newToken({ scopes: ['GET:company.openapi.com/IT-start'] });
    expect((await get(`/company/IT-start/${OPENAPI}`, production)).status).toBe(401);

    const wildcard = await newToken({ scopes: ['*:*.openapi.com/*'] });
    expect((await get(`/company/IT-advanced/${OPENAPI}`, wildcard)).status).toBe(200);

    const otherArea = await newToken({ scopes: ['*:test.risk.openapi.com/*'] });
    expect((await get(`/company/IT-start/${OPENAPI}`, otherArea)).status).toBe(401);
  });

  it('matches scope paths by segment, with and without trailing slashes', () => {
    const host = 'test.risk.openapi.com';
    expect(scopeAllows(['POST:test.risk.openapi.com/IT-report-persona'], 'POST', host, '/IT-report-persona')).toBe(true);
    expect(scopeAllows(['POST:test.risk.openapi.com/IT-report-persona/'], 'POST', host, '/IT-report-persona')).toBe(true);
    expect(scopeAllows(['POST:test.risk.openapi.com/IT-report'], 'POST', host, '/IT-report-persona')).toBe(false);
    expect(scopeAllows(['GET:test.risk.openapi.com/IT-report-persona'], 'POST', host, '/IT-report-persona')).toBe(false);
    expect(scopeAllows(['*:test.risk.openapi.com/*'], 'PATCH', host, '/IT-bureau-persona')).toBe(true);
  });

  it('serves paths with a trailing slash', async () => {
    expect((await get(`/company/IT-start/${OPENAPI}/`)).status).toBe(200);
  });
});

describe('wallet', () => {
  it('answers 402 before the handler when the price exceeds the credit, and charges successful calls', async () => {
    const token = await newToken({ credit: 0.1, owner: 'poor@example.com' });
    // errors are free
    expect((await get('/company/IT-start/12485671008', token)).status).toBe(406);
    const tooDear = await get(`/company/IT-advanced/${OPENAPI}`, token); // 0.15
    expect(tooDear.status).toBe(402);
    expect(tooDear.body.error).toBe(610);
    expect(String(tooDear.body.message)).toMatch(/^Billing error message: Insufficient Credit in Wallet: /);
    expect((await get(`/company/IT-start/${OPENAPI}`, token)).status).toBe(200); // 0.05
    expect(((await control('GET', `tokens/${token}`)) as { credit: number }).credit).toBeCloseTo(0.05, 6);
    expect((await get(`/company/IT-start/${OPENAPI}`, token)).status).toBe(200);
    expect((await get(`/company/IT-start/${OPENAPI}`, token)).status).toBe(402);
    const slowGet = await get(`/company/IT-full/${OPENAPI}`, token);
    expect(slowGet.status).toBe(402);
    expect(slowGet.body.error).toBe(611);
  });

  it('logs every call with its price and only the tail of the token', async () => {
    const token = await newToken({ credit: 10 });
    await control('DELETE', 'calls');
    await get(`/company/IT-start/${OPENAPI}`, token);
    await get('/company/IT-start/12485671008', token);
    const calls = (await control('GET', 'calls?area=company')) as CallRecord[];
    expect(calls).toHaveLength(2);
    expect(calls[0]).toMatchObject({ method: 'GET', path: `/IT-start/${OPENAPI}`, area: 'company', status: 200, price: 0.05 });
    expect(calls[1]).toMatchObject({ status: 406, price: 0 });
    expect(JSON.stringify(calls)).not.toContain(token);
    expect(calls[0].token).toBe(`…${token.slice(-4)}`);
  });
});

describe('generated data', () => {
  it('answers the spec example for OPENAPI S.P.A.', async () => {
    const start = first(await get(`/company/IT-start/${OPENAPI}`));
    expect(start).toMatchObject({
      taxCode: OPENAPI,
      companyName: 'OPENAPI S.P.A.',
      vatCode: OPENAPI,
      activityStatus: 'ATTIVA',
      sdiCode: 'USAL8PV',
      id: '60b4a85585e34e615c569ef5',
      registrationDate: '2013-07-19',
      address: {
        registeredOffice: {
          streetName: 'VIALE F TOMMASO MARINETTI 221',
          town: 'ROMA',
          province: 'RM',
          zipCode: '00143',
          townCode: 'H501',
          region: { code: '12', description: 'LAZIO' },
        },
      },
    });
    const adv = first(await get(`/company/IT-advanced/${OPENAPI}`));
    expect(adv.shareHolders).toEqual([{ companyName: 'OPEN HOLDING S.R.L.', name: null, surname: null, taxCode: OPEN_HOLDING, percentShare: 100 }]);
    expect(adv.pec).toBe('openapi@legalmail.it');
    const full = obj(await get(`/company/IT-full/${OPENAPI}`));
    const managers = full.managers as Json[];
    expect(managers.map((m) => m.taxCode)).toEqual(['SCRLCU73R02H501H', OPEN_HOLDING, 'DSNSMN80M11L117F', 'DLCSHN77S29Z114J']);
    expect(full.operatingResults).toEqual({ ebitda: 714856, ebitdaL2Y: 284656, ebit: 682714, ebitL2Y: 260414, cashFlow: 501508, cashFlowL2Y: 194476 });
  });

  it('finds the same company by VAT, IT-prefixed VAT, fiscal code and id', async () => {
    const byVat = first(await get(`/company/IT-start/${ALFA_TRASPORTI}`));
    const byPrefixed = first(await get(`/company/IT-start/IT${ALFA_TRASPORTI}`));
    const byId = first(await get(`/company/IT-start/${String(byVat.id)}`));
    expect(byPrefixed).toEqual(byVat);
    expect(byId).toEqual(byVat);
    expect(byVat.id).toMatch(/^[0-9a-f]{24}$/);
    const soleByCf = first(await get(`/company/IT-start/${SOLE_TRADER_CF}`));
    const soleByVat = first(await get(`/company/IT-start/${SOLE_TRADER}`));
    expect(soleByCf).toEqual(soleByVat);
    expect(soleByCf.taxCode).toBe(SOLE_TRADER_CF);
  });

  it('answers 400 / 406 / 404 with the numbers of each endpoint, and 204 where the spec has no 404', async () => {
    let unregistered = '';
    for (let i = 1; !unregistered; i++) {
      const vat = makeItalianVat(String(1_000_000_000 + i * 7919));
      if (isValidItalianVat(vat) && !isRegistered(vat)) unregistered = vat;
    }
    const cases: Array<[string, number, number | null]> = [
      ['/company/IT-start', 400, 300],
      ['/company/IT-start/12485671008', 406, 301],
      [`/company/IT-start/${unregistered}`, 404, 302],
      ['/company/IT-advanced/1234', 406, 304],
      [`/company/IT-advanced/${unregistered}`, 404, 305],
      [`/company/IT-pec/${unregistered}`, 404, 323],
      [`/company/IT-name/${unregistered}`, 404, 341],
      [`/company/IT-address/${unregistered}`, 204, null],
      [`/company/IT-full/${unregistered}`, 204, null],
      ['/company/IT-full/12485671008', 406, 222],
      ['/company/IT-aml/12485671008', 406, 215],
      ['/company/IT-marketing', 400, 200],
      ['/company/IT-stakeholders/60b4a85585e34e615c569ef5', 406, 208],
      ['/company/IT-start/aaaaaaaaaaaaaaaaaaaaaaaa', 404, 302],
      ['/company/IT-start/RSSMRA80A01H501V', 406, 301],
      ['/company/IT-legalforms/QQ', 404, 336],
      ['/company/IT-check_id/nothex', 406, 243],
      ['/company/IT-check_id/aaaaaaaaaaaaaaaaaaaaaaaa', 404, 244],
      ['/company/WW-start/XX/123456', 406, 2000],
      ['/company/DE-start/DE123', 406, 2001],
      ['/company/FR-start/123456789', 406, 801],
      [`/company/IT-pa/${OPENAPI}`, 404, 602],
      [`/company/IT-splitpayment/${OPENAPI}`, 404, 502],
    ];
    for (const [path, status, error] of cases) {
      const a = await get(path);
      expect({ path, status: a.status }).toEqual({ path, status });
      if (error === null) expect(a.text).toBe('');
      else expect({ path, error: a.body.error, success: a.body.success, data: a.body.data }).toEqual({ path, error, success: false, data: null });
    }
  });

  it('agrees across endpoints on name, address, pec, activity and ids', async () => {
    const search = await get('/company/IT-search?province=RM&limit=8&dataEnrichment=start');
    const vats = [OPENAPI, ALFA_INDUSTRIE, ...data(search).map((r) => String(r.vatCode))];
    for (const vat of vats) {
      const start = first(await get(`/company/IT-start/${vat}`));
      const adv = first(await get(`/company/IT-advanced/${vat}`));
      const name = first(await get(`/company/IT-name/${vat}`));
      const address = first(await get(`/company/IT-address/${vat}`));
      const pec = first(await get(`/company/IT-pec/${vat}`));
      const sdi = first(await get(`/company/IT-sdicode/${vat}`));
      const full = obj(await get(`/company/IT-full/${vat}`));
      const marketing = obj(await get(`/company/IT-marketing/${vat}`));
      const office = (start.address as Json).registeredOffice as Json;
      for (const r of [adv, name, address]) {
        expect(r.companyName).toBe(start.companyName);
        expect(r.id).toBe(start.id);
        expect(((r.address as Json).registeredOffice as Json).town).toBe(office.town);
      }
      expect(address.address).toEqual(start.address);
      expect(adv.address).toEqual(start.address);
      expect(sdi).toEqual({ sdiCode: start.sdiCode, id: start.id });
      expect(pec.pec).toBe(adv.pec);
      expect(full.pec).toBe(adv.pec);
      expect(marketing.pec).toBe(adv.pec);
      const details = full.companyDetails as Json;
      expect(details).toMatchObject({ vatCode: vat, companyName: start.companyName, reaCode: adv.reaCode, cciaa: adv.cciaa });
      expect(marketing.companyDetails).toEqual(details);
      const fullAddress = full.address as Json;
      expect(fullAddress.town).toBe(office.town);
      expect(fullAddress.zipCode).toBe(office.zipCode);
      expect(((full.atecoClassification as Json).ateco2022 as Json).code).toBe(((adv.atecoClassification as Json).ateco2022 as Json).code);
      const holders = (full.shareholders as Json[]).map((h) => (h.shareholdersInformation as Json[])[0].taxCode);
      expect(holders).toEqual((adv.shareHolders as Json[]).map((h) => h.taxCode));
      // the composite shapes hold the contract's sections
      expect(Object.keys(obj(await get(`/company/IT-stakeholders/${vat}`)))).toEqual(
        expect.arrayContaining(['companyDetails', 'address', 'branches', 'managers', 'shareholders', 'corporateGroups', 'subsidiaries', 'employees', 'employeesStatistic']),
      );
      expect(Object.keys(full)).toEqual(
        expect.arrayContaining(['legalForm', 'companyDates', 'marketable', 'debts', 'productionValue', 'coverageRatios', 'financialStability', 'rae', 'sae', 'allOffices']),
      );
    }
  });

  it('generates valid checksums for every VAT number and fiscal code it hands out', async () => {
    const search = await get('/company/IT-search?activityStatus=ATTIVA&limit=40&dataEnrichment=start');
    expect(data(search).length).toBe(40);
    for (const rec of data(search)) {
      const vat = String(rec.vatCode);
      expect(isValidItalianVat(vat)).toBe(true);
      const full = obj(await get(`/company/IT-full/${vat}`));
      for (const m of full.managers as Json[]) {
        if (typeof m.companyName === 'string') expect(isValidItalianVat(String(m.taxCode))).toBe(true);
        else expect({ cf: m.taxCode, ok: isValidFiscalCode(String(m.taxCode)) }).toEqual({ cf: m.taxCode, ok: true });
      }
      for (const h of full.shareholders as Json[]) {
        const info = (h.shareholdersInformation as Json[])[0];
        expect(isValidFiscalCode(String(info.taxCode))).toBe(true);
      }
      for (const s of full.subsidiaries as Json[]) expect(isValidItalianVat(String(s.taxCode))).toBe(true);
    }
  });
});

describe('ownership', () => {
  const companyHolders = async (vat: string): Promise<Json[]> => data(await get(`/company/IT-shareholders/${vat}`)).filter((h) => h.companyName !== null);

  it('walks the ALFA group up three levels to its top', async () => {
    const chain: string[] = [];
    let current = ALFA_TRASPORTI;
    for (let i = 0; i < 10; i++) {
      const holders = await companyHolders(current);
      if (holders.length === 0) break;
      current = String(holders[0].taxCode);
      chain.push(current);
    }
    expect(chain).toEqual([ALFA_LOGISTICA, ALFA_INDUSTRIE, ALFA_HOLDING]);
    const sandbox = (await control('GET', 'sandbox-companies')) as Json[];
    expect(sandbox.find((c) => c.vatCode === ALFA_TRASPORTI)?.ownershipChain).toEqual(chain);
  });

  it('lists subsidiaries and affiliates consistently with the shareholders', async () => {
    const industrie = obj(await get(`/company/IT-stakeholders/${ALFA_INDUSTRIE}`));
    expect((industrie.subsidiaries as Json[]).map((s) => s.taxCode)).toContain(ALFA_LOGISTICA);
    expect(industrie.affiliateCompanies).toMatchObject({ taxCode: BETA, percentShare: 50 });
    const beta = data(await get(`/company/IT-shareholders/${BETA}`));
    expect(beta.map((h) => h.taxCode).sort()).toEqual([ALFA_INDUSTRIE, DELTA].sort());
    const group = obj(await get(`/company/IT-stakeholders/${ALFA_TRASPORTI}`)).corporateGroups as Json;
    expect(group).toMatchObject({ belongsToGroup: true, holdingCompanyName: 'GRUPPO ALFA HOLDING S.P.A.' });
  });

  it('has company shareholders that are emulated companies, in both directions, and chains end', async () => {
    const search = await get('/company/IT-search?activityStatus=ATTIVA&limit=200&dataEnrichment=shareholders');
    const withCompanyHolders = data(search).filter((r) => (r.shareHolders as Json[]).some((h) => h.companyName !== null));
    expect(withCompanyHolders.length).toBeGreaterThan(5);
    for (const rec of withCompanyHolders.slice(0, 12)) {
      let current = String(rec.vatCode);
      for (let hops = 0; ; hops++) {
        expect(hops).toBeLessThanOrEqual(4);
        const holders = await companyHolders(current);
        if (holders.length === 0) break;
        const parent = holders[0];
        const parentVat = String(parent.taxCode);
        const parentStart = first(await get(`/company/IT-start/${parentVat}`));
        expect(parentStart.companyName).toBe(parent.companyName);
        const stake = obj(await get(`/company/IT-stakeholders/${parentVat}`));
        const pct = Number(parent.percentShare);
        if (pct > 50) expect((stake.subsidiaries as Json[]).map((s) => s.taxCode)).toContain(current);
        current = parentVat;
      }
    }
  });

  it('computes beneficial owners along the chain', async () => {
    const owners = data(await get(`/company/IT-ubo/${OPENAPI}`));
    expect(owners.map((o) => o.taxCode).sort()).toEqual(['DLCSHN77S29Z114J', 'SCRLCU73R02H501H']);
  });
});

describe('slow requests and callbacks', () => {
  afterEach(async () => {
    await control('POST', 'company/slow', {});
    await control('POST', 'clock', { mode: 'real' });
  });

  /** Until a slow GET is held, waiting for its dataset (its wait is a job on the emulator's clock). */
  async function untilGetWaits(): Promise<void> {
    await waitFor(
      async () => ((await control('GET', 'clock')) as { jobs: Array<{ label: string }> }).jobs.some((j) => j.label.endsWith(' wait')),
      'a slow GET waiting on the clock',
      {
        every: 1,
      },
    );
  }

  it('a GET waits for its dataset, up to the wait, then answers 302 → IT-check_id, PENDING until ready; the 302 is charged, the poll is free', async () => {
    const direct = obj(await get(`/company/IT-aml/${ALFA_INDUSTRIE}`));
    // The dataset is ready when the test moves the emulator's clock, not after a real 300 ms.
    await control('POST', 'clock', { mode: 'manual' });
    expect(await control('POST', 'company/slow', { ms: 1300, waitMs: 100 })).toEqual({ prepareMs: 1300, waitMs: 100, datasets: {} });
    await control('DELETE', 'calls');
    const held = get(`/company/IT-aml/${ALFA_INDUSTRIE}`);
    await untilGetWaits();
    await control('POST', 'clock', { advanceMs: 100 });
    const first302 = await held;
    expect(first302.status).toBe(302);
    // 1.2 s of preparation left.
    expect(first302.headers['retry-after']).toBe('2');
    const pending = first302.body.data as Json;
    expect(first302.body).toMatchObject({ success: true, message: '', error: null, data: { state: 'PENDING' } });
    expect(String(pending.id)).toMatch(/^[0-9a-f]{24}$/);
    const location = String(first302.headers.location);
    expect(location).toBe(`${emu.url}/company/IT-check_id/${String(pending.id)}`);
    const poll = await get(location.slice(emu.url.length));
    expect(poll.status).toBe(200);
    expect(poll.body.data).toEqual({ state: 'PENDING', id: pending.id });
    const other = (await control('POST', 'tokens', { owner: 'someone-else@example.com' })) as { token: string };
    expect((await get(location.slice(emu.url.length), other.token)).body).toMatchObject({ success: false, error: 244 });
    expect(await control('POST', 'company/advance', { ms: 1200 })).toEqual({ pending: 0 });
    const done = await get(location.slice(emu.url.length));
    expect(done.body.data).toEqual(direct);
    const calls = (await control('GET', 'calls')) as CallRecord[];
    expect(calls.map((c) => [c.status, c.price])).toEqual([
      [302, 0.9],
      [200, 0],
      [404, 0],
      [200, 0],
    ]);
  });

  it('a GET whose dataset is ready within the wait answers it then, once charged, with no 302', async () => {
    const direct = obj(await get(`/company/IT-stakeholders/${ALFA_INDUSTRIE}`));
    await control('POST', 'clock', { mode: 'manual' });
    await control('POST', 'company/slow', { ms: 300 });
    await control('DELETE', 'calls');
    const held = get(`/company/IT-stakeholders/${ALFA_INDUSTRIE}`);
    await untilGetWaits();
    expect(await control('POST', 'clock', { advanceMs: 299 })).toMatchObject({ ran: 0 });
    expect(await control('POST', 'clock', { advanceMs: 1 })).toMatchObject({ ran: 1 });
    const answer = await held;
    expect(answer.status).toBe(200);
    expect(answer.body.data).toEqual(direct);
    // `complete` ends the wait too.
    const again = get(`/company/IT-stakeholders/${ALFA_INDUSTRIE}`);
    await untilGetWaits();
    expect(await control('POST', 'company/complete', {})).toEqual({ completed: 1 });
    expect((await again).status).toBe(200);
    const calls = (await control('GET', 'calls')) as CallRecord[];
    expect(calls.map((c) => [c.path, c.status, c.price])).toEqual([
      [`/IT-stakeholders/${ALFA_INDUSTRIE}`, 200, 0.5],
      [`/IT-stakeholders/${ALFA_INDUSTRIE}`, 200, 0.5],
    ]);
  });

  it('a POST calls back after the same preparation time', async () => {
    const receiver = await startReceiver();
    try {
      await control('POST', 'clock', { mode: 'manual' });
      await control('POST', 'company/slow', { ms: 300 });
      const posted = await call('POST', `/company/IT-stakeholders/${ALFA_INDUSTRIE}`, { body: { callback: { url: receiver.url } } });
      expect(posted.body.data).toMatchObject({ state: 'PENDING' });
      expect(await control('POST', 'clock', { advanceMs: 299 })).toMatchObject({ ran: 0 });
      expect(receiver.deliveries).toHaveLength(0);
      // The advance answers once the callback was delivered.
      expect(await control('POST', 'clock', { advanceMs: 1 })).toMatchObject({ ran: 1 });
      expect(receiver.deliveries).toHaveLength(1);
    } finally {
      await receiver.close();
    }
  });

  it('sets the preparation time per dataset, and restores the defaults with {}', async () => {
    expect(await control('POST', 'company/slow', { dataset: 'IT-full', ms: 60_000, waitMs: 0 })).toEqual({ prepareMs: 0, waitMs: 0, datasets: { 'IT-full': 60_000 } });
    expect((await get(`/company/IT-full/${OPENAPI}`)).status).toBe(302);
    expect((await get(`/company/IT-aml/${OPENAPI}`)).status).toBe(200);
    expect(await control('POST', 'company/slow', { dataset: 'IT-full', ms: null })).toEqual({ prepareMs: 0, waitMs: 0, datasets: {} });
    expect((await get(`/company/IT-full/${OPENAPI}`)).status).toBe(200);
    expect(await control('POST', 'company/slow', { dataset: 'IT-start', ms: 1 })).toMatchObject({ error: expect.stringContaining('IT-stakeholders') });
    expect(await control('POST', 'company/slow', {})).toEqual({ prepareMs: 0, waitMs: 30_000, datasets: {} });
    await control('POST', 'company/reset', {});
  });

  it('moves pending requests forward with the control API', async () => {
    await control('POST', 'company/slow', { ms: 60_000, waitMs: 0 });
    const a = await get(`/company/IT-full/${OPENAPI}`);
    const path = String(a.headers.location).slice(emu.url.length);
    expect((await get(path)).body.data).toMatchObject({ state: 'PENDING' });
    await control('POST', 'company/advance', { ms: 61_000 });
    expect((obj(await get(path)).companyDetails as Json).vatCode).toBe(OPENAPI);
  });

  it('POST with a callback returns PENDING and delivers the dataset (JSON and form variants)', async () => {
    const receiver = await startReceiver();
    try {
      const json = await call('POST', `/company/IT-marketing/${OPENAPI}`, { body: { callback: { url: receiver.url, method: 'JSON', custom: { ref: 7 } } } });
      expect(json.status).toBe(200);
      expect(json.body.data).toMatchObject({ state: 'PENDING' });
      await receiver.arrived(1);
      const delivered = JSON.parse(receiver.deliveries[0].body) as Json;
      expect(((delivered.data as Json).companyDetails as Json).vatCode).toBe(OPENAPI);
      expect(delivered.custom).toEqual({ ref: 7 });
      const polled = await get(`/company/IT-check_id/${String((json.body.data as Json).id)}`);
      expect(polled.body.data).toEqual(delivered.data);

      const form = await call('POST', `/company/IT-stakeholders/${ALFA_LOGISTICA}`, { body: { callback: { url: receiver.url, method: 'POST', field: 'payload' } } });
      expect(form.status).toBe(200);
      await receiver.arrived(2);
      expect(receiver.deliveries[1].headers['content-type']).toBe('application/x-www-form-urlencoded');
      const payload = JSON.parse(new URLSearchParams(receiver.deliveries[1].body).get('payload') ?? '{}') as Json;
      expect(((payload.data as Json).companyDetails as Json).vatCode).toBe(ALFA_LOGISTICA);

      const noUrl = await call('POST', `/company/IT-full/${OPENAPI}`, { body: { callback: {} } });
      expect(noUrl.status).toBe(428);
      expect(noUrl.body.error).toBe(704);
      const noBody = await call('POST', `/company/IT-full/${OPENAPI}`, { body: {} });
      expect(noBody.body.error).toBe(704);
      expect((await call('POST', '/company/IT-full/12485671008', { body: {} })).body.error).toBe(241);
    } finally {
      await receiver.close();
    }
  });

  it('answers 400 to a body that is not JSON', async () => {
    const a = await call('POST', `/company/IT-full/${OPENAPI}`, { body: '{not json' });
    expect(a.status).toBe(400);
    expect(a.body.success).toBe(false);
  });
});

describe('IT-search', () => {
  const names = async (query: string): Promise<string[]> => {
    const a = await get(`/company/IT-search?${query}&dataEnrichment=name`);
    return a.status === 204 ? [] : data(a).map((r) => String(r.companyName));
  };

  it('filters by whole words, wildcards, province, legal form, status and shareholder', async () => {
    expect(await names('companyName=ALFA')).toEqual(
      expect.arrayContaining(['ALFA INDUSTRIE S.R.L.', 'ALFA LOGISTICA S.R.L.', 'ALFA TRASPORTI S.R.L.', 'GRUPPO ALFA HOLDING S.P.A.']),
    );
    expect(await names('companyName=ALF')).not.toContain('ALFA INDUSTRIE S.R.L.');
    expect(await names('companyName=ALFA*')).not.toContain('GRUPPO ALFA HOLDING S.P.A.');
    expect(await names('companyName=*ALFA*')).toContain('GRUPPO ALFA HOLDING S.P.A.');
    expect(await names('autocomplete=OPENA')).toEqual(['OPENAPI S.P.A.']);
    expect((await names(`shareHolderTaxCode=${ALFA_INDUSTRIE}`)).sort()).toEqual(['ALFA LOGISTICA S.R.L.', 'BETA SERVIZI S.R.L.']);
    expect(await names('legalFormCode=AS')).toContain('DELTA COSTRUZIONI DI ESPOSITO GIOVANNI & C. S.A.S.');
    expect(await names('activityStatus=CESSATA')).toContain('VECCHIA FORNACE DI BIANCHI & C. S.N.C.');
    const milan = await get('/company/IT-search?province=MI&dataEnrichment=start');
    for (const r of data(milan)) expect(((r.address as Json).registeredOffice as Json).province).toBe('MI');
    const ateco = await get('/company/IT-search?atecoCode=6201&dataEnrichment=advanced');
    for (const r of data(ateco)) expect(((r.atecoClassification as Json).ateco2022 as Json).code).toMatch(/^6201/);
    expect((await get('/company/IT-search?atecoCode=62.01')).status).toBe(204);
    const rich = await get('/company/IT-search?minEmployees=100&dataEnrichment=advanced');
    for (const r of data(rich)) expect(Number(((r.balanceSheets as Json).all as Json[]).find((y) => y.employees !== null)?.employees)).toBeGreaterThanOrEqual(100);
  });

  it('filters by distance', async () => {
    const near = await get('/company/IT-search?lat=45.4642&long=9.19&radius=15000&dataEnrichment=start');
    expect(near.status).toBe(200);
    for (const r of data(near)) {
      const [lon, lat] = (((r.address as Json).registeredOffice as Json).gps as { coordinates: [number, number] }).coordinates;
      expect(Math.abs(lat - 45.4642)).toBeLessThan(0.2);
      expect(Math.abs(lon - 9.19)).toBeLessThan(0.25);
    }
  });

  it('pages with skip and limit, returns ids by default', async () => {
    const all = data(await get('/company/IT-search?activityStatus=ATTIVA&limit=20'));
    expect(all).toHaveLength(20);
    expect(Object.keys(all[0])).toEqual(['id']);
    const page = data(await get('/company/IT-search?activityStatus=ATTIVA&skip=10&limit=5'));
    expect(page).toEqual(all.slice(10, 15));
  });

  it('answers dry runs with count and cost, uncharged', async () => {
    await control('DELETE', 'calls');
    const dry = await get('/company/IT-search?province=RM&dryRun=1');
    expect(dry.status).toBe(200);
    expect(dry.body).toMatchObject({ success: true, cost: 0.01 });
    const count = Number(dry.body.count);
    const real = await get('/company/IT-search?province=RM');
    expect(data(real)).toHaveLength(count);
    const calls = (await control('GET', 'calls')) as CallRecord[];
    expect(calls.map((c) => c.price)).toEqual([0, 0.01]);
  });

  it('refuses no filter (309), unknown keys (308), bad lat (422 311) and bad pec (316)', async () => {
    expect((await get('/company/IT-search')).body.error).toBe(309);
    expect((await get('/company/IT-search?limit=5')).body.error).toBe(309);
    expect((await get('/company/IT-search?color=red')).body.error).toBe(308);
    const lat = await get('/company/IT-search?lat=95&long=10');
    expect([lat.status, lat.body.error]).toEqual([422, 311]);
    expect((await get('/company/IT-search?pec=nope')).body.error).toBe(316);
  });
});

describe('monitor', () => {
  it('creates, lists, simulates a check that fires the callback, and deletes', async () => {
    const receiver = await startReceiver();
    const token = await newToken({ owner: 'monitor@example.com' });
    try {
      expect((await get('/company/monitor', token)).body.error).toBe(1200);
      const created = await call('POST', '/company/monitor', { token, body: { code: OPENAPI, dataset: 'IT-advanced', monitoredFields: ['pec'], callback: { url: receiver.url } } });
      expect(created.status).toBe(200);
      const rec = obj(created);
      expect(rec).toMatchObject({
        code: OPENAPI,
        dataset: 'IT-advanced',
        monitoredFields: ['pec'],
        owner: 'monitor@example.com',
        companyName: 'OPENAPI S.P.A.',
        vatCode: OPENAPI,
        latestDataset: null,
        autorenew: true,
      });
      expect(rec.callback).toMatchObject({ url: receiver.url, method: 'JSON', field: 'data' });
      const list = data(await get('/company/monitor', token));
      expect(list.map((m) => m.id)).toEqual([rec.id]);
      expect((await get(`/company/monitor/${String(rec.id)}`)).status).toBe(404); // another owner

      const checked = obj(await get(`/company/monitor/${String(rec.id)}?callback`, token));
      expect(checked.updatedFields).toEqual({ pec: 'openapi@legalmail.it' });
      expect((checked.latestDataset as Json).vatCode).toBe(OPENAPI);
      await receiver.arrived(1);
      const delivered = JSON.parse(receiver.deliveries[0].body) as Json;
      expect((delivered.data as Json).updatedFields).toEqual({ pec: 'openapi@legalmail.it' });

      const deleted = await call('DELETE', `/company/monitor/${String(rec.id)}`, { token });
      expect(deleted.body).toEqual({ data: [], success: true, message: '1 deleted monitor', error: null });
      expect((await get(`/company/monitor/${String(rec.id)}`, token)).body.error).toBe(1202);
    } finally {
      await receiver.close();
    }
  });

  it('validates the request with the vendor numbers', async () => {
    const post = async (body: unknown): Promise<[number, unknown]> => {
      const a = await call('POST', '/company/monitor', { body });
      return [a.status, a.body.error];
    };
    expect(await post({ dataset: 'IT-start' })).toEqual([428, 1209]);
    expect(await post({ code: OPENAPI })).toEqual([428, 1206]);
    expect(await post({ code: OPENAPI, dataset: 'IT-nothing' })).toEqual([404, 1207]);
    expect(await post({ code: OPENAPI, dataset: 'IT-name', monitoredFields: [] })).toEqual([406, 1208]);
    expect(await post({ code: OPENAPI, dataset: 'IT-name', monitoredFields: ['pec'] })).toEqual([406, 1210]);
    expect(await post({ code: OPENAPI, dataset: 'IT-name', callback: { url: 'ftp://x' } })).toEqual([406, 706]);
    expect(await post({ code: OPENAPI, dataset: 'IT-name', callback: { url: 'http://x', retry: 9 } })).toEqual([406, 740]);
    expect((await call('DELETE', '/company/monitor/xyz')).body.error).toBe(1204);
    expect((await call('DELETE', '/company/monitor')).body.error).toBe(1203);
  });
});

describe('other countries', () => {
  it('finds French companies by SIREN, SIRET, VAT and id alike', async () => {
    const bySiren = first(await get('/company/FR-start/851266429'));
    expect(bySiren.siretCode).toBe('85126642900014');
    expect(first(await get('/company/FR-start/FR80851266429'))).toEqual(bySiren);
    expect(first(await get('/company/FR-start/85126642900014'))).toEqual(bySiren);
    expect(first(await get(`/company/FR-start/${String(bySiren.id)}`))).toEqual(bySiren);
    const adv = first(await get('/company/FR-advanced/851266429'));
    expect(adv.companyName).toBe(bySiren.companyName);
    expect(adv.balanceSheets).toBeDefined();
  });

  it('answers every country shape, WW-* for any ISO country, and EU-start VIES-style', async () => {
    const de = first(await get('/company/DE-start/DE811115368'));
    expect(de).toMatchObject({ vatCode: 'DE811115368', activityStatus: 'ACTIVE' });
    expect(first(await get(`/company/DE-advanced/${String(de.id)}`))).toMatchObject({ companyName: de.companyName, contacts: expect.any(Object) });
    expect(first(await get(`/company/DE-start/${encodeURIComponent(String(de.companyNumber))}`)).vatCode).toBe('DE811115368');
    for (const [country, id] of [
      ['ES', 'A95929659'],
      ['PT', '500273170'],
      ['GB', '226312538'],
      ['BE', '0836159992'],
      ['AT', 'ATU22852606'],
      ['CH', 'CHE-108.167.035'],
      ['PL', '6462441581'],
    ] as const) {
      const a = await get(`/company/${country}-start/${encodeURIComponent(id)}`);
      expect({ country, status: a.status }).toEqual({ country, status: 200 });
      expect(((first(a).address as Json).registeredOffice as Json).country).toBe(country);
    }
    const ww = first(await get('/company/WW-top/LT/300556523'));
    expect(ww).toMatchObject({ markers: expect.any(Array), nationalClassification: expect.any(Object) });
    const wwIt = first(await get(`/company/WW-start/IT/${OPENAPI}`));
    expect(wwIt).toMatchObject({ companyName: 'OPENAPI S.P.A.', vatCode: `IT${OPENAPI}` });
    expect(first(await get(`/company/EU-start/IT${OPENAPI}`))).toEqual({
      valid: true,
      formatValid: true,
      countryCode: 'IT',
      vatCode: OPENAPI,
      companyName: 'OPENAPI S.P.A.',
      companyAddress: 'VIALE F TOMMASO MARINETTI 221, 00143 ROMA (RM)',
    });
    expect(first(await get('/company/EU-start/IT12485671008')).valid).toBe(false);
    expect((await get('/company/EU-start/US123456789')).body.error).toBe(401);
  });

  it('serves the other lookups', async () => {
    expect(first(await get(`/company/IT-closed/${CEASED}`)).taxCodeCeased).toBe(true);
    expect(first(await get(`/company/IT-closed/${CEASED}?date=2020-01-01`)).taxCodeCeased).toBe(false);
    expect(first(await get(`/company/IT-closed/${OPENAPI}`)).taxCodeCeased).toBe(false);
    expect(first(await get(`/company/IT-vatgroup/${OPENAPI}`))).toEqual({ vatGroupParticipation: false, isVatGroupLeader: false, registryOk: true });
    expect(first(await get(`/company/IT-vatgroup/${OPENAPI}?taxCode=${OPENAPI}`))).toMatchObject({ taxCodeVatCodeConsistent: true });
    expect(first(await get('/company/IT-pa/08567891000')).pa).toBe(true);
    expect(first(await get('/company/IT-splitpayment/08567891000')).taxCode).toBe('08567891000');
    expect(data(await get('/company/IT-legalforms')).length).toBeGreaterThan(50);
    expect(data(await get('/company/IT-legalforms/SP'))).toEqual([{ code: 'SP', description: "SOCIETA' PER AZIONI" }]);
  });
});

describe('control API', () => {
  afterEach(async () => {
    await control('DELETE', 'faults');
    await control('POST', 'latency', { area: 'company', ms: 0 });
    await control('POST', 'callbacks', { enabled: true });
  });

  it('lists the sandbox companies', async () => {
    const list = (await control('GET', 'sandbox-companies')) as Json[];
    expect(list.length).toBeGreaterThanOrEqual(10);
    for (const c of list) {
      expect(isValidItalianVat(String(c.vatCode))).toBe(true);
      expect((await get(`/company/IT-start/${String(c.vatCode)}`)).status).toBe(200);
    }
    expect(list.map((c) => c.legalForm)).toEqual(expect.arrayContaining(['SP', 'SR', 'SU', 'AS', 'SN', 'OO', 'DI', 'RS']));
    expect(list.find((c) => c.vatCode === CEASED)?.activityStatus).toBe('CESSATA');
  });

  it('adds latency per area', async () => {
    await control('POST', 'latency', { area: 'company', ms: 150 });
    const t0 = Date.now();
    await get(`/company/IT-start/${OPENAPI}`);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(140);
  });

  it('injects status faults for the next N calls, optionally by path prefix', async () => {
    await control('POST', 'faults', { area: 'company', pathPrefix: '/IT-advanced', status: 503, retryAfter: 2, count: 2 });
    expect((await get(`/company/IT-start/${OPENAPI}`)).status).toBe(200);
    const f1 = await get(`/company/IT-advanced/${OPENAPI}`);
    expect(f1.status).toBe(503);
    expect(f1.headers['retry-after']).toBe('2');
    expect((await get(`/company/IT-advanced/${OPENAPI}`)).status).toBe(503);
    expect((await get(`/company/IT-advanced/${OPENAPI}`)).status).toBe(200);
    await control('POST', 'faults', { area: 'company', status: 429, count: 1 });
    expect((await get(`/company/IT-start/${OPENAPI}`)).status).toBe(429);
  });

  it('hangs calls to provoke client timeouts', async () => {
    await control('POST', 'faults', { area: 'company', hangMs: 400, count: 1 });
    await expect(call('GET', `/company/IT-start/${OPENAPI}`, { timeoutMs: 100 })).rejects.toThrow();
    expect((await get(`/company/IT-start/${OPENAPI}`)).status).toBe(200);
    // The hung call ends (and is logged) before the next test reads the call log.
    await untilInFlight(emu.url, 'none');
  });

  it('switches callback delivery off and shows the delivery log', async () => {
    const receiver = await startReceiver();
    try {
      await control('DELETE', 'callbacks');
      await control('POST', 'callbacks', { enabled: false });
      await call('POST', `/company/IT-full/${OPENAPI}`, { body: { callback: { url: receiver.url } } });
      await control('POST', 'company/complete', {});
      // Delivery off is decided as the request completes: no attempt is logged, nothing is on its way.
      expect(((await control('GET', 'callbacks')) as Json[]).filter((d) => d.url === receiver.url)).toEqual([]);
      expect(receiver.deliveries).toHaveLength(0);
      await control('POST', 'callbacks', { enabled: true });
      await call('POST', `/company/IT-full/${OPENAPI}`, { body: { callback: { url: receiver.url } } });
      await control('POST', 'company/complete', {});
      await receiver.arrived(1);
      const log = (await control('GET', 'callbacks')) as Json[];
      expect(log.some((d) => d.url === receiver.url && d.status === 200)).toBe(true);
    } finally {
      await receiver.close();
    }
  });

  it('clears the call log, answers unknown control paths with 404 and has a health check', async () => {
    await get(`/company/IT-start/${OPENAPI}`);
    await control('DELETE', 'calls');
    expect(await control('GET', 'calls')).toEqual([]);
    expect((await call('POST', '/_emulator/company/nothing', { token: null, body: {} })).status).toBe(404);
    expect((await call('GET', '/_emulator/nothing', { token: null })).status).toBe(404);
    expect((await call('GET', '/healthz', { token: null })).body).toEqual({ ok: true, areas: ['company'] });
  });
});

describe('default modules', () => {
  it('loads every area when no modules are given', async () => {
    const full = await startEmulator({ latencyMs: { risk: 1 } });
    try {
      const health = await request(`${full.url}/healthz`);
      expect(((await health.body.json()) as Json).areas).toEqual(['company', 'risk', 'pec', 'pecmassiva', 'cap', 'oauth', 'invoice']);
      const res = await request(`${full.url}/company/IT-start/${OPENAPI}`, { headers: { authorization: `Bearer ${full.tokens.defaultToken}` } });
      expect(res.statusCode).toBe(200);
      await res.body.dump();
    } finally {
      await full.close();
    }
  });
});
