/**
 * E-invoicing end to end, as an accounting frontend sees it: the real stack (emulator, subgraphs,
 * gateway) on loopback ports, GraphQL over HTTP, live status over graphql-ws, the upstream's
 * notifications through the gateway's callback ingress (one signed callback per configuration).
 *
 * The emulator's SDI moves only when told (`invoice/timing` 0, then `invoice/advance`), so no
 * assertion depends on time; timeouts below are safety limits only.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createClient, type Client, type FormattedExecutionResult } from 'graphql-ws';
import WebSocket from 'ws';
import { makeFiscalCode } from '../../../contract/checksums.ts';
import { startTestStack, type TestStack } from '../../support/stack.ts';
import { withSafety } from '../../support/safety.ts';
import type { Obj } from '../../../contract/values.ts';
import { CUSTOMER_VAT, invoiceInput as oneInvoice, party as aParty, SENDER_VAT } from '../../support/invoicing.ts';

const ENV = { LAYER_SECRET: 'invoicing-e2e-test-secret-0123456789', INVOICING_RELAY_ALLOW_PRIVATE: '1', INVOICING_POLL_INTERVAL_MS: '60000' };
const SAFETY_MS = 20_000;

type Result = FormattedExecutionResult<Obj, unknown>;

/** The issuing company (OpenAPI S.p.A., the vendor's own example) and two customers. */
const PA_VAT = '02222222222';
const PERSON_CF = makeFiscalCode({ surname: 'Rossi', name: 'Maria', birthDate: '1980-04-12', gender: 'F', cadastralCode: 'H501' });

let t: TestStack;
const clients: Client[] = [];

const auth = (token: string): Record<string, string> => ({ authorization: `Bearer ${token}` });

async function gql<T = Obj>(
  token: string,
  query: string,
  variables: Obj = {},
): Promise<{ data: T; cost: NonNullable<NonNullable<Awaited<ReturnType<TestStack['gql']>>['extensions']>['cost']> }> {
  const res = await t.gql<T>(query, variables, auth(token));
  expect(res.errors, JSON.stringify(res.errors)).toBeUndefined();
  return { data: res.data as T, cost: res.extensions!.cost! };
}

function subscribe(token: string, query: string, variables: Obj): AsyncIterableIterator<Result> {
  const client = createClient({ url: t.stack.gateway.wsUrl, webSocketImpl: WebSocket, connectionParams: auth(token), retryAttempts: 0, lazy: true });
  clients.push(client);
  return client.iterate<Obj>({ query, variables });
}

async function next(it: AsyncIterableIterator<Result>, what: string): Promise<Obj> {
  const r = await withSafety(it.next(), what, SAFETY_MS);
  expect(r.done, `${what}: stream ended`).toBe(false);
  expect(r.value.errors, JSON.stringify(r.value.errors)).toBeUndefined();
  return r.value.data as Obj;
}

const CONFIGURE = `mutation($input: ConfigureInvoicingInput!) { configureInvoicing(input: $input) { id fiscalId name email customerInvoices supplierInvoices receipts events active } }`;
const ISSUE = `mutation($input: InvoiceInput!, $signature: SignatureCredentialsInput, $key: String) {
  issueInvoice(input: $input, signature: $signature, idempotencyKey: $key) { id state direction documentNumber totalAmount taxableAmount taxAmount toPublicAdministration sdi { status } lines { number vatRate totalPrice } }
}`;
const UPDATED = `subscription($id: ID) { invoiceUpdated(id: $id) { id state sdi { status message } } }`;

const party = (name: string, vatNumber: string | null, fiscalCode: string | null = null): Obj => aParty(name, vatNumber, { fiscalCode });

/** Two lines at two VAT rates (22 % and 4 %). */
const invoiceInput = (over: Obj = {}): Obj =>
  oneInvoice({
    sender: party('Openapi SpA', SENDER_VAT),
    recipient: party('Cliente Srl', CUSTOMER_VAT),
    lines: [
      { description: 'Consulenza', quantity: 2, unitPrice: 100, vatRate: 22 },
      { description: 'Libro', quantity: 1, unitPrice: 50, vatRate: 4 },
    ],
    ...over,
  });

async function configure(token: string, over: Obj = {}): Promise<Obj> {
  const { data } = await gql<{ configureInvoicing: Obj }>(token, CONFIGURE, {
    input: { fiscalId: SENDER_VAT, name: 'Openapi SpA', email: 'fatture@example.com', supplierInvoices: true, ...over },
  });
  return data.configureInvoicing;
}

beforeAll(async () => {
  t = await startTestStack(ENV);
}, 60_000);

afterAll(async () => {
  await Promise.all(clients.map(async (c) => c.dispose()));
  await t?.close();
});

beforeEach(async () => {
  await t.control('invoice/timing', { sentAfterMs: 0, outcomeAfterMs: 0, paTermsAfterMs: 0 });
  await t.clearCalls();
});

const callsOf = async (): Promise<string[]> => (await t.calls('invoice')).map((c) => `${c.method} ${c.path.replace(/[0-9a-f]{24}/, '{id}')} ${c.status}`);

describe('configurations', () => {
  it('configures a company (free: the account has fewer than ten) with the layer callback for its events, and shows it on Company', async () => {
    const token = await t.createToken(50);
    const config = await configure(token);
    expect(config).toMatchObject({ fiscalId: SENDER_VAT, email: 'fatture@example.com', customerInvoices: true, supplierInvoices: true, receipts: false, active: true });
    expect(config.events).toEqual(['CUSTOMER_INVOICE', 'SUPPLIER_INVOICE']);
    // The count, the creation, and the list again (free: the €1 is settled by the configuration's place among the account's).
    expect(await callsOf()).toEqual(['GET /IT-configurations 200', 'POST /api_configurations 200', 'GET /IT-configurations 200']);
    expect(await t.credit(token)).toBe(50);

    // Registered upstream: the layer's own signed callback under /callbacks/invoicing/, once for both events.
    const upstream = await gql<{ invoicingConfigurations: Obj[] }>(token, `{ invoicingConfigurations { fiscalId events } }`);
    expect(upstream.data.invoicingConfigurations).toEqual([{ fiscalId: SENDER_VAT, events: ['CUSTOMER_INVOICE', 'SUPPLIER_INVOICE'] }]);

    // Joined through the gateway by the Company key: one free list of the account's configurations, no company data bought.
    await t.clearCalls();
    const joined = await gql<{ a: Obj; b: Obj }>(
      token,
      `query($a: String!, $b: String!) { a: company(vatCode: $a) { vatCode invoicingConfiguration { fiscalId email events } } b: company(vatCode: $b) { invoicingConfiguration { fiscalId } } }`,
      { a: SENDER_VAT, b: CUSTOMER_VAT },
    );
    expect(joined.data).toEqual({
      a: { vatCode: SENDER_VAT, invoicingConfiguration: { fiscalId: SENDER_VAT, email: 'fatture@example.com', events: ['CUSTOMER_INVOICE', 'SUPPLIER_INVOICE'] } },
      b: { invoicingConfiguration: null },
    });
    expect(joined.cost.euro).toBe(0);
    expect(await callsOf()).toEqual(['GET /IT-configurations 200']);
    expect(await t.calls('company')).toEqual([]);

    // A second configuration of the same company is refused by the service.
    const again = await t.gql(CONFIGURE, { input: { fiscalId: SENDER_VAT, name: 'x', email: 'a@b.it' } }, auth(token));
    expect(again.errors?.[0]?.extensions?.upstream).toBeDefined();
  });

  it('the eleventh configuration costs one euro, the first ten nothing', async () => {
    const token = await t.createToken(5);
    const vats = [
      '01234567897',
      '09876543217',
      '11111111115',
      '02222222222',
      '12485671007',
      '00000000000',
      '03333333333',
      '04444444444',
      '05555555555',
      '06666666666',
      '07777777777',
    ];
    const { isValidItalianVat } = await import('../../../contract/checksums.ts');
    const valid = vats.filter(isValidItalianVat);
    const { makeItalianVat } = await import('../../../contract/checksums.ts');
    for (let i = 0; valid.length < 11; i++) valid.push(makeItalianVat(String(1000000000 + i * 7)));
    for (const vat of valid.slice(0, 10)) {
      const { cost } = await gql(token, CONFIGURE, { input: { fiscalId: vat, name: `Company ${vat}`, email: `${vat}@example.com` } });
      expect(cost.euro).toBe(0);
    }
    const { cost } = await gql(token, CONFIGURE, { input: { fiscalId: valid[10], name: 'Eleventh', email: 'eleventh@example.com' } });
    expect(cost.euro).toBe(1);
    expect(await t.credit(token)).toBe(4);
  });

  it('deletes a configuration (free), then it is gone; an unknown one is UPSTREAM_NOT_FOUND; a bad fiscal id is refused before any call', async () => {
    const token = await t.createToken(5);
    await configure(token);
    await t.clearCalls();
    const DELETE = `mutation($f: String!) { deleteInvoicingConfiguration(fiscalId: $f) }`;
    const { data, cost } = await gql<{ deleteInvoicingConfiguration: string }>(token, DELETE, { f: SENDER_VAT });
    expect(data.deleteInvoicingConfiguration).toBe(SENDER_VAT);
    expect(cost.euro).toBe(0);
    expect(await callsOf()).toEqual([`DELETE /IT-configurations/${SENDER_VAT} 200`]);
    const after = await gql<{ invoicingConfiguration: Obj | null }>(token, `query($f: String!) { invoicingConfiguration(fiscalId: $f) { fiscalId } }`, { f: SENDER_VAT });
    expect(after.data.invoicingConfiguration).toBeNull();

    await t.clearCalls();
    const again = await t.gql(DELETE, { f: SENDER_VAT }, auth(token));
    expect(again.errors?.[0]?.extensions).toMatchObject({ code: 'UPSTREAM_NOT_FOUND', upstream: { error: 111 } });
    expect(await callsOf()).toEqual([`DELETE /IT-configurations/${SENDER_VAT} 404`]);

    await t.clearCalls();
    const bad = await t.gql(DELETE, { f: '12485671000' }, auth(token));
    expect(bad.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'fiscalId' });
    expect(await t.calls('invoice')).toEqual([]);
    expect(await t.credit(token)).toBe(5);
  });

  it('updates receipts, credentials and events; the email cannot change (the vendor refuses it with 670)', async () => {
    const token = await t.createToken(5);
    await configure(token, { supplierInvoices: false });
    await t.clearCalls();
    const { data } = await gql<{ updateInvoicingConfiguration: Obj }>(
      token,
      `mutation($input: UpdateInvoicingConfigurationInput!) { updateInvoicingConfiguration(input: $input) { receipts receiptsCredentialsTaxCode events } }`,
      {
        input: {
          fiscalId: SENDER_VAT,
          receipts: true,
          receiptsCredentials: { taxCode: PERSON_CF, password: 'secret', pin: '1234' },
          events: ['CUSTOMER_INVOICE', 'SUPPLIER_INVOICE'],
        },
      },
    );
    expect(data.updateInvoicingConfiguration).toEqual({ receipts: true, receiptsCredentialsTaxCode: PERSON_CF, events: ['CUSTOMER_INVOICE', 'SUPPLIER_INVOICE'] });
    // The configuration is read first (free), to keep the other tokens' callbacks registered on it.
    expect(await callsOf()).toEqual([`GET /IT-configurations/${SENDER_VAT} 200`, 'PATCH /IT-configuration 200']);
    // The schema has no email to update; the emulator answers the vendor's refusal to anyone who tries.
    const bad = await t.gql(`mutation { updateInvoicingConfiguration(input: { fiscalId: "${SENDER_VAT}", email: "x@y.it" }) { email } }`, {}, auth(token));
    expect(bad.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
  });
});

describe('issuing Italian invoices', () => {
  it('issues an invoice from structured input and pushes NEW → SENT → DONE', async () => {
    const token = await t.createToken(5);
    await configure(token);
    await t.clearCalls();
    const { data, cost } = await gql<{ issueInvoice: Obj }>(token, ISSUE, { input: invoiceInput() });
    const inv = data.issueInvoice;
    expect(inv).toMatchObject({
      state: 'NEW',
      direction: 'OUTGOING',
      documentNumber: 'FT-2025/001',
      totalAmount: 296,
      taxableAmount: 250,
      taxAmount: 46,
      toPublicAdministration: false,
      sdi: { status: 'BOOKED' },
    });
    expect(inv.lines).toEqual([
      { number: 1, vatRate: 22, totalPrice: 200 },
      { number: 2, vatRate: 4, totalPrice: 50 },
    ]);
    expect(cost.euro).toBe(0.154);
    expect(cost.estimate?.euro).toBe(0.154);
    expect(await callsOf()).toEqual(['POST /IT-invoices 200']);

    const it1 = subscribe(token, UPDATED, { id: inv.id });
    expect(await next(it1, 'NEW')).toEqual({ invoiceUpdated: { id: inv.id, state: 'NEW', sdi: { status: 'BOOKED', message: null } } });
    await t.control('invoice/advance', { id: inv.id });
    expect(await next(it1, 'SENT')).toEqual({ invoiceUpdated: { id: inv.id, state: 'SENT', sdi: { status: 'SENT', message: null } } });
    await t.control('invoice/advance', { id: inv.id });
    expect(await next(it1, 'DONE')).toEqual({ invoiceUpdated: { id: inv.id, state: 'DONE', sdi: { status: 'DELIVERED', message: null } } });
    expect((await withSafety(it1.next(), 'end', SAFETY_MS)).done).toBe(true);
    // Each notification was re-read once (free); nothing else.
    expect(await callsOf()).toEqual(['POST /IT-invoices 200', 'GET /IT-invoices/{id} 200', 'GET /IT-invoices/{id} 200']);
    expect(await t.credit(token)).toBeCloseTo(5 - 0.154, 6);
  });

  it("the sender's telephone and e-mail reach the FatturaPA Contatti and come back on the invoice's parties, with the SDI's invoice date", async () => {
    const token = await t.createToken(5);
    await configure(token);
    await t.clearCalls();
    const input = invoiceInput({ number: 'FT-2025/CT1', sender: { ...party('Openapi SpA', SENDER_VAT), phone: '+390612345', email: 'fatture@openapi.it' } });
    const { data } = await gql<{ issueInvoice: Obj }>(token, ISSUE, { input });
    const id = data.issueInvoice.id as string;
    const { data: read } = await gql<{ invoice: Obj }>(
      token,
      `query($id: ID!) { invoice(id: $id) { sender { name phone email } recipient { name phone email } sdi { invoiceDate } } }`,
      { id },
    );
    expect(read.invoice).toEqual({
      sender: { name: 'Openapi SpA', phone: '+390612345', email: 'fatture@openapi.it' },
      recipient: { name: 'Cliente Srl', phone: null, email: null },
      sdi: { invoiceDate: '2025-01-31' },
    });
    // The submission and one free read.
    expect(await callsOf()).toEqual(['POST /IT-invoices 200', 'GET /IT-invoices/{id} 200']);
    expect(await t.credit(token)).toBeCloseTo(5 - 0.154, 6);
  });

  it('an invoice to the public administration stays SENT when delivered, and is DONE when ACCEPTED', async () => {
    const token = await t.createToken(5);
    await configure(token);
    const { data } = await gql<{ issueInvoice: Obj }>(token, ISSUE, {
      input: invoiceInput({ format: 'PUBLIC_ADMINISTRATION', recipient: party('Comune di Roma', PA_VAT), recipientCode: 'UFABCD' }),
    });
    const id = data.issueInvoice.id as string;
    expect(data.issueInvoice.toPublicAdministration).toBe(true);
    const s = subscribe(token, UPDATED, { id });
    expect(((await next(s, 'NEW')).invoiceUpdated as Obj).state).toBe('NEW');
    await t.control('invoice/advance', { id });
    expect(await next(s, 'SENT')).toMatchObject({ invoiceUpdated: { state: 'SENT', sdi: { status: 'SENT' } } });
    await t.control('invoice/advance', { id });
    expect(await next(s, 'DELIVERED')).toMatchObject({ invoiceUpdated: { state: 'SENT', sdi: { status: 'DELIVERED' } } });
    await t.control('invoice/advance', { id, sdiStatus: 'ACCEPTED' });
    expect(await next(s, 'ACCEPTED')).toMatchObject({ invoiceUpdated: { state: 'DONE', sdi: { status: 'ACCEPTED' } } });
    expect((await withSafety(s.next(), 'end', SAFETY_MS)).done).toBe(true);
  });

  it('an invoice to the public administration REJECTED ends in ERROR', async () => {
    const token = await t.createToken(5);
    await configure(token);
    const { data } = await gql<{ issueInvoice: Obj }>(token, ISSUE, {
      input: invoiceInput({ number: 'PA-2', format: 'PUBLIC_ADMINISTRATION', recipient: party('Comune di Roma', PA_VAT), recipientCode: 'UFABCD' }),
    });
    const id = data.issueInvoice.id as string;
    const s = subscribe(token, UPDATED, { id });
    await next(s, 'NEW');
    await t.control('invoice/advance', { id });
    await next(s, 'SENT');
    await t.control('invoice/advance', { id });
    await next(s, 'DELIVERED');
    await t.control('invoice/advance', { id, sdiStatus: 'REJECTED' });
    expect(await next(s, 'REJECTED')).toMatchObject({ invoiceUpdated: { state: 'ERROR', sdi: { status: 'REJECTED', message: 'EC02: rifiutata dalla PA' } } });
  });

  it('issues raw FatturaPA XML, and the same idempotency key never pays twice', async () => {
    const token = await t.createToken(5);
    await configure(token);
    // The layer's own document for a structured invoice, issued as raw XML.
    const { buildFattura, invoiceFromInput } = await import('../../../subgraphs/invoicing/fatturapa.ts');
    const xml = buildFattura(invoiceFromInput(invoiceInput({ number: 'XML-1' }) as never), 'XML1');
    await t.clearCalls();
    const q = `mutation($xml: String!, $key: String) { issueInvoiceXml(xml: $xml, idempotencyKey: $key) { id state documentNumber totalAmount } }`;
    const first = await gql<{ issueInvoiceXml: Obj }>(token, q, { xml, key: 'xml-once' });
    const second = await gql<{ issueInvoiceXml: Obj }>(token, q, { xml, key: 'xml-once' });
    expect(second.data.issueInvoiceXml).toEqual(first.data.issueInvoiceXml);
    expect(first.data.issueInvoiceXml).toMatchObject({ state: 'NEW', documentNumber: 'XML-1', totalAmount: 296 });
    expect(second.cost.euro).toBe(0);
    expect(await callsOf()).toEqual(['POST /IT-invoices 200']);
  });

  it('custom signature credentials go only in the submission headers, and cost the signature price', async () => {
    const token = await t.createToken(5);
    await configure(token);
    // Without the automatic QES activated for this signer, the service refuses (nothing charged).
    const refused = await t.gql(ISSUE, { input: invoiceInput({ number: 'SIG-0' }), signature: { user: 'signer', password: 'p4ss-w0rd-secret' } }, auth(token));
    expect(refused.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    const act = await gql<{ activateCustomSignature: Obj }>(
      token,
      `mutation { activateCustomSignature(fiscalId: "${SENDER_VAT}", credentials: { user: "signer", password: "p4ss-w0rd-secret" }) { fiscalId type user active } }`,
    );
    expect(act.data.activateCustomSignature).toEqual({ fiscalId: SENDER_VAT, type: 'EU-QES_automatic', user: 'signer', active: true });
    expect(JSON.stringify(act)).not.toContain('p4ss-w0rd-secret');
    const { data, cost } = await gql<{ issueInvoice: Obj }>(token, ISSUE, {
      input: invoiceInput({ number: 'SIG-1' }),
      signature: { user: 'signer', password: 'p4ss-w0rd-secret' },
    });
    expect(cost.euro).toBeCloseTo(0.199, 6);
    expect(cost.estimate?.euro).toBeCloseTo(0.199, 6);
    expect(await t.credit(token)).toBeCloseTo(5 - 0.199, 6);
    // Nothing the layer keeps or shows carries them.
    const read = await t.gql(`query($id: ID!) { invoice(id: $id) { id state } }`, { id: data.issueInvoice.id }, auth(token));
    expect(JSON.stringify(read)).not.toContain('p4ss-w0rd-secret');
  });
});

describe('invalid invoices are refused before any upstream call', () => {
  const cases: Array<[string, Obj, string]> = [
    ['a total that does not add up', { expectedTotal: 300 }, 'input.expectedTotal'],
    ['a VAT rate Italy does not have', { lines: [{ description: 'x', unitPrice: 10, vatRate: 21 }] }, 'input.lines[0].vatRate'],
    ['a 0 % line without a nature', { lines: [{ description: 'x', unitPrice: 10, vatRate: 0 }] }, 'input.lines[0].nature'],
    ['a wrong fiscal code', { recipient: party('Maria Rossi', null, 'RSSMRA80D52H501X') }, 'input.recipient.fiscalCode'],
    ['a wrong VAT number', { recipient: party('Cliente', '01234567890') }, 'input.recipient.vatNumber'],
    ['a wrong document type', { documentType: 'TD99' }, 'input.documentType'],
    ['a date in the future', { date: '2999-01-01' }, 'input.date'],
    ['a non-existent day', { date: '2025-02-30' }, 'input.date'],
    ['a recipient code of the wrong length', { recipientCode: 'ABC12' }, 'input.recipientCode'],
    ['a PA invoice without office code', { format: 'PUBLIC_ADMINISTRATION', recipientCode: null }, 'input.recipientCode'],
    ['a PEC with a recipient code', { recipientPec: 'cliente@pec.it' }, 'input.recipientPec'],
    ['no lines', { lines: [] }, 'input.lines'],
    ['a negative quantity', { lines: [{ description: 'x', quantity: -1, unitPrice: 10, vatRate: 22 }] }, 'input.lines[0].quantity'],
    [
      'a telephone of the recipient (FatturaPA has contacts for the seller only)',
      { recipient: { ...party('Cliente Srl', CUSTOMER_VAT), phone: '0612345678' } },
      'input.recipient.phone',
    ],
    ['a sender telephone that is no number', { sender: { ...party('Openapi SpA', SENDER_VAT), phone: 'call me' } }, 'input.sender.phone'],
    ['a sender e-mail that is no address', { sender: { ...party('Openapi SpA', SENDER_VAT), email: 'fatture-at-example' } }, 'input.sender.email'],
  ];
  it.each(cases)('%s', async (_what, over, field) => {
    const token = await t.createToken(5);
    await t.clearCalls();
    const res = await t.gql(ISSUE, { input: invoiceInput(over) }, auth(token));
    expect(res.errors?.[0]?.extensions?.code, JSON.stringify(res.errors)).toBe('BAD_USER_INPUT');
    expect(res.errors?.[0]?.extensions?.field).toBe(field);
    expect(await t.calls('invoice')).toEqual([]);
    expect(await t.credit(token)).toBe(5);
  });

  it('raw XML whose VAT summary does not match its lines, or that is not XML', async () => {
    const token = await t.createToken(5);
    const { buildFattura, invoiceFromInput } = await import('../../../subgraphs/invoicing/fatturapa.ts');
    const good = buildFattura(invoiceFromInput(invoiceInput() as never), '1');
    const q = `mutation($xml: String!) { issueInvoiceXml(xml: $xml) { id } }`;
    await t.clearCalls();
    const tampered = good.replace('<Imposta>44.00</Imposta>', '<Imposta>40.00</Imposta>');
    expect(tampered).not.toBe(good);
    const r1 = await t.gql(q, { xml: tampered }, auth(token));
    expect(r1.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'xml:DatiRiepilogo[0]/Imposta' });
    const r2 = await t.gql(q, { xml: '<not-closed>' }, auth(token));
    expect(r2.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'xml' });
    expect(await t.calls('invoice')).toEqual([]);
  });
});

describe('passive invoices, the list and documents', () => {
  const SUPPLIER_VAT = '09876543217';

  async function tokenOf(owner: string): Promise<string> {
    return ((await t.control('tokens', { credit: 5, owner })) as { token: string }).token;
  }

  it('a passive invoice arrives for a configured company, is pushed to invoiceReceived and listed', async () => {
    const owner = `passive-${Date.now()}@example.com`;
    const token = await tokenOf(owner);
    await configure(token, { supplierInvoices: true });
    // `since` makes the stream start with what arrived since then: an arrival that beats the subscription is not missed.
    const since = new Date(Date.now() - 60_000).toISOString();
    const received = subscribe(
      token,
      `subscription($since: DateTime) { invoiceReceived(since: $since) { id state direction fiscalId documentNumber sender { vatNumber } sdi { status } } }`,
      { since },
    );
    const first = received.next();
    const { buildFattura, invoiceFromInput } = await import('../../../subgraphs/invoicing/fatturapa.ts');
    const xml = buildFattura(
      invoiceFromInput(invoiceInput({ number: 'SUP-77', sender: party('Fornitore Spa', SUPPLIER_VAT), recipient: party('Openapi SpA', SENDER_VAT) }) as never),
      '77',
    );
    await t.clearCalls();
    const arrival = (await t.control('invoice/passive', { xml, owner })) as { received: Obj };
    const got = await withSafety(first, 'invoiceReceived', SAFETY_MS);
    expect(got.value?.errors).toBeUndefined();
    expect(got.value?.data).toEqual({
      invoiceReceived: {
        id: arrival.received.id,
        state: 'RECEIVED',
        direction: 'INCOMING',
        fiscalId: SENDER_VAT,
        documentNumber: 'SUP-77',
        sender: { vatNumber: SUPPLIER_VAT },
        sdi: { status: 'RECEIVED' },
      },
    });
    expect(await callsOf()).toEqual(['GET /IT-invoices/{id} 200']);

    const list = await gql<{ invoices: { nodes: Obj[]; pageInfo: Obj } }>(
      token,
      `{ invoices(filter: { direction: INCOMING }) { nodes { id documentNumber direction } pageInfo { hasNextPage endCursor } } }`,
    );
    expect(list.data.invoices).toEqual({
      nodes: [{ id: arrival.received.id, documentNumber: 'SUP-77', direction: 'INCOMING' }],
      pageInfo: { hasNextPage: false, endCursor: null },
    });
    expect(list.cost.euro).toBe(0);
  });

  it('lists invoices with filters and cursor pages', async () => {
    const token = await t.createToken(5);
    await configure(token);
    const ids: string[] = [];
    for (const n of ['L-1', 'L-2', 'L-3']) ids.push((await gql<{ issueInvoice: Obj }>(token, ISSUE, { input: invoiceInput({ number: n }) })).data.issueInvoice.id as string);
    await t.control('invoice/advance', { id: ids[0] });
    await t.clearCalls();
    const q = `query($after: String, $filter: InvoiceFilter) { invoices(first: 2, after: $after, filter: $filter) { nodes { documentNumber state } pageInfo { hasNextPage endCursor } } }`;
    const p1 = (await gql<{ invoices: { nodes: Obj[]; pageInfo: { hasNextPage: boolean; endCursor: string } } }>(token, q, {})).data.invoices;
    expect(p1.nodes.map((n) => n.documentNumber)).toEqual(['L-3', 'L-2']);
    expect(p1.pageInfo.hasNextPage).toBe(true);
    const p2 = (await gql<{ invoices: { nodes: Obj[]; pageInfo: Obj } }>(token, q, { after: p1.pageInfo.endCursor })).data.invoices;
    expect(p2).toEqual({ nodes: [{ documentNumber: 'L-1', state: 'SENT' }], pageInfo: { hasNextPage: false, endCursor: null } });
    const sent = (await gql<{ invoices: { nodes: Obj[] } }>(token, q, { filter: { states: ['SENT'], direction: 'OUTGOING', fiscalId: SENDER_VAT } })).data.invoices;
    expect(sent.nodes).toEqual([{ documentNumber: 'L-1', state: 'SENT' }]);
    const byNumber = (await gql<{ invoices: { nodes: Obj[] } }>(token, q, { filter: { documentNumber: 'L-2', issuedAfter: '2025-01-30', issuedBefore: '2025-02-01' } })).data
      .invoices;
    expect(byNumber.nodes).toEqual([{ documentNumber: 'L-2', state: 'NEW' }]);
    expect(await callsOf()).toEqual(['GET /invoices 200', 'GET /invoices 200', 'GET /invoices 200', 'GET /invoices 200']);
    const bad = await t.gql(q, { after: 'bm90LWEtY3Vyc29y' }, auth(token));
    expect(bad.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'after' });
  });

  it('the invoice document as XML and as PDF through signed URLs, never inline', async () => {
    const token = await t.createToken(5);
    await configure(token);
    const { data } = await gql<{ issueInvoice: Obj }>(token, ISSUE, { input: invoiceInput({ number: 'DOC-1' }) });
    const { data: doc } = await gql<{ invoice: { xml: Obj; pdf: Obj } }>(
      token,
      `query($id: ID!) { invoice(id: $id) { xml: document { url fileName contentType } pdf: document(format: PDF) { url fileName contentType } } }`,
      { id: data.issueInvoice.id },
    );
    expect(doc.invoice.xml).toMatchObject({ fileName: 'DOC-1.xml', contentType: 'application/xml' });
    expect(doc.invoice.pdf).toMatchObject({ fileName: 'DOC-1.pdf', contentType: 'application/pdf' });
    expect(String(doc.invoice.xml.url)).toMatch(/\/files\/invoicing\//);
    const xml = await fetch(String(doc.invoice.xml.url));
    expect(xml.status).toBe(200);
    const text = await xml.text();
    expect(text).toContain('<Numero>DOC-1</Numero>');
    expect(text).toContain('FatturaElettronica');
    const pdf = await fetch(String(doc.invoice.pdf.url));
    expect(pdf.status).toBe(200);
    expect(
      Buffer.from(await pdf.arrayBuffer())
        .subarray(0, 4)
        .toString(),
    ).toBe('%PDF');
    // A tampered URL is refused (its first signed character changed: to 'x', or 'y' where it was 'x').
    const tampered = String(doc.invoice.pdf.url).replace(/\/files\/invoicing\/(.)/, (_, c: string) => `/files/invoicing/${c === 'x' ? 'y' : 'x'}`);
    expect(tampered).not.toBe(String(doc.invoice.pdf.url));
    expect((await fetch(tampered)).status).toBe(403);
  });
});

describe('relays', () => {
  it("relays each notification of a configuration to the caller's own callback with its headers", async () => {
    const bodies: Array<{ headers: Record<string, unknown>; body: Obj }> = [];
    const waiters: Array<() => void> = [];
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        bodies.push({ headers: req.headers, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as Obj });
        res.writeHead(200).end('ok');
        for (const w of waiters.splice(0)) w();
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
      const token = await t.createToken(5);
      await configure(token, { callback: { url, headers: [{ name: 'X-App-Key', value: 'app-secret' }] } });
      const { data } = await gql<{ issueInvoice: Obj }>(token, ISSUE, { input: invoiceInput({ number: 'RELAY-1' }) });
      const arrived = new Promise<void>((r) => waiters.push(r));
      await t.control('invoice/advance', { id: data.issueInvoice.id });
      await withSafety(arrived, 'relayed notification', SAFETY_MS);
      expect(bodies).toHaveLength(1);
      expect(bodies[0].headers['x-app-key']).toBe('app-secret');
      expect(bodies[0].body.data).toMatchObject({ id: data.issueInvoice.id, state: 'SENT', document_number: 'RELAY-1' });
    } finally {
      server.close();
    }
  });
});

describe('two tokens of one account', () => {
  it("both keep receiving a configuration's notifications when the second token updates its events and callback", async () => {
    const seen: Record<string, Obj[]> = { '/a': [], '/b': [] };
    const waiters: Array<() => void> = [];
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        seen[req.url ?? '']?.push(JSON.parse(Buffer.concat(chunks).toString('utf8')) as Obj);
        res.writeHead(200).end('ok');
        for (const w of waiters.splice(0)) w();
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const first = await t.createToken(5);
      const owner = ((await (await fetch(`${t.stack.emulatorUrl}/_emulator/tokens/${encodeURIComponent(first)}`)).json()) as { owner: string }).owner;
      const second = ((await t.control('tokens', { credit: 5, owner })) as { token: string }).token;
      await configure(first, { supplierInvoices: false, callback: { url: `${base}/a` } });
      // The second token (another tenant of the same account) chooses its events and its own callback.
      const upd = await gql<{ updateInvoicingConfiguration: Obj }>(
        second,
        `mutation($input: UpdateInvoicingConfigurationInput!) { updateInvoicingConfiguration(input: $input) { events } }`,
        { input: { fiscalId: SENDER_VAT, events: ['CUSTOMER_INVOICE'], callback: { url: `${base}/b` } } },
      );
      expect(upd.data.updateInvoicingConfiguration.events).toEqual(['CUSTOMER_INVOICE']);
      const { data } = await gql<{ issueInvoice: Obj }>(first, ISSUE, { input: invoiceInput({ number: 'TWO-TOKENS-1' }) });
      await t.control('invoice/advance', { id: data.issueInvoice.id });
      // Each delivery wakes the wait; the deadline fails the test with a clear message.
      await withSafety(
        (async () => {
          while (seen['/a'].length === 0 || seen['/b'].length === 0) await new Promise<void>((r) => waiters.push(r));
        })(),
        'both relays',
        SAFETY_MS,
      );
      // Each tenant's callback re-read the invoice with its own token and relayed it to its own target.
      expect(seen['/a'].map((b) => (b.data as Obj).state)).toEqual(['SENT']);
      expect(seen['/b'].map((b) => (b.data as Obj).state)).toEqual(['SENT']);
    } finally {
      server.close();
    }
  });
});

describe('updating a configuration', () => {
  const UPDATE = `mutation($input: UpdateInvoicingConfigurationInput!) { updateInvoicingConfiguration(input: $input) { events } }`;
  const emu = (token: string, method: string, path: string, body?: Obj): Promise<Response> =>
    fetch(`${t.stack.emulatorUrl}/invoice${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
  const registered = async (token: string): Promise<Array<{ event: string; callback: { url: string } }>> =>
    ((await (await emu(token, 'GET', `/IT-configurations/${SENDER_VAT}`)).json()) as { data: { api_configurations: Array<{ event: string; callback: { url: string } }> } }).data
      .api_configurations;

  it("keeps the account's own targets registered outside the layer, and only replaces this token's callbacks", async () => {
    const token = await t.createToken(5);
    await configure(token, { supplierInvoices: false });
    const own = { event: 'supplier-invoice', callback: { url: 'https://erp.example.com/hooks/fatture', method: 'JSON', field: 'data', headers: {}, retry: 1 } };
    const patched = await emu(token, 'PATCH', '/IT-configuration', { fiscal_id: SENDER_VAT, api_configurations: [...(await registered(token)), own] });
    expect(patched.status).toBe(200);
    await t.clearCalls();
    const upd = await gql<{ updateInvoicingConfiguration: Obj }>(token, UPDATE, { input: { fiscalId: SENDER_VAT, events: ['CUSTOMER_INVOICE', 'RECEIPT'] } });
    expect(upd.data.updateInvoicingConfiguration.events).toEqual(['CUSTOMER_INVOICE', 'RECEIPT', 'SUPPLIER_INVOICE']);
    const now = await registered(token);
    expect(now.filter((a) => a.callback.url === own.callback.url)).toHaveLength(1);
    expect(
      now
        .filter((a) => a.callback.url.includes('/callbacks/invoicing/'))
        .map((a) => a.event)
        .sort(),
    ).toEqual(['customer-invoice', 'receipt']);
  });

  it('two tokens updating their events at once: both choices stand (one update of a configuration at a time)', async () => {
    const first = await t.createToken(5);
    const owner = ((await (await fetch(`${t.stack.emulatorUrl}/_emulator/tokens/${encodeURIComponent(first)}`)).json()) as { owner: string }).owner;
    const second = ((await t.control('tokens', { credit: 5, owner })) as { token: string }).token;
    await configure(first, { supplierInvoices: false });
    await gql(second, UPDATE, { input: { fiscalId: SENDER_VAT, events: ['CUSTOMER_INVOICE'] } });
    // Each read takes 300 ms, so without the lease both would read the same callbacks and the last PATCH would undo the first.
    await t.control('latency', { area: 'invoice', ms: 300 });
    try {
      const both = await Promise.all([
        t.gql(UPDATE, { input: { fiscalId: SENDER_VAT, events: ['CUSTOMER_INVOICE', 'SUPPLIER_INVOICE'] } }, auth(first)),
        t.gql(UPDATE, { input: { fiscalId: SENDER_VAT, events: ['CUSTOMER_INVOICE', 'RECEIPT'] } }, auth(second)),
      ]);
      for (const r of both) expect(r.errors, JSON.stringify(r.errors)).toBeUndefined();
    } finally {
      await t.control('latency', { area: 'invoice', ms: 0 });
    }
    expect([...new Set((await registered(first)).map((a) => a.event))].sort()).toEqual(['customer-invoice', 'receipt', 'supplier-invoice']);
  });
});

describe('receipt credentials', () => {
  it('RECEIPT_CREDENTIALS reaches receiptCredentialsUpdated: the latest change first, then each change, tax code only', async () => {
    const token = await t.createToken(5);
    await configure(token, {
      customerInvoices: false,
      supplierInvoices: false,
      receipts: true,
      receiptsCredentials: { taxCode: PERSON_CF, password: 'first-p4ss', pin: '11223344' },
      events: ['RECEIPT', 'RECEIPT_CREDENTIALS'],
    });
    const UPDATE = `mutation($input: UpdateInvoicingConfigurationInput!) { updateInvoicingConfiguration(input: $input) { receipts } }`;
    await t.clearCalls();
    // The service notifies before it answers: when the update returns, the change is on the bus.
    await gql(token, UPDATE, { input: { fiscalId: SENDER_VAT, receiptsCredentials: { taxCode: PERSON_CF, password: 'n3w-s3cret-p4ss', pin: '55443322' } } });
    expect((await callsOf()).sort()).toEqual([`GET /IT-configurations/${SENDER_VAT} 200`, 'PATCH /IT-configuration 200']);

    const SUB = `subscription($f: String) { receiptCredentialsUpdated(fiscalId: $f) { fiscalId receipts receiptsCredentialsTaxCode events } }`;
    const s = subscribe(token, SUB, { f: SENDER_VAT });
    const first = await next(s, 'latest credentials change');
    expect(first).toEqual({
      receiptCredentialsUpdated: { fiscalId: SENDER_VAT, receipts: true, receiptsCredentialsTaxCode: PERSON_CF, events: ['RECEIPT', 'RECEIPT_CREDENTIALS'] },
    });
    expect(JSON.stringify(first)).not.toMatch(/n3w-s3cret-p4ss|55443322/);

    await t.clearCalls();
    await gql(token, UPDATE, { input: { fiscalId: SENDER_VAT, receipts: false, receiptsCredentials: { taxCode: PERSON_CF, password: 'th1rd-p4ss', pin: '99887766' } } });
    expect(await next(s, 'next credentials change')).toEqual({
      receiptCredentialsUpdated: { fiscalId: SENDER_VAT, receipts: false, receiptsCredentialsTaxCode: PERSON_CF, events: ['RECEIPT', 'RECEIPT_CREDENTIALS'] },
    });
    // The PATCH and the delivery's free re-read; the subscription costs nothing.
    expect((await callsOf()).sort()).toEqual([`GET /IT-configurations/${SENDER_VAT} 200`, 'PATCH /IT-configuration 200']);
    expect(await t.credit(token)).toBe(5);

    // Another token (another caller) hears nothing of it, and a bad fiscal id is refused.
    const other = await t.createToken(5);
    const bad = subscribe(other, SUB, { f: '12485671000' });
    const refused = await withSafety(bad.next(), 'refused', SAFETY_MS);
    expect(JSON.stringify(refused.value)).toContain('BAD_USER_INPUT');
  });

  it('RECEIPT_CREDENTIALS: a credentials change is re-read and relayed to the caller without password or PIN', async () => {
    const bodies: string[] = [];
    const waiters: Array<() => void> = [];
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        bodies.push(Buffer.concat(chunks).toString('utf8'));
        res.writeHead(200).end('ok');
        for (const w of waiters.splice(0)) w();
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/credentials`;
      const token = await t.createToken(5);
      const config = await configure(token, {
        customerInvoices: false,
        receipts: true,
        receiptsCredentials: { taxCode: PERSON_CF, password: 'first-p4ss', pin: '11223344' },
        events: ['RECEIPT', 'RECEIPT_CREDENTIALS'],
        callback: { url },
      });
      expect(config.events).toEqual(['RECEIPT', 'RECEIPT_CREDENTIALS']);
      await t.clearCalls();
      const arrived = new Promise<void>((r) => waiters.push(r));
      const upd = await t.gql(
        `mutation($input: UpdateInvoicingConfigurationInput!) { updateInvoicingConfiguration(input: $input) { receiptsCredentialsTaxCode events } }`,
        { input: { fiscalId: SENDER_VAT, receiptsCredentials: { taxCode: PERSON_CF, password: 'n3w-s3cret-p4ss', pin: '55443322' } } },
        auth(token),
      );
      expect(upd.errors, JSON.stringify(upd.errors)).toBeUndefined();
      expect(JSON.stringify(upd)).not.toMatch(/n3w-s3cret-p4ss|55443322/);
      await withSafety(arrived, 'credentials relay', SAFETY_MS);
      expect(bodies).toHaveLength(1);
      expect(JSON.parse(bodies[0])).toMatchObject({
        event: 'receipt-credentials',
        data: { fiscal_id: SENDER_VAT, receipts: true, receipts_authentication: { taxCode: PERSON_CF } },
      });
      expect(bodies[0]).not.toMatch(/n3w-s3cret-p4ss|55443322|first-p4ss|callbacks/);
      // The PATCH and the delivery's free re-read of the configuration (logged first: the service notifies before it answers); nothing paid.
      expect((await callsOf()).sort()).toEqual([`GET /IT-configurations/${SENDER_VAT} 200`, 'PATCH /IT-configuration 200']);
      expect(await t.credit(token)).toBe(5);

      // The next change (the same tax code renewed again, receipts switched off) is relayed too.
      const second = new Promise<void>((r) => waiters.push(r));
      const upd2 = await t.gql(
        `mutation($input: UpdateInvoicingConfigurationInput!) { updateInvoicingConfiguration(input: $input) { receipts } }`,
        { input: { fiscalId: SENDER_VAT, receipts: false, receiptsCredentials: { taxCode: PERSON_CF, password: 'th1rd-p4ss', pin: '99887766' } } },
        auth(token),
      );
      expect(upd2.errors, JSON.stringify(upd2.errors)).toBeUndefined();
      await withSafety(second, 'second credentials relay', SAFETY_MS);
      expect(bodies).toHaveLength(2);
      expect(JSON.parse(bodies[1])).toMatchObject({
        event: 'receipt-credentials',
        data: { fiscal_id: SENDER_VAT, receipts: false, receipts_authentication: { taxCode: PERSON_CF } },
      });
      expect(bodies[1]).not.toMatch(/th1rd-p4ss|99887766/);

      // A delivery repeated (the vendor's retry of it: the same body) is relayed once.
      const log = (await (await fetch(`${t.stack.emulatorUrl}/_emulator/callbacks`)).json()) as Array<{ url: string }>;
      const credentialsUrl = log.filter((d) => d.url.includes('/callbacks/invoicing/')).at(-1)!.url;
      const delivery = JSON.stringify({ data: { fiscal_id: SENDER_VAT, name: 'retry' }, custom: null });
      const post = () => fetch(credentialsUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: delivery });
      expect((await post()).status).toBe(200);
      expect(bodies).toHaveLength(3);
      await post();
      expect(bodies).toHaveLength(3);
    } finally {
      server.close();
    }
  });
});

describe('cross-border invoices (contract rule 1)', () => {
  const FR_VAT = 'FR40303265045';
  const CROSS = `mutation($input: CrossBorderInvoiceInput!) { issueCrossBorderInvoice(input: $input) { id state fiscalId totalAmount recipient { country vatNumber } } }`;
  const cross = (over: Obj = {}): Obj => ({
    senderCountry: 'FR',
    senderFiscalId: FR_VAT,
    senderName: 'Openapi France SAS',
    recipient: { country: 'ES', vatNumber: 'ESB12345678', name: 'Cliente SL', street: 'Calle Mayor 1', zip: '28013', city: 'Madrid' },
    number: 'FR-2025-1',
    date: '2025-01-31',
    lines: [{ description: 'Service', quantity: 2, unitPrice: 100, vatRate: 0 }],
    ...over,
  });

  it('a French branch invoices a Spanish customer: NEW → SENT → DONE pushed, priced as a French invoice', async () => {
    const token = await t.createToken(5);
    const conf = await gql<{ configureInvoicing: Obj }>(
      token,
      `mutation { configureInvoicing(input: { country: "FR", fiscalId: "${FR_VAT}", name: "Openapi France SAS", email: "fr@example.com" }) { fiscalId events } }`,
    );
    expect(conf.data.configureInvoicing).toEqual({ fiscalId: FR_VAT, events: ['CUSTOMER_INVOICE'] });
    await t.clearCalls();
    const { data, cost } = await gql<{ issueCrossBorderInvoice: Obj }>(token, CROSS, { input: cross() });
    expect(data.issueCrossBorderInvoice).toMatchObject({ state: 'NEW', fiscalId: FR_VAT, totalAmount: 200, recipient: { country: 'ES', vatNumber: 'ESB12345678' } });
    expect(cost.euro).toBe(0.09);
    expect(await callsOf()).toEqual(['POST /WW-invoices 200']);
    const id = data.issueCrossBorderInvoice.id as string;
    const s = subscribe(token, UPDATED, { id });
    expect(await next(s, 'NEW')).toMatchObject({ invoiceUpdated: { state: 'NEW' } });
    await t.control('invoice/advance', { id });
    expect(await next(s, 'SENT')).toMatchObject({ invoiceUpdated: { state: 'SENT' } });
    await t.control('invoice/advance', { id });
    expect(await next(s, 'DONE')).toMatchObject({ invoiceUpdated: { state: 'DONE' } });
  });

  it.each([
    ['a sender in Italy', { senderCountry: 'IT' }, 'input.senderCountry'],
    ['a sender in Spain', { senderCountry: 'ES' }, 'input.senderCountry'],
    [
      'a recipient in the sender’s own country (domestic flow)',
      { recipient: { country: 'FR', vatNumber: 'FR12345678901', name: 'Client', street: 'Rue 1', zip: '75001', city: 'Paris' } },
      'input.recipient.country',
    ],
    ['a malformed sender VAT id', { senderFiscalId: 'FR123' }, 'input.senderFiscalId'],
  ])('refuses %s before any upstream call', async (_what, over, field) => {
    const token = await t.createToken(5);
    await t.clearCalls();
    const res = await t.gql(CROSS, { input: cross(over as Obj) }, auth(token));
    expect(res.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field });
    expect(await t.calls('invoice')).toEqual([]);
  });

  it('refuses a sender that is not configured before any paid call (one free read of its configuration)', async () => {
    const token = await t.createToken(5);
    await t.clearCalls();
    const res = await t.gql(CROSS, { input: cross({ senderCountry: 'DE', senderFiscalId: 'DE123456789' }) }, auth(token));
    expect(res.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'input.senderFiscalId' });
    expect(await callsOf()).toEqual(['GET /IT-configurations/DE123456789 404']);
    expect(await t.credit(token)).toBe(5);
  });
});

describe('importing invoice history', () => {
  const IMPORT = `mutation($xml: String!, $sdiId: String, $status: SdiStatus) { importInvoice(xml: $xml, sdiId: $sdiId, sdiStatus: $status) { id state direction documentNumber sdi { id status } } }`;

  it('imports sent and received invoices (direction from the configured party), free, refusing duplicates', async () => {
    const token = await t.createToken(5);
    await configure(token);
    const { buildFattura, invoiceFromInput } = await import('../../../subgraphs/invoicing/fatturapa.ts');
    const sent = buildFattura(invoiceFromInput(invoiceInput({ number: 'OLD-1' }) as never), '1');
    const received = buildFattura(
      invoiceFromInput(invoiceInput({ number: 'SUP-OLD-9', sender: party('Fornitore', '09876543217'), recipient: party('Openapi SpA', SENDER_VAT) }) as never),
      '2',
    );
    await t.clearCalls();
    const a = await gql<{ importInvoice: Obj }>(token, IMPORT, { xml: sent, sdiId: '1234567', status: 'ACCEPTED' });
    expect(a.data.importInvoice).toMatchObject({ state: 'DONE', direction: 'OUTGOING', documentNumber: 'OLD-1', sdi: { id: '1234567', status: 'ACCEPTED' } });
    const b = await gql<{ importInvoice: Obj }>(token, IMPORT, { xml: received, sdiId: '7654321' });
    expect(b.data.importInvoice).toMatchObject({ state: 'RECEIVED', direction: 'INCOMING', documentNumber: 'SUP-OLD-9' });
    expect(a.cost.euro + b.cost.euro).toBe(0);
    const dup = await t.gql(IMPORT, { xml: sent, sdiId: '1234567' }, auth(token));
    expect(dup.errors?.[0]?.message).toMatch(/already imported/);
    const notFinal = await t.gql(IMPORT, { xml: sent, status: 'SENT' }, auth(token));
    expect(notFinal.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'sdiStatus' });
    expect(await callsOf()).toEqual(['POST /IT-invoices_import 200', 'POST /IT-invoices_import 200', 'POST /IT-invoices_import 400']);
  });
});

describe('tenancy and the account-wide stream', () => {
  it("streams every active invoice of the caller's account, and nothing of another account", async () => {
    const a = await t.createToken(5);
    const b = await t.createToken(5);
    await configure(a);
    await configure(b);
    const all = subscribe(a, `subscription { invoiceUpdated { id documentNumber state } }`, {});
    const first = all.next();
    const mine = (await gql<{ issueInvoice: Obj }>(a, ISSUE, { input: invoiceInput({ number: 'TEN-A1' }) })).data.issueInvoice.id as string;
    const theirs = (await gql<{ issueInvoice: Obj }>(b, ISSUE, { input: invoiceInput({ number: 'TEN-B1' }) })).data.issueInvoice.id as string;
    const r1 = await withSafety(first, 'NEW of A', SAFETY_MS);
    expect(r1.value?.data).toEqual({ invoiceUpdated: { id: mine, documentNumber: 'TEN-A1', state: 'NEW' } });
    await t.control('invoice/advance', { id: theirs });
    await t.control('invoice/advance', { id: mine });
    // B's change never reaches A: A's next event is its own SENT.
    expect(await next(all, 'SENT of A')).toEqual({ invoiceUpdated: { id: mine, documentNumber: 'TEN-A1', state: 'SENT' } });
    // B cannot read or follow A's invoice.
    expect((await gql<{ invoice: Obj | null }>(b, `query($id: ID!) { invoice(id: $id) { id } }`, { id: mine })).data.invoice).toBeNull();
    const spy = subscribe(b, UPDATED, { id: mine });
    const denied = await withSafety(spy.next(), 'refusal', SAFETY_MS);
    expect(denied.value?.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
  });
});
