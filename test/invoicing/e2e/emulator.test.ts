/**
 * The emulator's invoicing area over HTTP, as the vendor documents it: configurations under the
 * contract's and the vendor's paths, the update rule (error 670 for anything but receipts,
 * credentials and events), the `"data":"null"` error envelopes (some with `success: true`),
 * notifications per configuration in both event spellings, the SDI state machine and the list's
 * limits. The scheduler's clock is manual: nothing moves unless told.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { startEmulator, type RunningEmulator } from '../../../emulator/server.ts';
import { Scheduler } from '../../../emulator/scheduler.ts';
import { buildFattura, invoiceFromInput } from '../../../subgraphs/invoicing/fatturapa.ts';

type Json = Record<string, unknown>;

let emu: RunningEmulator;
let hook: { url: string; bodies: Json[]; server: Server; waiters: Array<() => void> };

const party = (name: string, vatNumber: string): Json => ({ name, vatNumber, street: 'Via Roma 1', zip: '00100', city: 'Roma', province: 'RM' });
const xmlOf = (over: Json = {}): string =>
  buildFattura(
    invoiceFromInput({
      number: 'E-1',
      date: '2025-01-31',
      sender: party('Openapi SpA', '12485671007'),
      recipient: party('Cliente', '01234567897'),
      recipientCode: 'ABC1234',
      lines: [{ description: 'x', unitPrice: 100, vatRate: 22 }],
      ...over,
    } as never),
    '1',
  );

async function call(method: string, path: string, body?: Json | string, headers: Record<string, string> = {}): Promise<{ status: number; json: Json }> {
  const xml = typeof body === 'string';
  const res = await request(`${emu.url}/invoice${path}`, {
    method: method as 'GET',
    headers: { authorization: `Bearer ${emu.tokens.defaultToken}`, ...(body === undefined ? {} : { 'content-type': xml ? 'application/xml' : 'application/json' }), ...headers },
    body: body === undefined ? undefined : xml ? body : JSON.stringify(body),
  });
  return { status: res.statusCode, json: (await res.body.json()) as Json };
}

async function control(name: string, body: Json = {}): Promise<Json> {
  const res = await request(`${emu.url}/_emulator/invoice/${name}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return (await res.body.json()) as Json;
}

beforeAll(async () => {
  emu = await startEmulator({ scheduler: new Scheduler({ mode: 'manual' }) });
  const bodies: Json[] = [];
  const waiters: Array<() => void> = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      bodies.push(JSON.parse(Buffer.concat(chunks).toString('utf8')) as Json);
      res.writeHead(200).end('ok');
      for (const w of waiters.splice(0)) w();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  hook = { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, bodies, server, waiters };
});

afterAll(async () => {
  await emu?.close();
  hook?.server.close();
});

describe('configurations', () => {
  it('creates, reads, refuses a second one and the non-editable fields with the vendor envelopes', async () => {
    const created = await call('POST', '/api_configurations', {
      fiscal_id: '12485671007',
      name: 'Openapi SpA',
      email: 'fatture@example.com',
      supplier_invoice: true,
      api_configurations: [
        { event: 'customer_invoice', callback: { url: hook.url } },
        { event: 'supplier-invoice', callback: { url: hook.url, custom: { tag: 'sup' } } },
      ],
    });
    expect(created.status).toBe(200);
    expect(created.json).toMatchObject({
      success: true,
      error: null,
      data: { fiscal_id: '12485671007', email: 'fatture@example.com', customer_invoice: true, supplier_invoice: true, receipts: false, active: true },
    });
    expect((await call('GET', '/IT-configurations/12485671007')).json.data).toMatchObject({ fiscal_id: '12485671007' });
    expect((await call('POST', '/IT-configurations', { fiscal_id: '12485671007', name: 'x', email: 'y@z.it' })).status).toBe(409);
    expect(await call('GET', '/IT-configurations/01234567897')).toEqual({
      status: 404,
      json: { data: 'null', success: true, message: 'Fiscal ID not found or not registered', error: 111 },
    });
    expect(await call('PATCH', '/IT-configurations/12485671007', { email: 'new@example.com' })).toEqual({
      status: 400,
      json: { data: 'null', success: true, message: 'Invalid field: email. Fields fiscal_id, name, email are not editable.', error: 670 },
    });
    const other = await call('PATCH', '/IT-configuration', { fiscal_id: '12485671007', customer_invoice: false });
    expect(other.json).toMatchObject({ error: 670, data: 'null' });
    const ok = await call('PATCH', '/IT-configuration', {
      fiscal_id: '12485671007',
      receipts: true,
      receipts_authentication: { taxCode: 'RSSMRA80D52H501T', password: 'pw', pin: '1' },
    });
    expect(ok.json.data).toMatchObject({ receipts: true, receipts_authentication: { taxCode: 'RSSMRA80D52H501T' } });
    expect(JSON.stringify(ok.json)).not.toContain('"pw"');
  });
});

describe('invoices', () => {
  it('refuses bad XML, unknown senders and missing fields with the vendor envelopes', async () => {
    expect(await call('POST', '/IT-invoices', '<oops')).toEqual({ status: 400, json: { data: 'null', success: false, message: 'Invalid XML structure', error: 400 } });
    expect((await call('POST', '/IT-invoices', xmlOf({ sender: party('Other', '01234567897'), recipient: party('C', '12485671007') }))).json).toMatchObject({
      error: 111,
      success: true,
    });
    expect((await call('POST', '/IT-invoices', xmlOf().replace(/<Numero>.*<\/Numero>/, ''))).json).toEqual({
      data: 'null',
      success: false,
      message: 'Validation Error: Missing required field Numero',
      error: 422,
    });
  });

  it('moves NEW → SENT → DONE, notifying customer_invoice (underscore spelling) with {data, custom}', async () => {
    const sub = await call('POST', '/IT-invoices', xmlOf({ number: 'E-2' }));
    const id = (sub.json.data as Json).id as string;
    expect(sub.json.data).toMatchObject({ state: 'NEW', direction: 'outgoing', document_number: 'E-2', details: { sdi_status: 'BOOKED' } });
    hook.bodies.length = 0;
    await control('advance', { id });
    await control('advance', { id });
    expect(hook.bodies.map((b) => [(b.data as Json).state, ((b.data as Json).details as Json).sdi_status, b.custom])).toEqual([
      ['SENT', 'SENT', null],
      ['DONE', 'DELIVERED', null],
    ]);
    expect((await call('GET', `/IT-invoices/${id}`)).json.data).toMatchObject({ state: 'DONE' });
  });

  it('a document the SDI refuses (recipient VAT checksum) ends in ERROR with the SDI message', async () => {
    const xml = xmlOf({ number: 'E-3' }).replace('<IdCodice>01234567897</IdCodice>', '<IdCodice>01234567890</IdCodice>');
    const id = ((await call('POST', '/IT-invoices', xml)).json.data as Json).id as string;
    await control('advance', { id });
    await control('advance', { id });
    expect((await call('GET', `/IT-invoices/${id}`)).json.data).toMatchObject({
      state: 'ERROR',
      details: { sdi_status: 'ERROR', sdi_message: '00305: IdFiscaleIVA of the recipient not valid' },
    });
  });

  it('a passive invoice notifies supplier-invoice with the custom echo; the list filters and limits', async () => {
    hook.bodies.length = 0;
    const received = (await control('passive', { xml: xmlOf({ number: 'P-1', sender: party('Fornitore', '01234567897'), recipient: party('Openapi', '12485671007') }) }))
      .received as Json;
    expect(received).toMatchObject({ state: 'RECEIVED', direction: 'incoming', fiscal_id: '12485671007' });
    expect(hook.bodies).toEqual([{ data: received, custom: { tag: 'sup' } }]);
    const incoming = (await call('GET', '/invoices?direction=incoming')).json.data as Json[];
    expect(incoming.map((i) => i.document_number)).toEqual(['P-1']);
    const states = (await call('GET', '/IT-invoices?state[]=DONE&state[]=ERROR&limit=1')).json.data as Json[];
    expect(states).toHaveLength(1);
    expect((await call('GET', '/IT-invoices?limit=101')).status).toBe(400);
  });
});
