/**
 * Invoicing money guarantees through the gateway against the emulator: an invoice is never paid
 * twice by a retry (with or without an idempotency key, with or without the first answer), and the
 * SDI's duplicate refusal (00404) as the emulator models it. Exact upstream call lists; the SDI moves
 * only when told (`invoice/timing` 0, then `invoice/advance`).
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestStack, type TestStack } from '../../support/stack.ts';
import { invoiceInput, party, SENDER_VAT } from '../../support/invoicing.ts';
import type { Obj } from '../../../contract/values.ts';

// The deployment says the account has an invoicing subscription; the accounts below have none active.
const ENV = { LAYER_SECRET: 'invoicing-money-test-secret-0123456789', INVOICING_RELAY_ALLOW_PRIVATE: '1', INVOICING_POLL_INTERVAL_MS: '60000', OPENAPI_PRICE_PLAN: 'subscription' };

const PRICE = 0.154;

let t: TestStack;

const auth = (token: string): Record<string, string> => ({ authorization: `Bearer ${token}` });

async function ok<T = Obj>(token: string, query: string, variables: Obj = {}): Promise<{ data: T; euro: number }> {
  const res = await t.gql<T>(query, variables, auth(token));
  expect(res.errors, JSON.stringify(res.errors)).toBeUndefined();
  return { data: res.data as T, euro: res.extensions!.cost!.euro };
}

async function fail(token: string, query: string, variables: Obj = {}): Promise<{ message: string; extensions: Obj }> {
  const res = await t.gql(query, variables, auth(token));
  expect(res.errors?.length, JSON.stringify(res)).toBe(1);
  return res.errors![0] as unknown as { message: string; extensions: Obj };
}

const CONFIGURE = `mutation($input: ConfigureInvoicingInput!) { configureInvoicing(input: $input) { id } }`;
const ISSUE = `mutation($input: InvoiceInput!, $key: String) { issueInvoice(input: $input, idempotencyKey: $key) { id state documentNumber sdi { status } } }`;
const READ = `query($id: ID!) { invoice(id: $id) { id state sdi { status message } } }`;

async function account(credit = 5): Promise<string> {
  const token = await t.createToken(credit);
  await ok(token, CONFIGURE, { input: { fiscalId: SENDER_VAT, name: 'Openapi SpA', email: 'fatture@example.com' } });
  await t.clearCalls();
  return token;
}

const callsOf = async (): Promise<string[]> => (await t.calls('invoice')).map((c) => `${c.method} ${c.path.replace(/[0-9a-f]{24}/, '{id}')} ${c.status}`);

beforeAll(async () => {
  t = await startTestStack(ENV);
}, 60_000);

afterAll(async () => {
  await t?.close();
});

beforeEach(async () => {
  await t.control('invoice/timing', { sentAfterMs: 0, outcomeAfterMs: 0, paTermsAfterMs: 0 });
});

describe('an invoice is paid once', () => {
  it('a retry without an idempotencyKey returns the same invoice and pays nothing more', async () => {
    const token = await account();
    const first = await ok<{ issueInvoice: Obj }>(token, ISSUE, { input: invoiceInput() });
    const again = await ok<{ issueInvoice: Obj }>(token, ISSUE, { input: invoiceInput() });
    expect(again.data.issueInvoice.id).toBe(first.data.issueInvoice.id);
    expect([first.euro, again.euro]).toEqual([PRICE, 0]);
    expect(await callsOf()).toEqual(['POST /IT-invoices 200']);
    expect(await t.credit(token)).toBeCloseTo(5 - PRICE, 6);
  });

  it('another document with the same number and year, without a key, is refused before any call; with a key it is sent and the SDI refuses it (00404)', async () => {
    const token = await account();
    const first = (await ok<{ issueInvoice: Obj }>(token, ISSUE, { input: invoiceInput({ number: 'DUP-7' }) })).data.issueInvoice;
    await t.clearCalls();
    const other = invoiceInput({ number: 'DUP-7', date: '2025-02-03', lines: [{ description: 'Altro', quantity: 1, unitPrice: 10, vatRate: 22 }] });
    const refused = await fail(token, ISSUE, { input: other });
    expect(refused.extensions.code).toBe('IDEMPOTENCY_KEY_REUSED');
    expect(refused.message).toContain('invoice DUP-7 of 2025');
    expect(refused.message).toContain('pass an idempotencyKey');
    expect(await callsOf()).toEqual([]);

    // Sent knowingly under a key of the caller's: the service takes (and charges) it, the SDI refuses it.
    const second = (await ok<{ issueInvoice: Obj }>(token, ISSUE, { input: other, key: 'dup-7-corrected' })).data.issueInvoice;
    expect(second.id).not.toBe(first.id);
    for (let i = 0; i < 2; i++) {
      await t.control('invoice/advance', { id: first.id });
      await t.control('invoice/advance', { id: second.id });
    }
    expect((await ok<{ invoice: Obj }>(token, READ, { id: first.id })).data.invoice).toMatchObject({ state: 'DONE', sdi: { status: 'DELIVERED' } });
    expect((await ok<{ invoice: Obj }>(token, READ, { id: second.id })).data.invoice).toMatchObject({
      state: 'ERROR',
      sdi: { status: 'ERROR', message: '00404: Fattura duplicata' },
    });
    expect(await t.credit(token)).toBeCloseTo(5 - 2 * PRICE, 6);
  });

  it('the same number in another year is another invoice', async () => {
    const token = await account();
    const a = (await ok<{ issueInvoice: Obj }>(token, ISSUE, { input: invoiceInput({ number: 'Y-1', date: '2024-12-31' }) })).data.issueInvoice;
    const b = (await ok<{ issueInvoice: Obj }>(token, ISSUE, { input: invoiceInput({ number: 'Y-1', date: '2025-01-02' }) })).data.issueInvoice;
    expect(b.id).not.toBe(a.id);
    for (const id of [a.id, b.id]) for (let i = 0; i < 2; i++) await t.control('invoice/advance', { id });
    expect((await ok<{ invoice: Obj }>(token, READ, { id: b.id })).data.invoice).toMatchObject({ state: 'DONE' });
    expect((await callsOf()).filter((c) => c.startsWith('POST')).length).toBe(2);
  });

  it("a self-invoice (TD17) numbered like the company's TD01 of the year is another invoice, sent without a key", async () => {
    const token = await account();
    const first = await ok<{ issueInvoice: Obj }>(token, ISSUE, { input: invoiceInput({ number: 'SELF-1' }) });
    const self = await ok<{ issueInvoice: Obj }>(token, ISSUE, {
      input: invoiceInput({
        number: 'SELF-1',
        documentType: 'TD17',
        sender: { name: 'Acme Inc', country: 'US', vatNumber: '123456789', street: '1 Main St', zip: '00000', city: 'Boston' },
        recipient: party('Openapi SpA', SENDER_VAT),
        recipientCode: '0000000',
      }),
    });
    expect(self.data.issueInvoice.id).not.toBe(first.data.issueInvoice.id);
    expect([first.euro, self.euro]).toEqual([PRICE, PRICE]);
    expect(await callsOf()).toEqual(['POST /IT-invoices 200', 'POST /IT-invoices 200']);
  });

  it('a document-type rule refused arrives with extensions.rule, before any upstream call', async () => {
    const token = await account();
    const res = await t.gql(ISSUE, { input: invoiceInput({ number: 'NC-1', documentType: 'TD04' }) }, auth(token));
    expect(res.errors?.length, JSON.stringify(res)).toBe(1);
    expect(res.errors![0].extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'input.relatedInvoices', rule: 'TD04_REFERENCE_REQUIRED' });
    expect(res.extensions?.cost).toMatchObject({ euro: 0, upstreamCalls: 0 });
    expect(await callsOf()).toEqual([]);
    expect(await t.credit(token)).toBe(5);
  });

  it('a submission whose answer is lost is found by the retry (free list by sender, number and date) and never paid twice', async () => {
    const token = await account();
    await t.control('faults', { area: 'invoice', pathPrefix: '/IT-invoices', reset: true, count: 1 });
    const lost = await fail(token, ISSUE, { input: invoiceInput({ number: 'LOST-1' }) });
    expect(lost.extensions.outcome).toBe('unknown');
    expect(lost.extensions.atRisk).toBe(PRICE);
    expect(await t.credit(token)).toBeCloseTo(5 - PRICE, 6);

    await t.clearCalls();
    const found = await ok<{ issueInvoice: Obj }>(token, ISSUE, { input: invoiceInput({ number: 'LOST-1' }) });
    expect(found.data.issueInvoice).toMatchObject({ state: 'NEW', documentNumber: 'LOST-1', sdi: { status: 'BOOKED' } });
    expect(found.euro).toBe(0);
    // And again: now bound to the key, from the store.
    const again = await ok<{ issueInvoice: Obj }>(token, ISSUE, { input: invoiceInput({ number: 'LOST-1' }) });
    expect(again.data.issueInvoice.id).toBe(found.data.issueInvoice.id);
    // One free list and one free read; no second submission.
    expect(await callsOf()).toEqual(['GET /invoices 200', 'GET /IT-invoices/{id} 200']);
    expect(await t.credit(token)).toBeCloseTo(5 - PRICE, 6);
    // The account has that one invoice.
    const listed = await ok<{ invoices: { nodes: Obj[] } }>(token, `{ invoices(filter: { documentNumber: "LOST-1" }) { nodes { id } } }`);
    expect(listed.data.invoices.nodes).toEqual([{ id: found.data.issueInvoice.id }]);
  });
});

describe('prices under OPENAPI_PRICE_PLAN=subscription', () => {
  it('an account without an active subscription is estimated, metered and charged the pay-as-you-go price, not the subscription one', async () => {
    const token = await account();
    const res = await t.gql(ISSUE, { input: invoiceInput({ number: 'PLAN-1' }) }, auth(token));
    expect(res.errors).toBeUndefined();
    expect(res.extensions!.cost!.estimate?.euro).toBe(PRICE);
    expect(res.extensions!.cost!.euro).toBe(PRICE);
    expect(await t.credit(token)).toBeCloseTo(5 - PRICE, 6);
  });
});

describe('the configuration surcharge', () => {
  it('two configurations created at once at nine existing: the eleventh is metered €1, like the service charges it', async () => {
    const { makeItalianVat } = await import('../../../contract/checksums.ts');
    const token = await t.createToken(5);
    const vats = Array.from({ length: 11 }, (_, i) => makeItalianVat(String(2000000000 + i * 13)));
    for (const vat of vats.slice(0, 9)) {
      const { euro } = await ok(token, CONFIGURE, { input: { fiscalId: vat, name: `Company ${vat}`, email: `${vat}@example.com` } });
      expect(euro).toBe(0);
    }
    await t.clearCalls();
    const both = await Promise.all(
      vats
        .slice(9)
        .map((vat) =>
          t.gql(
            `mutation($input: ConfigureInvoicingInput!) { c${vat}: configureInvoicing(input: $input) { id } }`,
            { input: { fiscalId: vat, name: `Company ${vat}`, email: `${vat}@example.com` } },
            auth(token),
          ),
        ),
    );
    for (const r of both) expect(r.errors, JSON.stringify(r.errors)).toBeUndefined();
    expect(both.map((r) => r.extensions!.cost!.euro).sort()).toEqual([0, 1]);
    expect(await t.credit(token)).toBe(4);
    // The tenth: counted (9), reserved at €1, the list read again (free) and settled at €0 by its place; the eleventh: counted (10), €1.
    expect((await callsOf()).sort()).toEqual([
      'GET /IT-configurations 200',
      'GET /IT-configurations 200',
      'GET /IT-configurations 200',
      'POST /api_configurations 200',
      'POST /api_configurations 200',
    ]);
  });

  it('the tenth and eleventh created at once by two tokens of one account (two tenants, no common lease) are metered €0 and €1, never both €0', async () => {
    const { makeItalianVat } = await import('../../../contract/checksums.ts');
    const first = await t.createToken(5);
    const owner = ((await (await fetch(`${t.stack.emulatorUrl}/_emulator/tokens/${encodeURIComponent(first)}`)).json()) as { owner: string }).owner;
    const second = ((await t.control('tokens', { credit: 5, owner })) as { token: string }).token;
    const vats = Array.from({ length: 11 }, (_, i) => makeItalianVat(String(4000000000 + i * 19)));
    for (const vat of vats.slice(0, 9)) await ok(first, CONFIGURE, { input: { fiscalId: vat, name: `Company ${vat}`, email: `${vat}@example.com` } });
    await t.clearCalls();
    // Each count takes 300 ms, so both tokens read nine before either creates.
    await t.control('latency', { area: 'invoice', ms: 300 });
    try {
      const both = await Promise.all(
        [first, second].map((token, i) => t.gql(CONFIGURE, { input: { fiscalId: vats[9 + i], name: 'Company', email: `c${i}@example.com` } }, auth(token))),
      );
      for (const r of both) expect(r.errors, JSON.stringify(r.errors)).toBeUndefined();
      expect(both.map((r) => r.extensions!.cost!.euro).sort()).toEqual([0, 1]);
    } finally {
      await t.control('latency', { area: 'invoice', ms: 0 });
    }
    // One wallet per account: €1 in all.
    expect([await t.credit(first), await t.credit(second)]).toEqual([4, 4]);
    // Each: a count, the creation, the list again (free).
    expect((await callsOf()).sort()).toEqual([
      'GET /IT-configurations 200',
      'GET /IT-configurations 200',
      'GET /IT-configurations 200',
      'GET /IT-configurations 200',
      'POST /api_configurations 200',
      'POST /api_configurations 200',
    ]);
  });
});
