/**
 * The emulator's PEC area on its own, over HTTP: the vendor's envelopes, error numbers, state words
 * and PDF answers (errors as text/plain), the mailbox state machine driven by the control API, and
 * the register notification's steps.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { startEmulator, type RunningEmulator } from '../../../emulator/server.ts';
import { mailboxBody, PDF_B64, PEC_CF } from '../../support/pec.ts';
import type { Obj } from '../../../contract/values.ts';

let emu: RunningEmulator;
let token: string;

beforeAll(async () => {
  emu = await startEmulator();
  token = emu.tokens.create({ credit: 1000, owner: 'pec-emu@example.com' }).token;
  await control('pec/timing', { verifyAfterMs: 0, noticeStepAfterMs: 0 });
});

afterAll(async () => {
  await emu?.close();
});

async function control(path: string, body: unknown = {}): Promise<Obj> {
  const res = await request(`${emu.url}/_emulator/${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return (await res.body.json()) as Obj;
}

async function call(method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: string, body?: unknown): Promise<{ status: number; type: string; text: string; json: Obj | null }> {
  const res = await request(`${emu.url}/pec${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const buf = Buffer.from(await res.body.arrayBuffer());
  const type = String(res.headers['content-type'] ?? '');
  const text = buf.toString('latin1');
  return { status: res.statusCode, type, text, json: /json/.test(type) && text ? (JSON.parse(text) as Obj) : null };
}

const data = (r: { json: Obj | null }): Obj => r.json!.data as Obj;

describe('PEC emulator: availability and domains', () => {
  it('answers availability for the provider domains only, with the vendor numbers', async () => {
    expect(data(await call('GET', '/verifica_pec/free.box@legalmail.it'))).toEqual({ available: true });
    expect(data(await call('GET', '/verifica_pec/taken.box@legalmail.it'))).toEqual({ available: false });
    const bad = await call('GET', '/verifica_pec/someone@gmail.com');
    expect(bad.status).toBe(406);
    expect(bad.json).toMatchObject({ success: false, error: 208, data: null });
  });

  it('finds certified domains in a list of realistic size, 204 otherwise', async () => {
    const found = await call('GET', '/domini_pec/legalmail.it');
    expect(found.json).toEqual({ data: [], success: true, message: 'legalmail.it found!', error: null });
    expect((await call('GET', '/domini_pec/pec.alalalal0.it')).status).toBe(200);
    expect((await call('GET', '/domini_pec/example.org')).status).toBe(204);
    expect((await call('GET', '/domini_pec/not_a_domain')).json).toMatchObject({ error: 401 });
  });
});

describe('PEC emulator: the mailbox lifecycle', () => {
  it('registers, serves the activation form, verifies documents, changes, renews and revokes', async () => {
    const created = await call('POST', '/pec', mailboxBody('lifecycle.box@legalmail.it', 'bronze'));
    expect(created.status).toBe(200);
    const box = data(created);
    expect(box).toMatchObject({ casella_pec: 'lifecycle.box@legalmail.it', tipo_casella: 'BRONZE', stato: 'registrata' });
    const id = String(box.id);
    // The address is no longer available; a second registration is refused.
    expect(data(await call('GET', '/verifica_pec/lifecycle.box@legalmail.it'))).toEqual({ available: false });
    expect((await call('POST', '/pec', mailboxBody('lifecycle.box@legalmail.it', 'BRONZE'))).json).toMatchObject({ error: 250 });

    const form = await call('GET', `/pec/${id}/modulo_attivazione`);
    expect(form.type).toBe('application/pdf');
    expect(form.text.startsWith('%PDF')).toBe(true);
    const formErr = await call('GET', '/pec/nothex/modulo_attivazione');
    expect(formErr.status).toBe(400);
    expect(formErr.type).toMatch(/^text\/plain/);
    expect(formErr.text).toBe('Invalid id');

    // Not yet active: no change, no revocation.
    expect((await call('PATCH', `/pec/${id}/trasformazione`, { tipo_casella: 'GOLD' })).json).toMatchObject({ error: 272 });
    expect((await call('DELETE', `/pec/${id}`)).json).toMatchObject({ error: 304 });
    // A standard box takes two PDFs; not a PDF is 406/296.
    expect((await call('PATCH', `/pec/${id}/attivazione`, { documenti: ['aGVsbG8='] })).json).toMatchObject({ error: 296 });
    expect((await call('PATCH', `/pec/${id}/attivazione`, { documenti: [PDF_B64] })).json).toMatchObject({ error: 297 });
    await control('pec/reject', { id });
    const uploaded = await call('PATCH', `/pec/${id}/activation`, { documenti: [PDF_B64, PDF_B64] });
    expect(data(uploaded)).toMatchObject({ stato: 'in_evasione' });
    expect((await control('pec/advance', { id })).mailboxes).toEqual([id]);
    expect(data(await call('GET', `/pec/${id}`))).toMatchObject({ stato: 'documenti_errati' });
    await call('PATCH', `/pec/${id}/attivazione`, { documenti: [PDF_B64, PDF_B64] });
    await control('pec/advance', { id });
    const active = data(await call('GET', `/pec/${id}`));
    expect(active).toMatchObject({ stato: 'evasa' });
    expect(active.data_scadenza).toMatch(/^\d{2}\/\d{2}\/\d{4}$/);

    expect((await call('PATCH', `/pec/${id}/modifica`, { spazio_disco: '1500' })).json).toMatchObject({ error: 325 });
    expect(data(await call('PATCH', `/pec/${id}/modifica`, { spazio_disco: '+1024' }))).toMatchObject({ spazio_disco: 2048 });
    expect((await call('PATCH', `/pec/${id}/modifica`, { spazio_conservazione: 1024 })).json).toMatchObject({ error: 282 });
    expect((await call('PATCH', `/pec/${id}/trasformazione`, { tipo_casella: 'STANDARD' })).json).toMatchObject({ error: 276 });
    expect(data(await call('PATCH', `/pec/${id}/trasformazione`, { tipo_casella: 'SILVER' }))).toMatchObject({ tipo_casella: 'SILVER' });

    const before = emu.tokens.get(token)!.credit;
    const renewed = data(await call('GET', `/pec/${id}/rinnovo?anni=2`));
    expect(Number(String(renewed.data_scadenza).slice(6))).toBe(Number(String(active.data_scadenza).slice(6)) + 2);
    expect(before - emu.tokens.get(token)!.credit).toBeCloseTo(10, 6);

    expect(data(await call('DELETE', `/pec/${id}`))).toMatchObject({ stato: 'revocata' });
    expect((await call('DELETE', `/pec/${id}`)).json).toMatchObject({ error: 303 });
    const list = data(await call('GET', '/pec')) as unknown as Obj[];
    expect(list.find((b) => b.id === id)).toMatchObject({ stato: 'revocata', tipo_casella: 'SILVER' });
  });

  it('takes one PDF for a digital-domicile box, under either spelling of its type', async () => {
    const box = data(await call('POST', '/pec', mailboxBody('domicile.box@domiciliodigitale.legalmail.it', 'DIGITALDOMICILE')));
    expect(box.tipo_casella).toBe('DOMICILIODIGITALE');
    expect(data(await call('PATCH', `/pec/${String(box.id)}/attivazione`, { documenti: [PDF_B64] }))).toMatchObject({ stato: 'in_evasione' });
    expect((await call('POST', '/pec', mailboxBody('wrong.domain@legalmail.it', 'DOMICILIODIGITALE'))).json).toMatchObject({ error: 326 });
  });
});

describe('PEC emulator: register notification', () => {
  it('moves from codice_in_richiesta to comunicazione_evasa, the delegation form once it exists, and waits for the finalize GET', async () => {
    const n = data(
      await call('POST', '/comunica_pec', {
        casella_pec: 'company@legalmail.it',
        cf: PEC_CF,
        nome: 'Mario',
        cognome: 'Rossi',
        qualifica: 'LEGALE_RAPPRESENTANTE',
        email: 'mario@example.com',
        cellulare: '3331234567',
        ragione_sociale: 'Azienda Test',
        cf_piva: '12485671007',
        comune: 'Roma',
        provincia: 'RM',
      }),
    );
    const id = String(n.id);
    expect(n.stato).toBe('codice_in_richiesta');
    const early = await call('GET', `/comunica_pec/${id}/procura_registro_imprese`);
    expect([early.status, early.type.startsWith('text/plain')]).toEqual([406, true]);
    expect((await call('PATCH', `/comunica_pec/${id}`, { documenti: PDF_B64 })).json).toMatchObject({ error: 355 });
    await control('pec/advance', { id });
    expect((await call('GET', `/comunica_pec/${id}/procura_registro_imprese`)).text.startsWith('%PDF')).toBe(true);
    expect(data(await call('POST', `/comunica_pec/${id}/procura_registro_imprese`, { documenti: PDF_B64 }))).toMatchObject({ stato: 'documenti_caricati' });
    // The provider does not finalize by itself: neither a step nor time moves it (the list reads without sending).
    expect((await control('pec/advance', { id })).notifications).toEqual([]);
    expect(await control('pec/pending', {})).toMatchObject({ notifications: [] });
    const listed = (await call('GET', '/comunica_pec')).json!.data as Obj[];
    expect(listed.find((x) => x.id === id)).toMatchObject({ stato: 'documenti_caricati' });
    // The contract's "send and finalize": the GET sends it, answering the final state; a second GET just reads.
    expect(data(await call('GET', `/comunica_pec/${id}`))).toMatchObject({ stato: 'comunicazione_evasa' });
    expect(data(await call('GET', `/comunica_pec/${id}`))).toMatchObject({ stato: 'comunicazione_evasa' });
    expect((await call('GET', '/comunica_pec/nothex')).json).toMatchObject({ error: 333 });
    expect((await call('GET', `/comunica_pec/${'0'.repeat(24)}`)).json).toMatchObject({ error: 334 });
  });
});

describe('PEC Massiva emulator', () => {
  const bulkCall = async (method: 'GET' | 'POST', path: string, headers: Record<string, string> = {}, body?: unknown): Promise<{ status: number; json: Obj }> => {
    const res = await request(`${emu.url}/pecmassiva${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.statusCode, json: (await res.body.json()) as Obj };
  };
  const creds = { 'x-username': 'bulk@pecmassiva.com', 'x-password': 'emulator-bulk-password' };
  const send = {
    sender: 'bulk@pecmassiva.com',
    recipient: ['a@legalmail.it'],
    subject: 'Prova',
    body: '<b>x</b>',
    username: 'bulk@pecmassiva.com',
    password: 'emulator-bulk-password',
  };

  it('answers in the vendor envelopes: 201 send, 401 without the mailbox credentials, 400 bad parameters, 429 above one send a second', async () => {
    expect(await bulkCall('GET', '/quota/INBOX')).toEqual({ status: 401, json: { success: false, message: 'Authorization is not valid or empty' } });
    expect((await bulkCall('POST', '/send', {}, { ...send, recipient: 'not an address' })).json).toEqual({ success: false, message: 'Post parameter is not valid' });
    const first = await bulkCall('POST', '/send', {}, send);
    expect(first.status).toBe(201);
    expect(first.json).toMatchObject({ success: true, sent: 1, message: '' });
    expect(String(first.json.message_id)).toMatch(/^\d{16}$/);
    expect((await bulkCall('POST', '/send', {}, send)).status).toBe(429);
    const receipts = await bulkCall('GET', `/send/${String(first.json.message_id)}`, creds);
    expect((receipts.json.data as Obj[])[0]).toMatchObject({ object: expect.stringMatching(/^POSTA CERTIFICATA: Prova/) });
    expect('error' in receipts.json).toBe(false);
    const inbox = await bulkCall('GET', '/inbox?page=2', creds);
    expect(inbox.json).toMatchObject({ success: true, page: 2, total: 60, n_of_pages: 3 });
    expect((inbox.json.data as Obj[]).length).toBe(25);
  });
});
