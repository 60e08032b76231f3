/**
 * The emulator's risk area, driven over HTTP. A tiny local harness (node:http) stands in for the
 * emulator server: it strips the `/risk` prefix, matches the module's route patterns (with and
 * without a trailing slash), parses JSON and form bodies, and maps the bearer token to an owner
 * (`<token>@example.com`), so that per-owner isolation can be tested too.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'undici';
import type { AreaModule, EmuRequest, EmuResponse, Route } from '../../../emulator/core.ts';
import { callbackSettings } from '../../../emulator/callbacks.ts';
import { isPdf, renderPdf } from '../../../emulator/pdf.ts';
import { createRiskModule } from '../../../emulator/risk/index.ts';
import { evidenceFormat } from '../../../emulator/risk/kyc.ts';
import { Scheduler } from '../../../emulator/scheduler.ts';
import { startReceiver, type Delivery, type Receiver } from '../../support/receiver.ts';
import { track } from '../../support/servers.ts';

// ---------------------------------------------------------------- harness

interface Harness {
  url: string;
  module: AreaModule;
  close(): Promise<void>;
}

function match(route: Route, path: string): Record<string, string> | null {
  const want = route.pattern.split('/').filter(Boolean);
  const got = path.split('/').filter(Boolean);
  if (want.length !== got.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < want.length; i++) {
    const w = want[i] ?? '';
    const g = got[i] ?? '';
    if (w.startsWith(':')) params[w.slice(1)] = decodeURIComponent(g);
    else if (w !== g) return null;
  }
  return params;
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

async function startHarness(module: AreaModule): Promise<Harness> {
  const server: Server = createServer((req, res) => {
    void (async () => {
      const raw = await readBody(req);
      const url = new URL(req.url ?? '/', 'http://localhost');
      const path = url.pathname.replace(/^\/risk/, '') || '/';
      const method = req.method ?? 'GET';
      let body: unknown;
      const type = req.headers['content-type'] ?? '';
      if (raw.length > 0 && type.includes('json')) body = JSON.parse(raw.toString('utf8')) as unknown;
      else if (raw.length > 0 && type.includes('urlencoded')) body = Object.fromEntries(new URLSearchParams(raw.toString('utf8')));
      const token = (req.headers.authorization ?? '').replace(/^Bearer\s+/i, '') || 'emulator-token';
      for (const route of module.routes) {
        if (route.method !== method) continue;
        const params = match(route, path);
        if (!params) continue;
        const emuReq: EmuRequest = {
          area: 'risk',
          method,
          path,
          query: url.searchParams,
          headers: req.headers,
          body,
          rawBody: raw,
          token: { token, scopes: ['*'], credit: 1000, owner: `${token}@example.com` },
          baseUrl: `http://${req.headers.host ?? 'localhost'}/risk`,
        };
        const out: EmuResponse = await route.handler(emuReq, params);
        const headers: Record<string, string> = { ...(out.headers ?? {}) };
        if (out.json !== undefined) {
          headers['content-type'] = 'application/json';
          res.writeHead(out.status, headers).end(JSON.stringify(out.json));
        } else {
          headers['content-type'] = out.contentType ?? 'application/octet-stream';
          res.writeHead(out.status, headers).end(out.body ?? '');
        }
        return;
      }
      res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ success: false, message: 'no route', error: 0, data: null }));
    })().catch((err: unknown) => {
      res.writeHead(500).end(String(err));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/risk`,
    module,
    close: async () => {
      module.close?.();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

// ---------------------------------------------------------------- callback receiver

/** A delivery's JSON payload: the body, or the form field holding it (named in `field`). */
function payloadOf(d: Delivery): Record<string, unknown> {
  if ((d.headers['content-type'] ?? '').includes('json')) return JSON.parse(d.body) as Record<string, unknown>;
  let payload: Record<string, unknown> = {};
  for (const [k, v] of new URLSearchParams(d.body)) payload = { field: k, ...(JSON.parse(v) as Record<string, unknown>) };
  return payload;
}

/** The first delivery to `path` whose payload `pred` accepts (any, without `pred`), with its payload. */
async function delivered(path: string, pred: (payload: Record<string, unknown>) => boolean = () => true): Promise<Delivery & { payload: Record<string, unknown> }> {
  const d = await receiver.find((r) => r.path === path && pred(payloadOf(r)));
  return { ...d, payload: payloadOf(d) };
}

// ---------------------------------------------------------------- client helpers

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  json: Record<string, unknown> & { data: unknown; success: boolean; message: string; error: number | null };
  bytes: Buffer;
}

async function call(base: string, method: string, path: string, body?: unknown, opts: { token?: string; headers?: Record<string, string> } = {}): Promise<Answer> {
  const res = await request(`${base}${path}`, {
    method: method as 'GET',
    headers: {
      authorization: `Bearer ${opts.token ?? 'alice'}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...(opts.headers ?? {}),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const bytes = Buffer.from(await res.body.arrayBuffer());
  const isJson = String(res.headers['content-type'] ?? '').includes('json');
  return {
    status: res.statusCode,
    headers: res.headers,
    json: isJson ? (JSON.parse(bytes.toString('utf8')) as Answer['json']) : ({} as Answer['json']),
    bytes,
  };
}

const data = (a: Answer): Record<string, unknown> => a.json.data as Record<string, unknown>;
const b64pdf = (title: string): string => renderPdf(title, ['scansione']).toString('base64');

/** A fiscal code with a valid check letter (Mario Rossi, Roma, 1 Jan 1980). */
const CF = 'RSSMRA80A01H501U';
const VAT = '12485671007';

/** A valid IT-crif-azienda body (Openapi S.p.A., its legal representative Mario Rossi). */
function companyBody(): Record<string, unknown> {
  const { email: _e, ...person } = personBody();
  void _e;
  return {
    company_name: 'Openapi',
    company_legal_form: 'SPA',
    company_tax_code: VAT,
    company_vat_number: VAT,
    company_sdi: 'ABC1234',
    company_address: 'Via Marinetti',
    company_street_number: '2',
    company_city: 'Roma',
    company_postal_code: '00128',
    company_province: 'RM',
    company_country: 'Italia',
    ...person,
    company_registration_report_file: b64pdf('visura'),
  };
}

function personBody(callbackUrl?: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    first_name: 'Mario',
    last_name: 'Rossi',
    email: 'm.rossi@example.com',
    birth_date: '1980-01-01',
    gender: 'M',
    fiscal_code: CF,
    birth_city: 'Roma',
    birth_province: 'RM',
    birth_country: 'Italia',
    residence_address: 'Via Roma',
    residence_street_number: '2',
    residence_city: 'Terni',
    residence_postal_code: '05100',
    residence_province: 'TR',
    residence_country: 'Italia',
    document_type: 'IDENTITY_CARD',
    document_number: 'CA12345AB',
    release_date: '2020-12-01',
    expiration_date: '2030-12-01',
    release_city: 'Terni',
    release_province: 'TR',
    public_authority: 'Comune',
    document_file: b64pdf('documento'),
    health_insurance_card_file: b64pdf('tessera sanitaria'),
    ...(callbackUrl ? { callback: { url: callbackUrl, method: 'JSON', headers: { 'x-session': 's1' } } } : {}),
    ...extra,
  };
}

// ---------------------------------------------------------------- tests

let receiver: Receiver;
/** Every harness is closed after its test. */
const harnesses = track();

async function risk(opts?: { completeAfterMs?: number; scheduler?: Scheduler }): Promise<Harness> {
  const h = await startHarness(createRiskModule(opts));
  return harnesses(h);
}

beforeAll(async () => {
  receiver = await startReceiver();
  callbackSettings.setEnabled(true);
});

afterAll(async () => {
  await receiver.close();
});

describe('credit scores', () => {
  it('are deterministic per company and consistent across levels', async () => {
    const { url } = await risk();
    const a = await call(url, 'GET', `/IT-creditscore-start/${VAT}`);
    const b = await call(url, 'GET', `/IT-creditscore-start/${VAT}`);
    expect(a.status).toBe(200);
    expect(a.json).toMatchObject({ success: true, message: '', error: null });
    expect(Object.keys(data(a))).toEqual(['organization_name', 'requested_at', 'risk_score', 'tax', 'vat', 'id', 'company_id', 'time_stamp']);
    expect(data(a).risk_score).toBe(data(b).risk_score);
    expect(data(a).organization_name).toBe('OPENAPI S.P.A.');
    expect(data(a).id).toMatch(/^[0-9a-f]{24}$/);

    for (const vat of [VAT, '01234567897', '00743110157', '00488410010', '06363391001']) {
      const start = data(await call(url, 'GET', `/IT-creditscore-start/${vat}`));
      const adv = data(await call(url, 'GET', `/IT-creditscore-advanced/${vat}`));
      const adv2 = data(await call(url, 'GET', `/IT-creditscore-advanced/${vat}/`));
      const top = data(await call(url, 'GET', `/IT-creditscore-top/${vat}`));
      expect(['VERDE', 'GIALLO', 'ROSSO', 'GRIGIO']).toContain(start.risk_score);
      expect(String(adv.risk_score).split(' ')[0]).toBe(start.risk_score);
      expect({ ...adv, id: 0, requested_at: 0, time_stamp: 0 }).toEqual({ ...adv2, id: 0, requested_at: 0, time_stamp: 0 });
      expect(adv.risk_severity).toBeGreaterThanOrEqual(1);
      expect(adv.risk_severity).toBeLessThanOrEqual(990);
      expect(adv.rating).toMatch(/^(A|B|C)[123]$|^ND$/);
      expect(adv.company_id).toBe(start.company_id);
      expect(adv.organization_name).toBe(start.organization_name);
      const inner = top.data as Record<string, Record<string, unknown>>;
      expect(inner.credit_check).toEqual({
        operational_credit_limit: adv.operational_credit_limit,
        rating: adv.rating,
        risk_score: adv.risk_score,
        risk_score_description: adv.risk_score_description,
      });
      const history = inner.history as Record<string, Array<Record<string, unknown>>>;
      expect(history.operational_credit_limit).toHaveLength(12);
      expect(history.risk_score?.[11]).toMatchObject({ score: adv.risk_score });
      expect(history.public_rating?.[0]).toHaveProperty('balance_year');
      expect(inner.positions).toHaveProperty('positions');
      expect(inner.profiles).toHaveProperty('profiles');
      expect(top.vat).toBe(vat);
    }
  });

  it('accepts the company id and a personal tax code, and validates the identifier', async () => {
    const { url } = await risk();
    const start = data(await call(url, 'GET', `/IT-creditscore-start/${VAT}`));
    const byId = await call(url, 'GET', `/IT-creditscore-advanced/${String(start.company_id)}`);
    expect(byId.status).toBe(200);
    expect(data(byId).vat).toBe(VAT);
    const byCf = await call(url, 'GET', `/IT-creditscore-start/${CF}`);
    expect(byCf.status).toBe(200);
    expect(data(byCf).tax).toBe(CF);

    expect((await call(url, 'GET', '/IT-creditscore-start/12485671008')).json).toEqual({
      success: false,
      message: 'id, fiscal_code or tax_code not valid',
      error: 421,
      data: null,
    });
    expect((await call(url, 'GET', '/IT-creditscore-advanced/RSSMRA80A01H501X')).json).toMatchObject({ error: 425 });
    expect((await call(url, 'GET', '/IT-creditscore-top/ffffffffffffffffffffffff')).status).toBe(406);
    const missing = await call(url, 'GET', '/IT-creditscore-start');
    expect(missing.status).toBe(404);
    expect(missing.json).toEqual({ success: false, message: 'id, p.iva or cf required', error: 420, data: null });
    expect((await call(url, 'GET', '/IT-creditscore-top/')).json).toMatchObject({ error: 424 });
  });
});

describe('IT-verifica_cf', () => {
  it('answers validita, 406 for malformed, 428 when missing, and has a POST variant', async () => {
    const { url } = await risk();
    expect(data(await call(url, 'GET', `/IT-verifica_cf/${CF}`))).toEqual({ validita: true });
    expect(data(await call(url, 'GET', '/IT-verifica_cf/RSSMRA80A01H501X'))).toEqual({ validita: false });
    expect((await call(url, 'GET', '/IT-verifica_cf/ABC')).json).toEqual({ success: false, message: 'codice_fiscale not valid', error: 414, data: null });
    expect((await call(url, 'GET', '/IT-verifica_cf')).json).toMatchObject({ error: 413 });
    expect(data(await call(url, 'POST', '/IT-verifica_cf', { codice_fiscale: CF.toLowerCase() }))).toEqual({ validita: true });
    expect((await call(url, 'POST', '/IT-verifica_cf', {})).status).toBe(428);
  });
});

describe('person bureau request', () => {
  it('validates every field with the vendor numbers', async () => {
    const { url } = await risk();
    const { first_name: _drop, ...noName } = personBody();
    void _drop;
    expect((await call(url, 'POST', '/IT-bureau-persona', noName)).json).toEqual({ success: false, message: 'first_name required', error: 200, data: null });
    const noCard = personBody();
    delete noCard.health_insurance_card_file;
    expect((await call(url, 'POST', '/IT-bureau-persona', noCard)).json).toMatchObject({ message: 'health_insurance_card_file required', error: 223 });
    const badCf = await call(url, 'POST', '/IT-bureau-persona', personBody(undefined, { fiscal_code: 'RSSMRA80A01H501X' }));
    expect(badCf.status).toBe(406);
    expect(badCf.json).toEqual({ success: false, message: 'fiscal_code not valid', error: 205, data: null });
    expect((await call(url, 'POST', '/IT-bureau-persona', personBody(undefined, { gender: 'X' }))).json).toMatchObject({ error: 204 });
    expect((await call(url, 'POST', '/IT-bureau-persona', personBody(undefined, { document_type: 'BADGE' }))).json).toMatchObject({ error: 215 });
    expect((await call(url, 'POST', '/IT-bureau-persona', personBody(undefined, { email: 'nope' }))).json).toMatchObject({ error: 202 });
    const notPdf = await call(url, 'POST', '/IT-bureau-persona', personBody(undefined, { document_file: Buffer.from('hello').toString('base64') }));
    expect(notPdf.status).toBe(406);
    expect(notPdf.json).toMatchObject({ message: 'document_file not valid', error: 222 });
    expect((await call(url, 'GET', '/IT-bureau-persona')).json).toEqual({
      success: false,
      message: 'no requests linked to this username: alice@example.com',
      error: 300,
      data: null,
    });
  });

  it('runs processing → in_progress → complete with the delegation PDF and callbacks', async () => {
    const { url, module } = await risk({ completeAfterMs: 0 });
    const created = await call(url, 'POST', '/IT-bureau-persona', personBody(`${receiver.origin}/bureau`));
    expect(created.status).toBe(200);
    const rec = data(created);
    const id = String(rec.id);
    expect(id).toMatch(/^[0-9a-f]{24}$/);
    expect(rec).toMatchObject({ state: 'processing', owner: 'alice@example.com', fiscal_code: CF, delegation_file: `${id}_delega.pdf`, data: {} });
    expect(rec.creation_timestamp).toBe(rec.last_update_timestamp);
    expect(rec.document_file).toMatch(/^[0-9a-f]{32}\.pdf$/);
    expect(rec.health_insurance_card_file).toMatch(/^[0-9a-f]{32}\.pdf$/);
    expect(rec).not.toHaveProperty('signed_delegation_file');
    expect(rec.callback).toMatchObject({ url: `${receiver.origin}/bureau`, method: 'JSON', headers: { 'x-session': 's1' } });

    // The vendor path serves the same records.
    expect(data(await call(url, 'GET', `/IT-crif-persona/${id}`)).id).toBe(id);
    const list = await call(url, 'GET', '/IT-bureau-persona');
    expect(list.json.data).toEqual([
      { state: 'processing', creation_timestamp: rec.creation_timestamp, last_update_timestamp: rec.last_update_timestamp, owner: 'alice@example.com', id },
    ]);

    const delega = await call(url, 'GET', `/IT-bureau-persona/${id}/delega`);
    expect(delega.status).toBe(200);
    expect(delega.headers['content-type']).toBe('application/pdf');
    expect(isPdf(delega.bytes)).toBe(true);
    const text = delega.bytes.toString('latin1');
    expect(text).toContain('Mario Rossi');
    expect(text).toContain(CF);

    expect((await call(url, 'PATCH', `/IT-bureau-persona/${id}`, {})).json).toEqual({ success: false, message: 'signed_delegation_file required', error: 309, data: null });
    expect((await call(url, 'PATCH', `/IT-bureau-persona/${id}`, { signed_delegation_file: 'aGVsbG8=' })).status).toBe(406);
    const patched = await call(url, 'PATCH', `/IT-bureau-persona/${id}`, { signed_delegation_file: delega.bytes.toString('base64') });
    expect(patched.status).toBe(200);
    const inProgress = data(patched);
    expect(inProgress.state).toBe('in_progress');
    expect(inProgress.signed_delegation_file).toMatch(/\.pdf$/);
    expect(inProgress.delegation_file).toBe(`${id}_delega.pdf`);
    expect(Number(inProgress.last_update_timestamp)).toBeGreaterThan(Number(inProgress.creation_timestamp));
    const again = await call(url, 'PATCH', `/IT-bureau-persona/${id}`, { signed_delegation_file: delega.bytes.toString('base64') });
    expect(again.json).toEqual({ success: false, message: "you can't upload the delegation yet", error: 307, data: null });

    const cb1 = await delivered('/bureau', (p) => (p.data as Record<string, unknown>).state === 'in_progress');
    expect(cb1.headers['content-type']).toContain('application/json');
    expect(cb1.headers['x-session']).toBe('s1');
    expect(cb1.payload).toMatchObject({ success: true, message: '', error: null, data: { id, state: 'in_progress' } });

    // completeAfterMs 0: nothing happens by itself; advance completes it and delivers the callback.
    expect(await module.control?.pending?.({})).toMatchObject({ pending: [id] });
    expect(await module.control?.advance?.({ id })).toEqual({ advanced: [id] });
    const cb2 = await delivered('/bureau', (p) => (p.data as Record<string, unknown>).state === 'complete');
    const done = data(await call(url, 'GET', `/IT-bureau-persona/${id}`));
    expect(done.state).toBe('complete');
    expect(Object.keys(done.data as object).length).toBeGreaterThan(0);
    expect(cb2.payload.data).toEqual(done);
  });

  it('answers Wrong id 301 for a malformed id, 404 "no request found" for an unknown well-formed id or another owner', async () => {
    const { url } = await risk();
    const wrong = { success: false, message: 'Wrong id', error: 301, data: null };
    const malformed = await call(url, 'GET', '/IT-bureau-persona/xyz');
    expect(malformed.status).toBe(400);
    expect(malformed.json).toEqual(wrong);
    expect((await call(url, 'GET', '/IT-bureau-persona/xyz/delega')).json).toEqual(wrong);
    // A well-formed id that names no request: what the vendor answers (404, 302; PATCH 306), not the malformed-id answer.
    const notFound = { success: false, message: 'no request found', error: 302, data: null };
    const unknown = await call(url, 'GET', '/IT-bureau-persona/0123456789abcdef01234567');
    expect([unknown.status, unknown.json]).toEqual([404, notFound]);
    const unknownDelega = await call(url, 'GET', '/IT-bureau-persona/0123456789abcdef01234567/delega');
    expect([unknownDelega.status, unknownDelega.json]).toEqual([404, notFound]);
    const unknownPatch = await call(url, 'PATCH', '/IT-bureau-persona/0123456789abcdef01234567', { signed_delegation_file: b64pdf('x') });
    expect([unknownPatch.status, unknownPatch.json]).toEqual([404, { success: false, message: 'no request found', error: 306, data: null }]);
    const unknownCompany = await call(url, 'GET', '/IT-crif-azienda/0123456789abcdef01234567/delega');
    expect([unknownCompany.status, unknownCompany.json]).toEqual([404, { success: false, message: 'no request found', error: 313, data: null }]);
    const id = String(data(await call(url, 'POST', '/IT-bureau-persona', personBody())).id);
    const otherDelega = await call(url, 'GET', `/IT-bureau-persona/${id}/delega`, undefined, { token: 'bob' });
    expect([otherDelega.status, otherDelega.json]).toEqual([404, notFound]);
    const other = await call(url, 'GET', `/IT-bureau-persona/${id}`, undefined, { token: 'bob' });
    expect(other.status).toBe(404);
    expect(other.json).toEqual({ success: false, message: 'no request found', error: 302, data: null });
    expect((await call(url, 'GET', '/IT-bureau-persona', undefined, { token: 'bob' })).status).toBe(404);
  });

  it('answers the delegation download with 406 (303) until the delegation exists, then the PDF', async () => {
    const scheduler = new Scheduler({ mode: 'manual' });
    const h = await startHarness(createRiskModule({ scheduler, delegationAfterMs: 60_000 }));
    harnesses(h);
    const created = data(await call(h.url, 'POST', '/IT-bureau-persona', personBody()));
    const id = String(created.id);
    expect(created).not.toHaveProperty('delegation_file');
    const early = await call(h.url, 'GET', `/IT-bureau-persona/${id}/delega`);
    expect([early.status, early.json]).toEqual([406, { success: false, message: 'the delegation has not yet been created', error: 303, data: null }]);
    // The vendor's path for the same request says the same.
    expect((await call(h.url, 'GET', `/IT-crif-persona/${id}/delega`)).json).toMatchObject({ error: 303 });
    await scheduler.advance(59_999);
    expect((await call(h.url, 'GET', `/IT-bureau-persona/${id}/delega`)).status).toBe(406);
    await scheduler.advance(1);
    const ready = await call(h.url, 'GET', `/IT-bureau-persona/${id}/delega`);
    expect(ready.status).toBe(200);
    expect(isPdf(ready.bytes)).toBe(true);
    expect(data(await call(h.url, 'GET', `/IT-bureau-persona/${id}`)).delegation_file).toBe(`${id}_delega.pdf`);
    // The company request has its own number for the same answer.
    const company = await call(h.url, 'POST', '/IT-crif-azienda', companyBody());
    expect(company.status).toBe(200);
    expect((await call(h.url, 'GET', `/IT-crif-azienda/${String(data(company).id)}/delega`)).json).toEqual({
      success: false,
      message: 'the delegation has not yet been created',
      error: 314,
      data: null,
    });
    // The control API sets the delay too; 0 makes the form exist with the request.
    expect(await h.module.control?.timing?.({ delegationAfterMs: 0 })).toEqual({ completeAfterMs: 1500, delegationAfterMs: 0 });
    const now = String(data(await call(h.url, 'POST', '/IT-bureau-persona', personBody())).id);
    expect((await call(h.url, 'GET', `/IT-bureau-persona/${now}/delega`)).status).toBe(200);
  });

  it('completes on its own after completeAfterMs once the delegation is uploaded', async () => {
    // The module's clock is moved by hand: time passing is `advance`, not a sleep.
    const scheduler = new Scheduler({ mode: 'manual' });
    const { url } = await risk({ completeAfterMs: 150, scheduler });
    const id = String(data(await call(url, 'POST', '/IT-crif-persona/', personBody())).id);
    await scheduler.advance(300);
    expect(data(await call(url, 'GET', `/IT-crif-persona/${id}`)).state).toBe('processing');
    await call(url, 'PATCH', `/IT-crif-persona/${id}`, { signed_delegation_file: b64pdf('firmata') });
    await scheduler.advance(149);
    expect(data(await call(url, 'GET', `/IT-crif-persona/${id}`)).state).not.toBe('complete');
    await scheduler.advance(251);
    expect(data(await call(url, 'GET', `/IT-crif-persona/${id}`)).state).toBe('complete');
  });

  it('serves IT-crif-azienda with the same machinery', async () => {
    const { url } = await risk({ completeAfterMs: 0 });
    const company = companyBody();
    const noContact = { ...company, company_sdi: undefined };
    expect((await call(url, 'POST', '/IT-crif-azienda', noContact)).json).toMatchObject({ error: 201 });
    expect((await call(url, 'POST', '/IT-crif-azienda', { ...company, company_tax_code: '12485671008' })).json).toMatchObject({
      error: 212,
      message: 'company_tax_code not valid',
    });
    const rec = data(await call(url, 'POST', '/IT-crif-azienda', company));
    expect(rec).toMatchObject({ state: 'processing', company_name: 'Openapi' });
    expect(rec.company_registration_report_file).toMatch(/\.pdf$/);
    const delega = await call(url, 'GET', `/IT-crif-azienda/${String(rec.id)}/delega`);
    expect(delega.bytes.toString('latin1')).toContain('Openapi');
    expect((await call(url, 'GET', '/IT-crif-azienda/nope')).json).toMatchObject({ error: 312, message: 'Wrong id' });
  });
});

describe('patrimonial and report families', () => {
  it('creates, refuses the download before completion, and simulates completion with ?callback', async () => {
    const { url } = await risk({ completeAfterMs: 0 });
    expect((await call(url, 'POST', '/IT-report-persona/', {})).json).toEqual({ success: false, message: 'taxCode required.', error: 321, data: null });
    expect((await call(url, 'POST', '/IT-report-persona', { name: 'Mario', surname: 'Rossi', taxCode: 'RSSMRA80A01H501X' })).json).toEqual({
      success: false,
      message: 'taxCode not valid',
      error: 322,
      data: null,
    });
    expect((await call(url, 'GET', '/IT-patrimoniale-persona-top-supervisionato')).json).toMatchObject({ error: 300 });

    const body = {
      name: 'Mario',
      surname: 'Rossi',
      taxCode: CF,
      titlePdf: 'Il mio titolo',
      textPdf: 'piè di pagina',
      note: 'pratica 7',
      callback: { url: `${receiver.origin}/report`, method: 'POST', field: 'payload', headers: { 'x-k': 'v' } },
    };
    const created = await call(url, 'POST', '/IT-patrimoniale-persona-top-supervisionato/', body);
    expect(created.status).toBe(200);
    const rec = data(created);
    const id = String(rec.id);
    expect(Object.keys(rec)).toEqual(['name', 'surname', 'taxCode', 'callback', 'data', 'state', 'creation_timestamp', 'last_update_timestamp', 'owner', 'id']);
    expect(rec).toMatchObject({
      state: 'processing',
      taxCode: CF,
      callback: { url: `${receiver.origin}/report`, method: 'POST', field: 'payload', headers: { 'x-k': 'v' }, data: {} },
    });
    expect(rec.creation_timestamp).toBe(rec.last_update_timestamp);

    const got = data(await call(url, 'GET', `/IT-patrimoniale-persona-top-supervisionato/${id}`));
    expect(Object.keys(got)).toEqual(['taxCode', 'surname', 'name', 'callback', 'data', 'state', 'creationTimestamp', 'owner', 'namePdf', 'lastUpdateTimestamp', 'id']);
    expect(got.namePdf).toBe(`${id}.pdf`);

    const early = await call(url, 'GET', `/IT-patrimoniale-persona-top-supervisionato/${id}/download`);
    expect(early.status).toBe(406);
    expect(early.json).toEqual({ success: false, message: 'the pdf has not yet been created', error: 303, data: null });
    expect((await call(url, 'GET', '/IT-patrimoniale-persona-top-supervisionato/bad/download')).json).toMatchObject({ error: 301, message: 'Wrong id' });
    // Another family does not see the record.
    expect((await call(url, 'GET', `/IT-report-persona/${id}`)).status).toBe(404);

    const simulated = await call(url, 'GET', `/IT-patrimoniale-persona-top-supervisionato/${id}?callback`);
    expect(data(simulated).state).toBe('complete');
    const cb = await delivered('/report');
    expect(cb.headers['content-type']).toContain('application/x-www-form-urlencoded');
    expect(cb.headers['x-k']).toBe('v');
    expect(cb.payload.field).toBe('payload');
    expect(cb.payload).toMatchObject({ success: true, error: null, data: { id, state: 'complete', namePdf: `${id}.pdf` } });

    const pdf = await call(url, 'GET', `/IT-patrimoniale-persona-top-supervisionato/${id}/download`);
    expect(pdf.status).toBe(200);
    expect(pdf.headers['content-type']).toBe('application/pdf');
    expect(pdf.headers['content-disposition']).toContain(`${id}.pdf`);
    expect(isPdf(pdf.bytes)).toBe(true);
    expect(pdf.bytes.toString('latin1')).toContain('Il mio titolo');

    const list = await call(url, 'GET', '/IT-patrimoniale-persona-top-supervisionato');
    expect(list.json.data).toEqual([
      { state: 'complete', creation_timestamp: got.creationTimestamp, last_update_timestamp: expect.any(Number) as number, owner: 'alice@example.com', id },
    ]);
    expect((await call(url, 'GET', `/IT-patrimoniale-persona-top-supervisionato/${id}`, undefined, { token: 'bob' })).json).toMatchObject({ error: 302 });
  });

  it('takes company bodies on IT-report-azienda and completes after the delay', async () => {
    const { url } = await risk({ completeAfterMs: 100 });
    expect((await call(url, 'POST', '/IT-report-azienda', { taxCode: VAT })).json).toMatchObject({ error: 321, message: 'companyName required.' });
    expect((await call(url, 'POST', '/IT-report-azienda', { companyName: 'X', taxCode: 11111111112 })).json).toMatchObject({ error: 322 });
    const rec = data(
      await call(url, 'POST', '/IT-report-azienda-top', { companyName: 'Openapi', taxCode: Number(VAT), vatCode: VAT, callback: { url: `${receiver.origin}/azienda` } }),
    );
    expect(rec).toMatchObject({ companyName: 'Openapi', taxCode: VAT, vatCode: VAT, state: 'processing', callback: { method: 'POST', field: 'data' } });
    const cb = await delivered('/azienda');
    expect(cb.payload).toMatchObject({ field: 'data', data: { id: rec.id, state: 'complete', companyName: 'Openapi' } });
    expect((await call(url, 'GET', `/IT-report-azienda-top/${String(rec.id)}/download`)).status).toBe(200);
  });
});

describe('IT-negativita', () => {
  it('goes PENDING → COMPLETED, with detail, list and PDF', async () => {
    const { url, module } = await risk({ completeAfterMs: 0 });
    expect((await call(url, 'POST', '/IT-negativita', {})).json).toEqual({ success: false, message: 'cf_piva required', error: 411, data: null });
    expect((await call(url, 'POST', '/IT-negativita', { cf_piva: '123' })).json).toEqual({ success: false, message: 'cf_piva not valid', error: 412, data: null });
    const created = data(await call(url, 'POST', '/IT-negativita', { cf_piva: VAT, callback: { url: `${receiver.origin}/neg` } }));
    const id = String(created.id);
    expect(created).toMatchObject({ cf_piva: VAT, tipo: ['negativita'], status: 'PENDING', esito: null, soggetto: null, date_completion: null });
    expect(created.callback).toMatchObject({ method: 'JSON', field: 'data', retry: 0, scope: null, custom: null });
    expect((await call(url, 'GET', `/IT-negativita/${id}/dettaglio`)).json).toMatchObject({ error: 512 });
    expect((await call(url, 'GET', `/IT-richiesta/${id}/download`)).json).toMatchObject({ error: 502 });

    await module.control?.advance?.({});
    const cb = await delivered('/neg');
    expect(cb.payload).toMatchObject({ data: { id, status: 'COMPLETED', esito: { codice: 200, info: 'OK' } } });
    const detail = data(await call(url, 'GET', `/IT-negativita/${id}/dettaglio`));
    expect(Object.keys(detail)).toEqual(['presenzaPregiudizievoli', 'pregiudizievoli', 'presenzaProcedure', 'procedure', 'presenzaProtesti', 'protesti']);
    for (const [flag, list] of [
      ['presenzaProtesti', 'protesti'],
      ['presenzaProcedure', 'procedure'],
      ['presenzaPregiudizievoli', 'pregiudizievoli'],
    ] as const) {
      if (detail[flag] === false) expect(detail[list]).toBeNull();
      else expect(Array.isArray(detail[list])).toBe(true);
    }
    const record = data(await call(url, 'GET', `/IT-richiesta/${id}`));
    expect(record.soggetto).toMatchObject({ code: VAT, dettaglio_negativita: detail });
    const pdf = await call(url, 'GET', `/IT-richiesta/${id}/download`);
    expect(isPdf(pdf.bytes)).toBe(true);
    const list = await call(url, 'GET', '/IT-richiesta');
    expect(list.json.data).toEqual([{ id, cf_piva: VAT, status: 'COMPLETED', esito: { codice: 200, info: 'OK' }, timestamp: created.timestamp, owner: 'alice@example.com' }]);
    expect((await call(url, 'GET', '/IT-richiesta/zzz')).json).toMatchObject({ error: 401, message: 'Wrong id' });
    expect((await call(url, 'GET', '/IT-richiesta', undefined, { token: 'bob' })).json).toMatchObject({ error: 400 });
  });
});

describe('KYC', () => {
  it("validates the query with each endpoint's numbers", async () => {
    const { url } = await risk();
    expect((await call(url, 'POST', '/WW-kyc-full', {})).json).toEqual({ success: false, message: 'query required', error: 611, data: null });
    expect((await call(url, 'POST', '/WW-kyc-full', { query: 'mario' })).json).toMatchObject({ error: 612 });
    expect((await call(url, 'POST', '/WW-kyc-full', { query: {} })).json).toMatchObject({ error: 613 });
    expect((await call(url, 'POST', '/WW-kyc-pep', {})).json).toMatchObject({ error: 618 });
    expect((await call(url, 'POST', '/WW-kyc-sanction_list', { query: {} })).json).toMatchObject({ error: 623 });
    expect((await call(url, 'POST', '/WW-kyc-adverse_media', { query: 5 })).json).toMatchObject({ error: 625 });
    expect((await call(url, 'POST', '/WW-kyc-full', { query: { firstName: 'mario' } })).json).toMatchObject({ error: 802 });
    expect((await call(url, 'POST', '/WW-kyc-full', { query: { lastName: 'rossi' } })).json).toMatchObject({ error: 801 });
    expect((await call(url, 'POST', '/WW-kyc-full', { query: { birthDate: '1970-01-01' } })).json).toMatchObject({ error: 800 });
    expect((await call(url, 'POST', '/WW-kyc-full', { query: { name: 'x', birthDate: '12/08/1976' } })).json).toMatchObject({ error: 803 });
    expect((await call(url, 'POST', '/WW-kyc-full', { query: { name: 'x', entityType: 'Q' } })).json).toMatchObject({ error: 612 });
  });

  it('goes PENDING → COMPLETED with entities, evidences and monitors', async () => {
    const { url, module } = await risk({ completeAfterMs: 0 });
    // Find a subject that matches at least one entity (about half do).
    let id = '';
    let entities: Array<Record<string, unknown>> = [];
    for (let i = 0; i < 20 && entities.length === 0; i++) {
      const created = data(await call(url, 'POST', '/WW-kyc-full', { query: { firstName: 'mario', lastName: `rossi${i}`, birthDate: '1976-08-12T00:00:00.000Z' } }));
      expect(created).toMatchObject({ type: 'full', state: 'PENDING', entities: [], evidences: [], callback: null });
      expect((created.query as Record<string, unknown>).birthDate).toBe('1976-08-12');
      id = String(created.id);
      expect((await call(url, 'GET', `/WW-kyc-evidences/${id}/EA1`)).json).toMatchObject({ error: 603 });
      await module.control?.advance?.({ id });
      const done = data(await call(url, 'GET', `/WW-kyc-evidences/${id}`));
      expect(done.state).toBe('COMPLETED');
      entities = done.entities as Array<Record<string, unknown>>;
    }
    expect(entities.length).toBeGreaterThan(0);
    const entityId = String(entities[0]?.id);
    const evidence = await call(url, 'GET', `/WW-kyc-evidences/${id}/${entityId}`);
    expect(Array.isArray(evidence.json.data)).toBe(true);
    expect(data(await call(url, 'GET', `/WW-kyc-evidences/${id}`)).evidences).toEqual([{ results: evidence.json.data, id: entityId }]);
    const pdf = await call(url, 'GET', `/WW-kyc-evidences/${id}/${entityId}`, undefined, { headers: { accept: 'application/pdf' } });
    expect(isPdf(pdf.bytes)).toBe(true);
    expect((await call(url, 'GET', `/WW-kyc-evidences/${id}/EA0`)).json).toMatchObject({ error: 605 });
    expect((await call(url, 'GET', '/WW-kyc-evidences/nope')).json).toMatchObject({ error: 601 });
    expect((await call(url, 'GET', '/WW-kyc-evidences/0123456789abcdef01234567')).json).toMatchObject({ error: 602 });
    const list = await call(url, 'GET', '/WW-kyc-evidences');
    expect((list.json.data as unknown[]).length).toBeGreaterThan(0);

    const mon = data(await call(url, 'POST', '/WW-kyc-full-monitor', { name: 'watch', query: { name: 'Mario Rossi' }, callback: { url: `${receiver.origin}/kycmon` } }));
    expect(mon).toMatchObject({ name: 'watch', type: 'full', autorenew: true, state: 'PENDING' });
    const monId = String(mon.id);
    expect((await call(url, 'DELETE', `/WW-kyc-full-monitor/${monId}`)).json).toMatchObject({ error: 640 });
    await module.control?.advance?.({ id: monId });
    await delivered('/kycmon', (p) => (p.data as Record<string, unknown>).state === 'ACTIVATED');
    expect(await module.control?.monitorEvent?.({ id: monId })).toEqual({ changed: monId });
    await delivered('/kycmon', (p) => ((p.data as Record<string, unknown>).evidences as unknown[]).length > 0);
    expect(data(await call(url, 'DELETE', `/WW-kyc-full-monitor/${monId}`)).state).toBe('DELETED');
    expect((await call(url, 'DELETE', `/WW-kyc-full-monitor/${monId}`)).json).toMatchObject({ error: 639 });
    expect((await call(url, 'GET', '/WW-kyc-full-monitor')).json.data).toEqual([expect.objectContaining({ id: monId, state: 'DELETED', type: 'full' })]);
    expect((await call(url, 'POST', '/WW-kyc-full-monitor', { query: { name: 'x' } })).json).toMatchObject({ error: 632 });
  });
});

describe('KYC evidences per entity', () => {
  /** A completed check of `type` with at least one entity (about half of the subjects match one). */
  async function completed(url: string, module: AreaModule, type: string): Promise<{ id: string; entity: Record<string, unknown> }> {
    for (let i = 0; i < 40; i++) {
      const id = String(data(await call(url, 'POST', `/WW-kyc-${type}`, { query: { firstName: 'mario', lastName: `bianchi${i}` } })).id);
      await module.control?.advance?.({ id });
      const entities = data(await call(url, 'GET', `/WW-kyc-evidences/${id}`)).entities as Array<Record<string, unknown>>;
      if (entities.length > 0) return { id, entity: entities[0] };
    }
    throw new Error('no subject matched an entity');
  }

  it('chooses JSON, PDF or JPEG by the Content-Type header (the vendor) or a preferring Accept, JSON when JSON is as welcome', () => {
    expect(evidenceFormat({})).toBe('json');
    expect(evidenceFormat({ 'content-type': 'application/pdf' })).toBe('pdf');
    expect(evidenceFormat({ 'content-type': 'image/jpeg', accept: 'application/json' })).toBe('jpeg');
    expect(evidenceFormat({ 'content-type': 'application/json', accept: 'application/pdf' })).toBe('json');
    expect(evidenceFormat({ accept: 'application/pdf' })).toBe('pdf');
    expect(evidenceFormat({ accept: 'image/jpeg' })).toBe('jpeg');
    // The layer's usual Accept: JSON first, PDF as a fallback → JSON.
    expect(evidenceFormat({ accept: 'application/json, application/pdf;q=0.9, */*;q=0.5' })).toBe('json');
    expect(evidenceFormat({ accept: '*/*' })).toBe('json');
  });

  it('serves a full check entity as JSON, PDF and its photos as JPEG; other kinds only as JSON', async () => {
    const { url, module } = await risk({ completeAfterMs: 0 });
    const { id, entity } = await completed(url, module, 'full');
    const entityId = String(entity.id);
    const photos = entity.photos as string[];
    expect(photos).toEqual([expect.stringMatching(/^DIDA\d+\.jpg$/)]);
    const asJson = await call(url, 'GET', `/WW-kyc-evidences/${id}/${entityId}`, undefined, { headers: { 'content-type': 'application/json' } });
    expect(Array.isArray(asJson.json.data)).toBe(true);
    const pdf = await call(url, 'GET', `/WW-kyc-evidences/${id}/${entityId}`, undefined, { headers: { 'content-type': 'application/pdf' } });
    expect([pdf.status, pdf.headers['content-type']]).toEqual([200, 'application/pdf']);
    expect(isPdf(pdf.bytes)).toBe(true);
    const jpeg = await call(url, 'GET', `/WW-kyc-evidences/${id}/${entityId}?photo=${photos[0]}`, undefined, { headers: { 'content-type': 'image/jpeg' } });
    expect([jpeg.status, jpeg.headers['content-type']]).toEqual([200, 'image/jpeg']);
    expect(jpeg.bytes.subarray(0, 3).toString('hex')).toBe('ffd8ff');
    expect(jpeg.bytes.subarray(-2).toString('hex')).toBe('ffd9');
    const noPhoto = await call(url, 'GET', `/WW-kyc-evidences/${id}/${entityId}`, undefined, { headers: { 'content-type': 'image/jpeg' } });
    expect([noPhoto.status, noPhoto.json.error]).toEqual([428, 609]);
    const otherPhoto = await call(url, 'GET', `/WW-kyc-evidences/${id}/${entityId}?photo=test.jpg`, undefined, { headers: { 'content-type': 'image/jpeg' } });
    expect([otherPhoto.status, otherPhoto.json]).toEqual([404, { success: false, message: `photo test.jpg not present in ${entityId} entitiy`, error: 610, data: null }]);

    const pep = await completed(url, module, 'pep');
    expect(pep.entity.photos).toEqual([]);
    expect((await call(url, 'GET', `/WW-kyc-evidences/${pep.id}/${String(pep.entity.id)}`, undefined, { headers: { 'content-type': 'application/pdf' } })).json).toEqual({
      success: false,
      message: "operation not permitted, PDF can only be downloaded on requests of type 'full'",
      error: 607,
      data: null,
    });
    expect(
      (await call(url, 'GET', `/WW-kyc-evidences/${pep.id}/${String(pep.entity.id)}?photo=x.jpg`, undefined, { headers: { 'content-type': 'image/jpeg' } })).json,
    ).toMatchObject({ error: 608 });
  });
});

describe('IT-creditscore-top-monitor', () => {
  it('activates with the top dataset and can be deleted', async () => {
    const { url, module } = await risk({ completeAfterMs: 0 });
    expect((await call(url, 'POST', '/IT-creditscore-top-monitor', {})).status).toBe(428);
    expect((await call(url, 'POST', '/IT-creditscore-top-monitor', { code: '12485671008' })).status).toBe(406);
    const m = data(await call(url, 'POST', '/IT-creditscore-top-monitor', { code: VAT, callback: { url: `${receiver.origin}/csmon` } }));
    expect(m).toMatchObject({ state: 'PENDING', vatCode: VAT, companyName: 'OPENAPI S.P.A.', latestDataset: null });
    await module.control?.advance?.({});
    const cb = await delivered('/csmon');
    const active = cb.payload.data as Record<string, unknown>;
    expect(active.state).toBe('ACTIVATED');
    const top = data(await call(url, 'GET', `/IT-creditscore-top/${VAT}`));
    expect((active.latestDataset as Record<string, unknown>).data).toEqual(top.data);
    expect(data(await call(url, 'DELETE', `/IT-creditscore-top-monitor/${String(m.id)}`)).state).toBe('DELETED');
    expect((await call(url, 'GET', '/IT-creditscore-top-monitor', undefined, { token: 'bob' })).status).toBe(404);
  });
});

describe('timing control', () => {
  it('completes on its own, never with 0, and reset forgets everything', async () => {
    const scheduler = new Scheduler({ mode: 'manual' });
    const { url, module } = await risk({ completeAfterMs: 60_000, scheduler });
    const a = String(data(await call(url, 'POST', '/IT-report-persona', { name: 'A', surname: 'B', taxCode: CF })).id);
    expect(await module.control?.timing?.({ completeAfterMs: 50 })).toEqual({ completeAfterMs: 50, delegationAfterMs: 0 });
    await scheduler.advance(200);
    expect(data(await call(url, 'GET', `/IT-report-persona/${a}`)).state).toBe('complete');
    await module.control?.timing?.({ completeAfterMs: 0 });
    const b = String(data(await call(url, 'POST', '/IT-report-persona', { name: 'A', surname: 'B', taxCode: CF })).id);
    await scheduler.advance(3_600_000);
    expect(data(await call(url, 'GET', `/IT-report-persona/${b}`)).state).toBe('processing');
    await module.control?.reset?.({});
    expect((await call(url, 'GET', '/IT-report-persona')).status).toBe(404);
    expect((await call(url, 'GET', `/IT-report-persona/${b}`)).json).toMatchObject({ error: 301 });
  });
});
