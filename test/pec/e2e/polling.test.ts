/**
 * When the provider's callback never comes (delivery switched off in the emulator), the kit's
 * poller reads a mailbox waiting for its verification and the change is still pushed to the
 * subscriber; a usable mailbox is not read again at that rate (its slow rate is a day). An uploaded
 * company-register notification is watched through the free list only (its read by id would send
 * it), by any token of the account.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';
import { PDF_B64, PEC_CF, registerNotificationInput } from '../../support/pec.ts';
import { startTestStack, type TestStack } from '../../support/stack.ts';
import { withSafety } from '../../support/safety.ts';
import type { Obj } from '../../../contract/values.ts';

let t: TestStack;
let client: Client;
const clients: Client[] = [];

beforeAll(async () => {
  t = await startTestStack({ LAYER_SECRET: 'pec-polling-test-secret-0123456789', PEC_POLL_INTERVAL_MS: '100', PEC_POLL_LATE_AFTER_MS: '200', PEC_POLL_MAX_CALLS_PER_MIN: '600' });
  await t.control('pec/timing', { verifyAfterMs: 0 });
  await t.control('callbacks', { enabled: false });
  client = createClient({ url: t.stack.gateway.wsUrl, webSocketImpl: WebSocket, retryAttempts: 0, lazy: true });
});

afterAll(async () => {
  await client?.dispose();
  await Promise.allSettled(clients.map(async (c) => c.dispose()));
  await t?.control('callbacks', { enabled: true }).catch(() => undefined);
  await t?.close();
});

describe('mailbox status without callbacks', () => {
  it('the poller finds the verification and the subscriber gets ACTIVE', async () => {
    const input = {
      address: 'polled.box@legalmail.it',
      boxType: 'STANDARD',
      customerType: 'PV',
      applicant: {
        firstName: 'Mario',
        lastName: 'Rossi',
        email: 'mario@example.com',
        phone: '0548798569',
        taxCode: PEC_CF,
        birthDate: '1982-04-11',
        gender: 'M',
        birthCountry: 'IT',
      },
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

describe('uploaded company-register notification seen by another token of the account', () => {
  it('is never read by id (that would send it): the free list answers, and its finalize elsewhere is pushed', async () => {
    const owner = 'pec-two-tokens@example.com';
    const tokenOf = async (): Promise<string> => ((await t.control('tokens', { owner, credit: 100 })) as { token: string }).token;
    const a = await tokenOf();
    const b = await tokenOf();
    const as = (tk: string): Record<string, string> => ({ authorization: `Bearer ${tk}` });
    const input = registerNotificationInput('two.tokens@legalmail.it');
    const started = await t.gql<{ notifyCompanyRegister: Obj }>(`mutation($input: NotifyCompanyRegisterInput!) { notifyCompanyRegister(input: $input) { id } }`, { input }, as(a));
    expect(started.errors).toBeUndefined();
    const id = String(started.data!.notifyCompanyRegister.id);
    await t.control('pec/advance', { id });
    const READ = `query($id: ID!) { pecNotification(id: $id) { status } }`;
    expect((await t.gql<{ pecNotification: Obj }>(READ, { id }, as(a))).data?.pecNotification.status).toBe('AWAITING_DOCUMENTS');
    const up = await t.gql(`mutation($id: ID!, $d: String!) { uploadCompanyRegisterDelegation(id: $id, document: $d) { status } }`, { id, d: PDF_B64 }, as(a));
    expect(up.errors).toBeUndefined();
    await t.clearCalls();

    // The second token's store has never seen it: a read and a subscription answer from the free list.
    expect((await t.gql<{ pecNotification: Obj }>(READ, { id }, as(b))).data?.pecNotification.status).toBe('DOCUMENTS_UPLOADED');
    const cb = createClient({ url: t.stack.gateway.wsUrl, webSocketImpl: WebSocket, connectionParams: as(b), retryAttempts: 0, lazy: true });
    clients.push(cb);
    const it = cb.iterate<Obj>({ query: `subscription($id: ID!) { pecNotificationUpdated(id: $id) { status done } }`, variables: { id } });
    const next = async (): Promise<Obj> => (await withSafety(it.next(), 'pecNotificationUpdated')).value?.data?.pecNotificationUpdated as Obj;
    expect(await next()).toMatchObject({ status: 'DOCUMENTS_UPLOADED', done: false });
    const byId = async (): Promise<number> => (await t.calls('pec')).filter((c) => c.method === 'GET' && c.path === `/comunica_pec/${id}`).length;
    expect(await byId()).toBe(0);
    expect((await t.calls('pec')).some((c) => c.method === 'GET' && c.path === '/comunica_pec')).toBe(true);
    // Still uploaded upstream: the other token finalizes it (the one call that sends it)...
    const fin = await t.gql<{ finalizeCompanyRegisterNotification: Obj }>(`mutation($id: ID!) { finalizeCompanyRegisterNotification(id: $id) { status } }`, { id }, as(a));
    expect(fin.data?.finalizeCompanyRegisterNotification.status).toBe('DONE');
    expect(fin.extensions?.cost?.calls.map((c) => c.path)).toEqual([`/comunica_pec/${id}`]);
    // ...and the second token's subscriber gets DONE, seen by its poller in the free list.
    expect(await next()).toMatchObject({ status: 'DONE', done: true });
    expect((await withSafety(it.next(), 'end of stream')).done).toBe(true);
  });
});
