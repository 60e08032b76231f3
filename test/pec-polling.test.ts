/**
 * When the provider's callback never comes (delivery switched off in the emulator), the kit's
 * poller reads a mailbox waiting for its verification and the change is still pushed to the
 * subscriber; a usable mailbox is not read again at that rate (its slow rate is a day).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';
import { PDF_B64, PEC_CF } from './support/pec.ts';
import { startTestStack, type TestStack } from './support/stack.ts';
import { withSafety } from './support/safety.ts';

type Obj = Record<string, unknown>;
let t: TestStack;
let client: Client;

beforeAll(async () => {
  t = await startTestStack({ LAYER_SECRET: 'pec-polling-test-secret-0123456789', PEC_POLL_INTERVAL_MS: '100', PEC_POLL_LATE_AFTER_MS: '200', PEC_POLL_MAX_CALLS_PER_MIN: '600' });
  await t.control('pec/timing', { verifyAfterMs: 0 });
  await t.control('callbacks', { enabled: false });
  client = createClient({ url: t.stack.gateway.wsUrl, webSocketImpl: WebSocket, retryAttempts: 0, lazy: true });
});

afterAll(async () => {
  await client?.dispose();
  await t?.control('callbacks', { enabled: true }).catch(() => undefined);
  await t?.close();
});

describe('mailbox status without callbacks', () => {
  it('the poller finds the verification and the subscriber gets ACTIVE', async () => {
    const input = {
      address: 'polled.box@legalmail.it', boxType: 'STANDARD', customerType: 'PV',
      applicant: { firstName: 'Mario', lastName: 'Rossi', email: 'mario@example.com', phone: '0548798569', taxCode: PEC_CF, birthDate: '1982-04-11', gender: 'M', birthCountry: 'IT' },
      holder: { address: 'via Verdi 20', city: 'Roma', postalCode: '00042', province: 'RM', country: 'IT' },
    };
    const reg = await t.gql<{ registerMailbox: Obj }>(`mutation($input: RegisterMailboxInput!) { registerMailbox(input: $input) { id } }`, { input });
    expect(reg.errors).toBeUndefined();
    const id = String(reg.data!.registerMailbox.id);
    const it = client.iterate<Obj>({ query: `subscription($id: ID!) { mailboxUpdated(id: $id) { status } }`, variables: { id } });
    const next = async (): Promise<unknown> => ((await withSafety(it.next(), 'mailboxUpdated')).value?.data?.mailboxUpdated as Obj).status;
    expect(await next()).toBe('REGISTERED');
    const up = await t.gql(`mutation($id: ID!, $d: [String!]!) { uploadMailboxActivation(id: $id, documents: $d) { status } }`, { id, d: [PDF_B64, PDF_B64] });
    expect(up.errors).toBeUndefined();
    expect(await next()).toBe('ACTIVATING');
    await t.clearCalls();
    await t.control('pec/advance', { id });
    expect(await next()).toBe('ACTIVE');
    // Found by a free read of the mailbox, not by a callback.
    const reads = (await t.calls('pec')).filter((c) => c.method === 'GET' && c.path === `/pec/${id}`);
    expect(reads.length).toBeGreaterThanOrEqual(1);
    expect(reads.every((c) => c.price === 0)).toBe(true);
    await it.return?.();
  });
});
