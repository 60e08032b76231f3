/**
 * Structured invoices the FatturaPA schema allows are sent as given, and what it cannot carry is
 * refused before any call: quantities and unit prices keep up to 8 decimals, "today" is Italy's,
 * text outside Basic Latin and Latin-1 is BAD_USER_INPUT, a foreign postal code is written 00000.
 * Through the gateway against the emulator; exact upstream call lists.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { startTestStack, type TestStack } from '../../support/stack.ts';
import { CUSTOMER_VAT, invoiceInput as oneInvoice, party, SENDER_VAT } from '../../support/invoicing.ts';
import type { Obj } from '../../../contract/values.ts';

const ENV = { LAYER_SECRET: 'invoicing-input-test-secret-0123456789', INVOICING_POLL_INTERVAL_MS: '60000' };

let t: TestStack;
let token: string;

const auth = (): Record<string, string> => ({ authorization: `Bearer ${token}` });
const ISSUE = `mutation($input: InvoiceInput!) { issueInvoice(input: $input) { id issueDate taxableAmount lines { quantity unitPrice totalPrice } document(format: XML) { url } } }`;

// A number of its own each: the upstream refuses a number it already has.
const invoiceInput = (over: Obj = {}): Obj => oneInvoice({ number: `IN-${Math.floor(Math.random() * 1e9)}`, ...over });

const callsOf = async (): Promise<string[]> => (await t.calls('invoice')).map((c) => `${c.method} ${c.path.replace(/[0-9a-f]{24}/, '{id}')} ${c.status}`);

async function issued(input: Obj): Promise<{ inv: Obj; xml: string }> {
  const res = await t.gql<{ issueInvoice: Obj }>(ISSUE, { input }, auth());
  expect(res.errors, JSON.stringify(res.errors)).toBeUndefined();
  const inv = res.data!.issueInvoice;
  const xml = await (await fetch(String((inv.document as Obj).url))).text();
  return { inv, xml };
}

async function refused(input: Obj): Promise<Obj> {
  await t.clearCalls();
  const res = await t.gql(ISSUE, { input }, auth());
  expect(res.errors?.length, JSON.stringify(res)).toBe(1);
  expect(await callsOf()).toEqual([]);
  return res.errors![0].extensions as Obj;
}

beforeAll(async () => {
  t = await startTestStack(ENV);
  token = await t.createToken(20);
  const res = await t.gql(
    `mutation($input: ConfigureInvoicingInput!) { configureInvoicing(input: $input) { id } }`,
    { input: { fiscalId: SENDER_VAT, name: 'Openapi SpA', email: 'fatture@example.com' } },
    auth(),
  );
  expect(res.errors).toBeUndefined();
}, 60_000);

afterAll(async () => {
  await t?.close();
});

beforeEach(async () => {
  await t.control('invoice/timing', { sentAfterMs: 0, outcomeAfterMs: 0, paTermsAfterMs: 0 });
});

afterEach(() => {
  vi.useRealTimers();
});

describe('what the schema allows is sent as given', () => {
  it('quantities and unit prices with up to 8 decimals are written with their decimals, the line total from them', async () => {
    const { inv, xml } = await issued(
      invoiceInput({
        lines: [
          { description: 'Viti', quantity: 10, unitPrice: 1.234, vatRate: 22 },
          { description: 'Energia', quantity: 1.5, unitPrice: 0.12345678, vatRate: 22 },
        ],
      }),
    );
    expect(inv.lines).toEqual([
      { quantity: 10, unitPrice: 1.234, totalPrice: 12.34 },
      { quantity: 1.5, unitPrice: 0.12345678, totalPrice: 0.19 },
    ]);
    expect(xml).toContain('<PrezzoUnitario>1.234</PrezzoUnitario>');
    expect(xml).toContain('<Quantita>10.00</Quantita>');
    expect(xml).toContain('<PrezzoUnitario>0.12345678</PrezzoUnitario>');
    expect(inv.taxableAmount).toBe(12.53);
    const nine = await refused(invoiceInput({ lines: [{ description: 'x', quantity: 1, unitPrice: 0.123456789, vatRate: 22 }] }));
    expect(nine).toMatchObject({ code: 'BAD_USER_INPUT', field: 'input.lines[0].unitPrice' });
  });

  it('an invoice dated today in Italy is accepted while UTC is still on the day before', async () => {
    // 23:30 UTC on 1 March is 00:30 on 2 March in Rome.
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date('2025-03-01T23:30:00Z'));
    const { inv } = await issued(invoiceInput({ date: '2025-03-02' }));
    expect(inv.issueDate).toBe('2025-03-02');
    expect(await refused(invoiceInput({ date: '2025-03-03' }))).toMatchObject({ code: 'BAD_USER_INPUT', field: 'input.date' });
  });

  it('a foreign recipient whose postal code is not 5 digits is written with CAP 00000', async () => {
    const { xml } = await issued(
      invoiceInput({
        recipient: { name: 'Client Ltd', country: 'GB', vatNumber: 'GB123456789', street: '10 Downing St', zip: 'SW1A 2AA', city: 'London' },
        recipientCode: 'XXXXXXX',
      }),
    );
    expect(xml).toContain('<CAP>00000</CAP>');
    expect(xml).not.toContain('SW1A');
  });
});

describe('what FatturaPA cannot carry is refused before any call', () => {
  it('€, emoji and other scripts in text are BAD_USER_INPUT naming the field; Latin-1 letters are fine', async () => {
    expect(await refused(invoiceInput({ lines: [{ description: 'Prezzo in €', quantity: 1, unitPrice: 1, vatRate: 22 }] }))).toMatchObject({
      code: 'BAD_USER_INPUT',
      field: 'input.lines[0].description',
    });
    expect(await refused(invoiceInput({ recipient: party('Caffè ☕ Srl', CUSTOMER_VAT) }))).toMatchObject({ code: 'BAD_USER_INPUT', field: 'input.recipient.name' });
    expect(await refused(invoiceInput({ sender: party('Openapi SpA', SENDER_VAT, { city: 'Москва' }) }))).toMatchObject({ code: 'BAD_USER_INPUT', field: 'input.sender.city' });
    expect(await refused(invoiceInput({ number: 'FT-2025/°1' }))).toMatchObject({ code: 'BAD_USER_INPUT', field: 'input.number' });
    const { inv } = await issued(
      invoiceInput({ recipient: party('Caffè Società Srl', CUSTOMER_VAT), lines: [{ description: 'Perché sì', quantity: 1, unitPrice: 1, vatRate: 22 }] }),
    );
    expect(inv.id).toMatch(/^[0-9a-f]{24}$/);
  });

  it('raw XML with text outside Latin-1 or a CAP that is not 5 digits is refused', async () => {
    const { buildFattura, invoiceFromInput } = await import('../../../subgraphs/invoicing/fatturapa.ts');
    const xml = buildFattura(invoiceFromInput(invoiceInput({ number: 'RAW-1' }) as never), 'RAW1');
    const q = `mutation($xml: String!) { issueInvoiceXml(xml: $xml) { id } }`;
    for (const [bad, field] of [
      [xml.replace('<Descrizione>Consulenza</Descrizione>', '<Descrizione>Consulenza €</Descrizione>'), 'xml:DettaglioLinee[0]/Descrizione'],
      [xml.replace('<CAP>00100</CAP>', '<CAP>SW1A</CAP>'), 'xml:CedentePrestatore/Sede/CAP'],
    ] as const) {
      await t.clearCalls();
      const res = await t.gql(q, { xml: bad }, auth());
      expect(res.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field });
      expect(await callsOf()).toEqual([]);
    }
  });
});
