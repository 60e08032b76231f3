/**
 * Late notifications: with the emulator's callback delivery off, the invoicing poller reads
 * pending invoices (free GETs, within its budget) and subscribers still see every state.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';
import { startTestStack, type TestStack } from '../../support/stack.ts';
import { withSafety } from '../../support/safety.ts';

const ENV = {
  LAYER_SECRET: 'invoicing-poller-test-secret-0123456789',
  INVOICING_POLL_INTERVAL_MS: '50',
  INVOICING_POLL_LATE_AFTER_MS: '100',
  INVOICING_POLL_MAX_CALLS_PER_MIN: '6000',
  INVOICING_POLL_MAX_BACKOFF_MS: '200',
};

let t: TestStack;
let client: Client | null = null;

beforeAll(async () => {
  t = await startTestStack(ENV);
  await t.control('callbacks', { enabled: false });
  await t.control('invoice/timing', { sentAfterMs: 0, outcomeAfterMs: 0, paTermsAfterMs: 0 });
}, 60_000);

afterAll(async () => {
  await t?.control('callbacks', { enabled: true }).catch(() => undefined);
  await client?.dispose();
  await t?.close();
});

describe('invoicing poller', () => {
  it('finds SENT and DONE without any notification, and reads only the pending invoice', async () => {
    const token = await t.createToken(5);
    const headers = { authorization: `Bearer ${token}` };
    const conf = await t.gql(`mutation { configureInvoicing(input: { fiscalId: "12485671007", name: "Openapi SpA", email: "f@example.com" }) { id } }`, {}, headers);
    expect(conf.errors).toBeUndefined();
    const issued = await t.gql<{ issueInvoice: { id: string } }>(
      `mutation { issueInvoice(input: { number: "POLL-1", date: "2025-01-31", recipientCode: "ABC1234",
        sender: { name: "Openapi SpA", vatNumber: "12485671007", street: "Via 1", zip: "00100", city: "Roma", province: "RM" },
        recipient: { name: "Cliente", vatNumber: "01234567897", street: "Via 2", zip: "20100", city: "Milano", province: "MI" },
        lines: [{ description: "x", unitPrice: 10, vatRate: 22 }] }) { id } }`,
      {},
      headers,
    );
    expect(issued.errors).toBeUndefined();
    const id = issued.data!.issueInvoice.id;
    client = createClient({ url: t.stack.gateway.wsUrl, webSocketImpl: WebSocket, connectionParams: headers, retryAttempts: 0, lazy: true });
    const it1 = client.iterate<{ invoiceUpdated: { state: string } }>({ query: `subscription($id: ID) { invoiceUpdated(id: $id) { state } }`, variables: { id } });
    const states: string[] = [];
    const next = async (): Promise<string> => {
      const r = await withSafety(it1.next(), 'invoice state', 20_000);
      expect(r.done).toBe(false);
      return r.value.data!.invoiceUpdated.state;
    };
    states.push(await next());
    await t.control('invoice/advance', { id });
    states.push(await next());
    await t.control('invoice/advance', { id });
    states.push(await next());
    expect(states).toEqual(['NEW', 'SENT', 'DONE']);
    const reads = (await t.calls('invoice')).filter((c) => c.method === 'GET' && c.path.startsWith('/IT-invoices/'));
    expect(reads.length).toBeGreaterThanOrEqual(2);
    expect(new Set(reads.map((c) => c.path))).toEqual(new Set([`/IT-invoices/${id}`]));
    expect(reads.every((c) => c.price === 0)).toBe(true);
  });
});
