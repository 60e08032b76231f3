/**
 * Electronic receipts end to end through the gateway: issued (totals computed and checked by the
 * layer), read as a PDF through a signed URL, partly returned, voided, each state pushed on
 * `receiptUpdated` from the configuration's notifications, and a receipt issued at 23:57 Italian
 * time queued by the service and sent at midnight (the emulator's clock moved, nothing slept).
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createClient, type Client, type FormattedExecutionResult } from 'graphql-ws';
import WebSocket from 'ws';
import { makeFiscalCode } from '../../../contract/checksums.ts';
import { startTestStack, type TestStack } from '../../support/stack.ts';
import { withSafety } from '../../support/safety.ts';
import type { Obj } from '../../../contract/values.ts';

const SAFETY_MS = 20_000;
const VAT = '12485671007';
const CF = makeFiscalCode({ surname: 'Bianchi', name: 'Luca', birthDate: '1975-06-01', gender: 'M', cadastralCode: 'F205' });

let t: TestStack;
const clients: Client[] = [];
const auth = (token: string): Record<string, string> => ({ authorization: `Bearer ${token}` });

async function gql<T = Obj>(token: string, query: string, variables: Obj = {}): Promise<{ data: T; euro: number }> {
  const res = await t.gql<T>(query, variables, auth(token));
  expect(res.errors, JSON.stringify(res.errors)).toBeUndefined();
  return { data: res.data as T, euro: res.extensions!.cost!.euro };
}

function subscribe(token: string, id: string): AsyncIterableIterator<FormattedExecutionResult<Obj, unknown>> {
  const client = createClient({ url: t.stack.gateway.wsUrl, webSocketImpl: WebSocket, connectionParams: auth(token), retryAttempts: 0, lazy: true });
  clients.push(client);
  return client.iterate<Obj>({ query: `subscription($id: ID) { receiptUpdated(id: $id) { id status type documentNumber } }`, variables: { id } });
}

async function next(it: AsyncIterableIterator<FormattedExecutionResult<Obj, unknown>>, what: string): Promise<Obj> {
  const r = await withSafety(it.next(), what, SAFETY_MS);
  expect(r.done, `${what}: ended`).toBe(false);
  expect(r.value.errors).toBeUndefined();
  return r.value.data!.receiptUpdated as Obj;
}

const ISSUE = `mutation($input: ReceiptInput!, $key: String) { issueReceipt(input: $input, idempotencyKey: $key) { id status type totalAmount items { id description quantity totalAmount } } }`;
const receipt = (over: Obj = {}): Obj => ({
  fiscalId: VAT,
  items: [
    { description: 'Caffè', quantity: 2, unitPrice: 1.2, vatRateCode: '10' },
    { description: 'Libro', quantity: 1, unitPrice: 15, vatRateCode: '4' },
  ],
  cashPaymentAmount: 7.4,
  electronicPaymentAmount: 10,
  ...over,
});

async function configuredToken(): Promise<string> {
  const token = await t.createToken(5);
  await gql(token, `mutation($input: ConfigureInvoicingInput!) { configureInvoicing(input: $input) { events } }`, {
    input: {
      fiscalId: VAT,
      name: 'Bar Openapi',
      email: 'cassa@example.com',
      customerInvoices: false,
      receipts: true,
      receiptsCredentials: { taxCode: CF, password: 'pw', pin: '1234' },
    },
  });
  return token;
}

beforeAll(async () => {
  t = await startTestStack({ LAYER_SECRET: 'invoicing-receipts-test-secret-0123456789', INVOICING_POLL_INTERVAL_MS: '60000' });
}, 60_000);

afterAll(async () => {
  await Promise.all(clients.map(async (c) => c.dispose()));
  await t?.close();
});

beforeEach(async () => {
  await t.control('invoice/timing', { submitAfterMs: 0, readyAfterMs: 0 });
  await t.clearCalls();
});

describe('receipts', () => {
  it('issues a receipt, pushes NEW → READY, serves the PDF through a signed URL, returns part of it and voids it', async () => {
    const token = await configuredToken();
    await t.clearCalls();
    const { data, euro } = await gql<{ issueReceipt: Obj }>(token, ISSUE, { input: receipt() });
    const sale = data.issueReceipt;
    expect(sale).toMatchObject({ status: 'NEW', type: 'SALE', totalAmount: 17.4 });
    expect(euro).toBe(0.019);
    const id = sale.id as string;
    const s = subscribe(token, id);
    expect(await next(s, 'NEW')).toMatchObject({ status: 'NEW' });
    await t.control('invoice/receiptAdvance', { id });
    await t.control('invoice/receiptAdvance', { id });
    const ready = await next(s, 'READY');
    expect(ready).toMatchObject({ status: 'READY', type: 'SALE' });
    expect(String(ready.documentNumber)).toMatch(/^OPENAPI\d{4}\/0000-\d+$/);

    const { data: pdf } = await gql<{ receipt: { pdf: { url: string; contentType: string } } }>(token, `query($id: ID!) { receipt(id: $id) { pdf { url contentType } } }`, { id });
    expect(pdf.receipt.pdf.contentType).toBe('application/pdf');
    const res = await fetch(pdf.receipt.pdf.url);
    expect(res.status).toBe(200);
    expect(
      Buffer.from(await res.arrayBuffer())
        .subarray(0, 4)
        .toString(),
    ).toBe('%PDF');

    const items = sale.items as Obj[];
    const ret = await gql<{ returnReceiptItems: Obj }>(
      token,
      `mutation($id: ID!, $items: [ReceiptReturnItemInput!]!) { returnReceiptItems(id: $id, items: $items) { id status type parentReceiptId totalAmount } }`,
      {
        id,
        items: [{ itemId: items[0].id, quantity: 1 }],
      },
    );
    expect(ret.data.returnReceiptItems).toMatchObject({ status: 'NEW', type: 'RETURN', parentReceiptId: id, totalAmount: 1.2 });
    expect(ret.euro).toBe(0.019);
    const r = subscribe(token, ret.data.returnReceiptItems.id as string);
    await next(r, 'return NEW');
    await t.control('invoice/receiptAdvance', { id: ret.data.returnReceiptItems.id });
    await t.control('invoice/receiptAdvance', { id: ret.data.returnReceiptItems.id });
    expect(await next(r, 'return READY')).toMatchObject({ status: 'READY', type: 'RETURN' });

    const v = await gql<{ voidReceipt: Obj }>(token, `mutation($id: ID!) { voidReceipt(id: $id) { id status type parentReceiptId } }`, { id });
    expect(v.data.voidReceipt).toMatchObject({ status: 'NEW', type: 'VOID', parentReceiptId: id });
    await t.control('invoice/receiptAdvance', { id: v.data.voidReceipt.id });
    await t.control('invoice/receiptAdvance', { id: v.data.voidReceipt.id });
    // The sale's own stream ends with VOIDED (the service does not notify it: the layer reads the sale when its void is ready).
    expect(await next(s, 'VOIDED')).toMatchObject({ id, status: 'VOIDED' });
    expect((await withSafety(s.next(), 'end', SAFETY_MS)).done).toBe(true);

    const paid = (await t.calls('invoice')).filter((c) => c.price > 0).map((c) => `${c.method} ${c.path.replace(/[0-9a-f]{24}/, '{id}')} ${c.price}`);
    expect(paid).toEqual(['POST /IT-receipts 0.019', 'PATCH /IT-receipts/{id} 0.019', 'DELETE /IT-receipts/{id} 0.019']);
    expect(await t.credit(token)).toBeCloseTo(5 - 3 * 0.019, 6);
  });

  it('pushes RETRY when the portal fails, then FAILED when the revenue agency refuses', async () => {
    const token = await configuredToken();
    const { data } = await gql<{ issueReceipt: Obj }>(token, ISSUE, { input: receipt() });
    const id = data.issueReceipt.id as string;
    const s = subscribe(token, id);
    await next(s, 'NEW');
    await t.control('invoice/receiptAdvance', { id, outcome: 'retry' });
    expect(await next(s, 'RETRY')).toMatchObject({ status: 'RETRY' });
    await t.control('invoice/receiptAdvance', { id, outcome: 'failed' });
    expect(await next(s, 'FAILED')).toMatchObject({ status: 'FAILED' });
    expect((await withSafety(s.next(), 'end', SAFETY_MS)).done).toBe(true);
    const { data: read } = await gql<{ receipt: Obj }>(token, `query($id: ID!) { receipt(id: $id) { status errorCode errorMessage } }`, { id });
    expect(read.receipt).toEqual({ status: 'FAILED', errorCode: 'E01', errorMessage: 'Errore di comunicazione con il portale' });
  });

  it('the same idempotency key never pays twice', async () => {
    const token = await configuredToken();
    await t.clearCalls();
    const a = await gql<{ issueReceipt: Obj }>(token, ISSUE, { input: receipt(), key: 'till-1-0001' });
    const b = await gql<{ issueReceipt: Obj }>(token, ISSUE, { input: receipt(), key: 'till-1-0001' });
    expect(b.data.issueReceipt.id).toBe(a.data.issueReceipt.id);
    expect(b.euro).toBe(0);
    expect((await t.calls('invoice')).map((c) => `${c.method} ${c.path}`)).toEqual(['POST /IT-receipts']);
  });

  it('without a key, a retry of the same receipt returns the first one (keyed by its content); another sale is issued; a void is made once', async () => {
    const token = await configuredToken();
    await t.clearCalls();
    const a = await gql<{ issueReceipt: Obj }>(token, ISSUE, { input: receipt() });
    const b = await gql<{ issueReceipt: Obj }>(token, ISSUE, { input: receipt() });
    expect(b.data.issueReceipt.id).toBe(a.data.issueReceipt.id);
    expect([a.euro, b.euro]).toEqual([0.019, 0]);
    // Another content (the till's sale number as a tag) is another receipt.
    const c = await gql<{ issueReceipt: Obj }>(token, ISSUE, { input: receipt({ tags: ['sale-2'] }) });
    expect(c.data.issueReceipt.id).not.toBe(a.data.issueReceipt.id);
    expect((await t.calls('invoice')).map((x) => `${x.method} ${x.path}`)).toEqual(['POST /IT-receipts', 'POST /IT-receipts']);

    const id = a.data.issueReceipt.id as string;
    await t.control('invoice/receiptAdvance', { id });
    await t.control('invoice/receiptAdvance', { id });
    await t.clearCalls();
    const VOID = `mutation($id: ID!) { voidReceipt(id: $id) { id type } }`;
    const v1 = await gql<{ voidReceipt: Obj }>(token, VOID, { id });
    const v2 = await gql<{ voidReceipt: Obj }>(token, VOID, { id });
    expect(v2.data.voidReceipt.id).toBe(v1.data.voidReceipt.id);
    expect([v1.euro, v2.euro]).toEqual([0.019, 0]);
    expect((await t.calls('invoice')).filter((x) => x.price > 0).map((x) => `${x.method} ${x.path.replace(/[0-9a-f]{24}/, '{id}')}`)).toEqual(['DELETE /IT-receipts/{id}']);
    expect(await t.credit(token)).toBeCloseTo(5 - 3 * 0.019, 6);
  });

  it('a retry is marked in extensions.cost (a dedup call, no upstream call); a receipt whose answer was lost is found by the retry in the free list, never paid twice', async () => {
    const token = await configuredToken();
    await t.clearCalls();
    const sale = receipt({ tags: ['lost-1'] });
    await t.control('faults', { area: 'invoice', pathPrefix: '/IT-receipts', reset: true, count: 1 });
    const lost = await t.gql(ISSUE, { input: sale }, auth(token));
    expect(lost.errors?.[0]?.extensions).toMatchObject({ outcome: 'unknown', atRisk: 0.019 });
    expect(await t.credit(token)).toBeCloseTo(5 - 0.019, 6);
    await t.clearCalls();
    const found = await t.gql<{ issueReceipt: Obj }>(ISSUE, { input: sale }, auth(token));
    expect(found.errors, JSON.stringify(found.errors)).toBeUndefined();
    expect(found.data!.issueReceipt).toMatchObject({ type: 'SALE', totalAmount: 17.4 });
    expect(found.extensions!.cost).toMatchObject({ euro: 0, upstreamCalls: 2, dedupHits: 1 });
    // One free list (the sales of the configuration) and one free read; no second sale.
    expect((await t.calls('invoice')).map((c) => `${c.method} ${c.path.replace(/[0-9a-f]{24}/, '{id}')} ${c.price}`)).toEqual(['GET /IT-receipts 0', 'GET /IT-receipts/{id} 0']);
    const again = await t.gql<{ issueReceipt: Obj }>(ISSUE, { input: sale }, auth(token));
    expect(again.data!.issueReceipt.id).toBe(found.data!.issueReceipt.id);
    expect(again.extensions!.cost).toMatchObject({ euro: 0, upstreamCalls: 0, dedupHits: 1 });
    expect(await t.credit(token)).toBeCloseTo(5 - 0.019, 6);
  });

  it('a return without a key, retried, is made once (keyed by the sale and the items returned)', async () => {
    const token = await configuredToken();
    const { data } = await gql<{ issueReceipt: Obj }>(token, ISSUE, { input: receipt({ tags: ['ret-1'] }) });
    const id = data.issueReceipt.id as string;
    await t.control('invoice/receiptAdvance', { id });
    await t.control('invoice/receiptAdvance', { id });
    await t.clearCalls();
    const RETURN = `mutation($id: ID!, $items: [ReceiptReturnItemInput!]!) { returnReceiptItems(id: $id, items: $items) { id type } }`;
    const [a, b] = (data.issueReceipt.items as Obj[]).map((i) => ({ itemId: i.id, quantity: 1 }));
    const r1 = await gql<{ returnReceiptItems: Obj }>(token, RETURN, { id, items: [a, b] });
    const r2 = await gql<{ returnReceiptItems: Obj }>(token, RETURN, { id, items: [b, a] });
    expect(r2.data.returnReceiptItems.id).toBe(r1.data.returnReceiptItems.id);
    expect([r1.euro, r2.euro]).toEqual([0.019, 0]);
    expect((await t.calls('invoice')).filter((c) => c.price > 0).map((c) => `${c.method} ${c.path.replace(/[0-9a-f]{24}/, '{id}')}`)).toEqual(['PATCH /IT-receipts/{id}']);
  });

  it.each([
    ['payments that do not add up', { cashPaymentAmount: 1 }, 'input.cashPaymentAmount'],
    ['an unknown VAT code', { items: [{ description: 'x', unitPrice: 1, vatRateCode: '21' }], cashPaymentAmount: 1, electronicPaymentAmount: 0 }, 'input.items[0].vatRateCode'],
    [
      'a discount larger than the line',
      { items: [{ description: 'x', unitPrice: 1, vatRateCode: '22', discount: 2 }], cashPaymentAmount: 0, electronicPaymentAmount: 0 },
      'input.items[0].discount',
    ],
    ['a bad lottery code', { lotteryCode: 'ABC' }, 'input.lotteryCode'],
    ['a bad fiscal id', { fiscalId: '12485671000' }, 'input.fiscalId'],
    [
      'a complimentary item with a discount',
      { items: [{ description: 'x', unitPrice: 2, vatRateCode: '22', discount: 1, complimentary: true }], cashPaymentAmount: 0, electronicPaymentAmount: 0 },
      'input.items[0].complimentary',
    ],
    ['an uncollected amount without invoiceIssuing', { cashPaymentAmount: 2.4, goodsUncollectedAmount: 5 }, 'input.invoiceIssuing'],
    ['invoiceIssuing without an uncollected amount', { invoiceIssuing: true }, 'input.invoiceIssuing'],
    ['a discount larger than the total', { cashPaymentAmount: 0, electronicPaymentAmount: 0, discount: 20 }, 'input.discount'],
    [
      'payments, discount and uncollected amounts that do not add up',
      { cashPaymentAmount: 1, discount: 1, servicesUncollectedAmount: 1, invoiceIssuing: true },
      'input.cashPaymentAmount',
    ],
    ['a negative uncollected amount', { servicesUncollectedAmount: -1, invoiceIssuing: true }, 'input.servicesUncollectedAmount'],
    ['a linked document longer than 50 characters', { linkedReceipt: 'X'.repeat(51) }, 'input.linkedReceipt'],
  ])('refuses %s before any call', async (_what, over, field) => {
    const token = await t.createToken(5);
    await t.clearCalls();
    const res = await t.gql(ISSUE, { input: receipt(over as Obj) }, auth(token));
    expect(res.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field });
    expect(await t.calls('invoice')).toEqual([]);
  });

  it("sends complimentary items, a receipt discount, uncollected amounts to invoice and a linked document, and reads them back with the service's totals", async () => {
    const token = await configuredToken();
    await t.clearCalls();
    const FIELDS = `id totalAmount discount goodsUncollectedAmount servicesUncollectedAmount totalUncollectedAmount invoiceIssuing totalDiscount totalGrossDiscount deductibleAmount linkedReceipt
      items { description totalAmount discount unitDiscount complimentary taxableAmount netTaxableAmount }`;
    const { data, euro } = await gql<{ issueReceipt: Obj }>(token, `mutation($input: ReceiptInput!) { issueReceipt(input: $input) { ${FIELDS} } }`, {
      input: {
        fiscalId: VAT,
        items: [
          // 2 × 10.00 less 2.20 (VAT 10 %): 17.80 owed; the gift (VAT 22 %) at its price, nothing owed.
          { description: 'Pranzo', quantity: 2, unitPrice: 10, vatRateCode: '10', discount: 2.2 },
          { description: 'Omaggio', quantity: 1, unitPrice: 3.05, vatRateCode: '22', complimentary: true },
        ],
        // 17.80 = 10.00 cash + 0.80 discount + 7.00 goods to invoice.
        cashPaymentAmount: 10,
        discount: 0.8,
        goodsUncollectedAmount: 7,
        invoiceIssuing: true,
        linkedReceipt: 'ORD-2025-456',
      },
    });
    expect(euro).toBe(0.019);
    const r = data.issueReceipt;
    expect(r).toMatchObject({
      discount: 0.8,
      goodsUncollectedAmount: 7,
      servicesUncollectedAmount: 0,
      totalUncollectedAmount: 7,
      invoiceIssuing: true,
      totalGrossDiscount: 2.2,
      totalDiscount: 2,
      deductibleAmount: 0,
      linkedReceipt: 'ORD-2025-456',
    });
    expect(r.items).toEqual([
      { description: 'Pranzo', totalAmount: 17.8, discount: 2.2, unitDiscount: 1.1, complimentary: false, taxableAmount: 16.18181818, netTaxableAmount: 16.18181818 },
      { description: 'Omaggio', totalAmount: 3.05, discount: 0, unitDiscount: 0, complimentary: true, taxableAmount: 2.5, netTaxableAmount: 2.5 },
    ]);
    // One paid submission; read again (free) the fields are the service's.
    const { data: read } = await gql<{ receipt: Obj }>(token, `query($id: ID!) { receipt(id: $id) { ${FIELDS} } }`, { id: r.id });
    expect(read.receipt).toEqual(r);
    expect((await t.calls('invoice')).map((c) => `${c.method} ${c.path.replace(/[0-9a-f]{24}/, '{id}')} ${c.price}`)).toEqual([
      'POST /IT-receipts 0.019',
      'GET /IT-receipts/{id} 0',
    ]);
    expect(await t.credit(token)).toBeCloseTo(5 - 0.019, 6);
  });

  it('a configuration cannot be deleted once receipts were sent (the service refuses it): UPSTREAM_REJECTED, nothing paid', async () => {
    const token = await configuredToken();
    await gql(token, ISSUE, { input: receipt({ tags: ['del-1'] }) });
    await t.clearCalls();
    const res = await t.gql(`mutation($f: String!) { deleteInvoicingConfiguration(fiscalId: $f) }`, { f: VAT }, auth(token));
    expect(res.errors?.[0]?.extensions).toMatchObject({ code: 'UPSTREAM_REJECTED', upstream: { status: 406 } });
    expect(res.extensions?.cost?.euro).toBe(0);
    expect((await t.calls('invoice')).map((c) => `${c.method} ${c.path} ${c.status}`)).toEqual([`DELETE /IT-configurations/${VAT} 406`]);
    const still = await gql<{ invoicingConfiguration: Obj | null }>(token, `query($f: String!) { invoicingConfiguration(fiscalId: $f) { fiscalId } }`, { f: VAT });
    expect(still.data.invoicingConfiguration).toEqual({ fiscalId: VAT });
  });

  it('a receipt issued at 23:57 Italian time is queued, not lost, and sent at midnight', async () => {
    const token = await configuredToken();
    // Move the emulator's clock (manual) to the next 23:57:00 in Rome.
    const clock = (await t.control('clock', { mode: 'manual' })) as { nowMs: number };
    const rome = (ms: number): number => {
      const p = new Intl.DateTimeFormat('en-GB', { timeZone: 'Europe/Rome', hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23' }).formatToParts(new Date(ms));
      const n = (k: string): number => Number(p.find((x) => x.type === k)!.value);
      return (n('hour') * 3600 + n('minute') * 60 + n('second')) * 1000 + (ms % 1000);
    };
    const target = (23 * 3600 + 57 * 60) * 1000;
    const wait = (target - rome(clock.nowMs) + 24 * 3600 * 1000) % (24 * 3600 * 1000);
    await t.control('clock', { advanceMs: wait });
    try {
      const { data } = await gql<{ issueReceipt: Obj }>(token, ISSUE, { input: receipt() });
      const id = data.issueReceipt.id as string;
      const s = subscribe(token, id);
      expect(await next(s, 'NEW')).toMatchObject({ status: 'NEW' });
      // The revenue agency is closed: the receipt does not move, and it is still there, queued.
      expect(await t.control('invoice/receiptAdvance', { id })).toEqual({ advanced: [{ id, status: null }] });
      expect(((await t.control('invoice/pending', {})) as { receipts: string[] }).receipts).toContain(id);
      // Midnight (3 minutes later): submitted by itself; then ready, pushed.
      await t.control('clock', { advanceMs: 3 * 60 * 1000 + 1000 });
      await t.control('invoice/receiptAdvance', { id });
      expect(await next(s, 'READY after midnight')).toMatchObject({ status: 'READY' });
    } finally {
      await t.control('clock', { mode: 'real' });
    }
  });
});
