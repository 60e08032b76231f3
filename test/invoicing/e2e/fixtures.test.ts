/**
 * Every 200 example of the vendor's invoicing specs (subgraphs/invoicing/fixtures/vendor-examples.json:
 * invoice.openapi.json and sdi.openapi.json) goes through the whole stack (gateway → invoicing
 * subgraph → upstream client → a stub answering the example, envelope included) and comes out of
 * the gateway with its values intact, or is listed in `NOT_REACHED` with the reason no operation
 * makes the layer receive it. Each row's expected `data` is built from the example through the
 * documented mapping (schema.graphql); every key of the example's records is either mapped or
 * listed in the row's `notExposed` with the reason, so a row cannot silently cover part of it.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, startStub, type Stub } from '../../support/stub.ts';
import { startTestStack, type TestStack } from '../../support/stack.ts';
import type { Obj } from '../../../contract/values.ts';

const EXAMPLES = JSON.parse(readFileSync(new URL('../../../subgraphs/invoicing/fixtures/vendor-examples.json', import.meta.url), 'utf8')) as Record<string, unknown>;
const example = (key: string): Obj => structuredClone(EXAMPLES[key]) as Obj;

/** Examples no operation of the layer receives, and why. */
const NOT_REACHED: Record<string, string> = {
  'sdi POST /simulate/{type}': "the SDI sandbox's simulation trigger, for the vendor's own tests; the emulator's control API plays that part",
};

const EVENTS: Record<string, string> = {
  receipt: 'RECEIPT',
  'receipt-credentials': 'RECEIPT_CREDENTIALS',
  'receipt-retry': 'RECEIPT_RETRY',
  'receipt-error': 'RECEIPT_ERROR',
  'customer-invoice': 'CUSTOMER_INVOICE',
  'supplier-invoice': 'SUPPLIER_INVOICE',
};
const iso = (seconds: unknown): string | null =>
  typeof seconds === 'number' ? new Date(seconds * 1000).toISOString() : typeof seconds === 'string' ? new Date(Date.parse(seconds)).toISOString() : null;

const CONFIG_FIELDS = `id fiscalId name email customerInvoices supplierInvoices receipts receiptsCredentialsTaxCode events active createdAt`;
/** Configuration keys the schema does not show, and why. */
const CONFIG_NOT_EXPOSED: Record<string, string> = {
  api_configurations: 'exposed as `events`; each callback is the layer’s own signed URL (or the caller’s), not shown back',
  taxCode: 'a stray copy of a credentials tax code beside `receipts_authentication: null` in the list example; the credentials’ tax code is `receiptsCredentialsTaxCode`',
};

function configOut(c: Obj): Obj {
  return {
    id: c.id,
    fiscalId: c.fiscal_id,
    name: c.name,
    email: c.email,
    customerInvoices: c.customer_invoice !== false,
    supplierInvoices: c.supplier_invoice === true,
    receipts: c.receipts === true,
    receiptsCredentialsTaxCode: (c.receipts_authentication as Obj | null)?.taxCode ?? null,
    events: [...new Set((c.api_configurations as Obj[]).map((a) => EVENTS[String(a.event).replace(/_/g, '-')]))],
    active: c.active,
    createdAt: iso(c.create_timestamp),
  };
}
const CONFIG_MAPPED = ['id', 'fiscal_id', 'name', 'email', 'customer_invoice', 'supplier_invoice', 'receipts', 'receipts_authentication', 'active', 'create_timestamp'];

const RECEIPT_FIELDS = `id fiscalId status rawStatus type documentNumber documentDate totalAmount totalTaxableAmount totalVatAmount cashPaymentAmount electronicPaymentAmount ticketRestaurantPaymentAmount ticketRestaurantQuantity lotteryCode transactionId tags parentReceiptId errorCode errorMessage createdAt updatedAt
  goodsUncollectedAmount servicesUncollectedAmount totalUncollectedAmount invoiceIssuing discount totalDiscount totalGrossDiscount deductibleAmount linkedReceipt
  items { id description quantity grossPrice vatRate totalAmount returnedQuantity unitPrice taxableAmount netTaxableAmount vatAmount discount unitDiscount complimentary sku }`;
const RECEIPT_MAPPED = [
  'id',
  'fiscal_id',
  'status',
  'type',
  'document_number',
  'document_date',
  'total_amount',
  'total_taxable_amount',
  'total_vat_amount',
  'cash_payment_amount',
  'electronic_payment_amount',
  'ticket_restaurant_payment_amount',
  'ticket_restaurant_quantity',
  'lottery_code',
  'transaction_id',
  'tags',
  'parent_receipt_id',
  'error_code',
  'error_message',
  'created_at',
  'update_timestamp',
  'items',
  'invoice_issuing',
  'services_uncollected_amount',
  'goods_uncollected_amount',
  'total_uncollected_amount',
  'discount',
  'total_discount',
  'total_gross_discount',
  'deductible_amount',
  'linked_receipt',
];
const RECEIPT_NOT_EXPOSED: Record<string, string> = {
  create_timestamp: 'the same instant as created_at (createdAt)',
};
const ITEM_MAPPED = [
  'id',
  'description',
  'quantity',
  'gross_price',
  'vat_rate',
  'total_amount',
  'return',
  'unit_price',
  'taxable_amount',
  'net_taxable_amount',
  'vat_amount',
  'gross_discount',
  'unit_discount',
  'complimentary',
  'sku',
];
const ITEM_NOT_EXPOSED: Record<string, string> = {};

const num = (v: unknown): number | null => (typeof v === 'number' ? v : null);
function receiptOut(r: Obj): Obj {
  return {
    id: r.id,
    fiscalId: r.fiscal_id,
    status: String(r.status).toUpperCase(),
    rawStatus: r.status,
    type: String(r.type).toUpperCase(),
    documentNumber: r.document_number,
    documentDate: r.document_date,
    totalAmount: r.total_amount,
    totalTaxableAmount: r.total_taxable_amount,
    totalVatAmount: r.total_vat_amount,
    cashPaymentAmount: num(r.cash_payment_amount),
    electronicPaymentAmount: num(r.electronic_payment_amount),
    ticketRestaurantPaymentAmount: num(r.ticket_restaurant_payment_amount),
    ticketRestaurantQuantity: num(r.ticket_restaurant_quantity),
    lotteryCode: r.lottery_code ?? null,
    transactionId: r.transaction_id ?? null,
    tags: r.tags ?? [],
    parentReceiptId: r.parent_receipt_id ?? null,
    errorCode: r.error_code ?? null,
    errorMessage: r.error_message ?? null,
    createdAt: iso(r.created_at),
    updatedAt: iso(r.update_timestamp),
    goodsUncollectedAmount: num(r.goods_uncollected_amount),
    servicesUncollectedAmount: num(r.services_uncollected_amount),
    totalUncollectedAmount: num(r.total_uncollected_amount),
    invoiceIssuing: typeof r.invoice_issuing === 'boolean' ? r.invoice_issuing : null,
    discount: num(r.discount),
    totalDiscount: num(r.total_discount),
    totalGrossDiscount: num(r.total_gross_discount),
    deductibleAmount: num(r.deductible_amount),
    linkedReceipt: typeof r.linked_receipt === 'string' && r.linked_receipt !== '' ? r.linked_receipt : null,
    items: (r.items as Obj[]).map((i) => ({
      id: i.id,
      description: i.description,
      quantity: i.quantity,
      grossPrice: i.gross_price,
      vatRate: i.vat_rate,
      totalAmount: i.total_amount,
      returnedQuantity: i.return,
      unitPrice: i.unit_price,
      taxableAmount: i.taxable_amount,
      netTaxableAmount: num(i.net_taxable_amount),
      vatAmount: i.vat_amount,
      discount: i.gross_discount,
      unitDiscount: num(i.unit_discount),
      complimentary: i.complimentary,
      sku: i.sku ?? null,
    })),
  };
}

/** Every key of `record` is mapped or listed as not exposed (and every listed key is present). */
function covered(record: Obj, mapped: string[], notExposed: Record<string, string>, where: string): void {
  const left = Object.keys(record).filter((k) => !mapped.includes(k) && !(k in notExposed));
  expect(left, `${where}: keys neither mapped nor listed`).toEqual([]);
}

let stub: Stub;
let t: TestStack;
/** The example keys the stub served during one row (a creation is followed by a free re-read of the list). */
let served: string[] = [];

beforeAll(async () => {
  stub = await startStub((req, res) => {
    const path = req.path.split('?')[0];
    const route = (key: string): void => {
      served.push(key);
      const ex = EXAMPLES[key];
      if (typeof ex === 'string') res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(ex);
      else json(res, 200, ex);
    };
    if (req.method === 'GET' && path === '/IT-configurations') return route('invoice GET /IT-configurations');
    if (req.method === 'POST' && path === '/api_configurations') return route('invoice POST /IT-configurations');
    if (req.method === 'GET' && path.startsWith('/IT-configurations/')) return route('invoice GET /IT-configurations/{fiscal_id}');
    if (req.method === 'PATCH' && path === '/IT-configuration') return route('invoice PATCH /IT-configurations/{fiscal_id}');
    if (req.method === 'DELETE' && path.startsWith('/IT-configurations/')) return route('invoice DELETE /IT-configurations/{fiscal_id}');
    if (req.method === 'GET' && path === '/IT-receipts') return route('invoice GET /IT-receipts');
    if (req.method === 'GET' && path.startsWith('/IT-invoices/'))
      return json(res, 200, { data: { id: path.split('/')[2], state: 'DONE', direction: 'outgoing' }, success: true, message: '', error: null });
    if (req.method === 'GET' && path.startsWith('/invoices_download/')) return route('sdi GET /invoices_download/{uuid} application/octet-stream');
    json(res, 404, { data: 'null', success: false, message: 'not in the fixtures', error: 404 });
  });
  t = await startTestStack({ OPENAPI_INVOICE_URL: stub.url, OPENAPI_TOKEN: 'test-token', OPENAPI_MAX_RETRIES: '0', LAYER_SECRET: 'invoicing-fixtures-secret-0123456789' });
}, 60_000);

afterAll(async () => {
  await t?.close();
  await stub?.close();
});

async function data<T = Obj>(query: string, variables: Obj = {}): Promise<T> {
  const res = await t.gql<T>(query, variables);
  expect(res.errors, JSON.stringify(res.errors)).toBeUndefined();
  return res.data as T;
}

const ROWS: Record<string, () => Promise<void>> = {
  'invoice GET /IT-configurations': async () => {
    const ex = example('invoice GET /IT-configurations');
    const out = await data<{ invoicingConfigurations: Obj[] }>(`{ invoicingConfigurations { ${CONFIG_FIELDS} } }`);
    expect(out.invoicingConfigurations).toEqual((ex.data as Obj[]).map(configOut));
    for (const c of ex.data as Obj[]) covered(c, CONFIG_MAPPED, CONFIG_NOT_EXPOSED, 'configuration');
  },
  'invoice POST /IT-configurations': async () => {
    const ex = example('invoice POST /IT-configurations');
    const out = await data<{ configureInvoicing: Obj }>(
      `mutation { configureInvoicing(input: { fiscalId: "12485671007", name: "nameCompany", email: "youremail@mail.com" }) { ${CONFIG_FIELDS} } }`,
    );
    expect(out.configureInvoicing).toEqual(configOut(ex.data as Obj));
    covered(ex.data as Obj, CONFIG_MAPPED, CONFIG_NOT_EXPOSED, 'configuration');
  },
  'invoice GET /IT-configurations/{fiscal_id}': async () => {
    const ex = example('invoice GET /IT-configurations/{fiscal_id}');
    const out = await data<{ invoicingConfiguration: Obj }>(`{ invoicingConfiguration(fiscalId: "12485671007") { ${CONFIG_FIELDS} } }`);
    expect(out.invoicingConfiguration).toEqual(configOut(ex.data as Obj));
  },
  'invoice PATCH /IT-configurations/{fiscal_id}': async () => {
    const ex = example('invoice PATCH /IT-configurations/{fiscal_id}');
    const out = await data<{ updateInvoicingConfiguration: Obj }>(
      `mutation { updateInvoicingConfiguration(input: { fiscalId: "12485671007", receipts: true }) { ${CONFIG_FIELDS} } }`,
    );
    expect(out.updateInvoicingConfiguration).toEqual(configOut(ex.data as Obj));
  },
  'invoice DELETE /IT-configurations/{fiscal_id}': async () => {
    // The answer carries no record (`data` is "null"): the mutation answers the fiscal id deleted.
    const out = await data<{ deleteInvoicingConfiguration: string }>(`mutation { deleteInvoicingConfiguration(fiscalId: "12485671007") }`);
    expect(out.deleteInvoicingConfiguration).toBe('12485671007');
  },
  'invoice GET /IT-receipts': async () => {
    const ex = example('invoice GET /IT-receipts');
    const out = await data<{ receipts: { nodes: Obj[] } }>(`{ receipts(first: 100) { nodes { ${RECEIPT_FIELDS} } } }`);
    expect(out.receipts.nodes).toEqual((ex.data as Obj[]).map(receiptOut));
    for (const r of ex.data as Obj[]) {
      covered(r, RECEIPT_MAPPED, RECEIPT_NOT_EXPOSED, 'receipt');
      for (const i of r.items as Obj[]) covered(i, ITEM_MAPPED, ITEM_NOT_EXPOSED, 'receipt item');
    }
  },
  'sdi GET /invoices_download/{uuid} application/octet-stream': async () => {
    const xml = EXAMPLES['sdi GET /invoices_download/{uuid} application/octet-stream'] as string;
    const out = await data<{ invoice: { document: { url: string } } }>(`{ invoice(id: "0123456789abcdef01234567") { document { url } } }`);
    const res = await fetch(out.invoice.document.url);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe(xml);
  },
};

describe('every 200 example of the invoicing specs', () => {
  it('has a row or a reason', () => {
    const keys = Object.keys(EXAMPLES).filter((k) => !k.startsWith('_'));
    expect(keys.filter((k) => !(k in ROWS) && !(k in NOT_REACHED))).toEqual([]);
    expect(Object.keys(ROWS).filter((k) => !(k in EXAMPLES))).toEqual([]);
  });

  it.each(Object.keys(ROWS))('%s comes out of the gateway intact', async (key) => {
    served = [];
    await ROWS[key]();
    expect(served).toContain(key);
  });
});
