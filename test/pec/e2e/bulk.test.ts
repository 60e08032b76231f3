/**
 * Bulk certified mail end to end through the gateway: a sending to 50 recipients with receipts
 * pushed per recipient over graphql-ws; 1,000 recipients queued by the layer at one request per
 * second per mailbox, never refused, with progress; inbox search and cursor paging; quota; and the
 * mailbox password never in a log line, a response, an event or the emulator's call log.
 *
 * Receipts arrive only when the test says so (emulator timing 0 + `pecmassiva/advance`).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type Client, type FormattedExecutionResult } from 'graphql-ws';
import WebSocket from 'ws';
import { DEFAULT_BULK_PASSWORD, DEFAULT_BULK_USERNAME } from '../../../emulator/pecmassiva/index.ts';
import { startTestStack, type TestStack } from '../../support/stack.ts';
import { withSafety as safety } from '../../support/safety.ts';
import type { Obj } from '../../../contract/values.ts';

const ENV = {
  LAYER_SECRET: 'pec-bulk-test-secret-0123456789abc',
  PECMASSIVA_POLL_MS: '100',
  PECMASSIVA_POLL_MAX_CALLS_PER_MIN: '6000',
  PECMASSIVA_BATCH_SIZE: '250',
  PECMASSIVA_INBOX_POLL_MS: '100',
};
const SAFETY_MS = 30_000;
type Result = FormattedExecutionResult<Obj, unknown>;

let t: TestStack;
let token: string;
const clients: Client[] = [];
/** Everything the process logged, and every response and event a client saw. */
const logged: string[] = [];
const seen: string[] = [];
const originals = { log: console.log, info: console.info, warn: console.warn, error: console.error, debug: console.debug };

const creds = { username: DEFAULT_BULK_USERNAME, password: DEFAULT_BULK_PASSWORD };
const withSafety = <T>(p: Promise<T>, what: string): Promise<T> => safety(p, what, SAFETY_MS);

async function gql<T = Obj>(query: string, variables: Obj = {}): Promise<{ data: T; res: Awaited<ReturnType<TestStack['gql']>> }> {
  const res = await t.gql<T>(query, variables, { authorization: `Bearer ${token}` });
  seen.push(JSON.stringify(res));
  return { data: res.data as T, res };
}

function subscribe(query: string, variables: Obj): AsyncIterableIterator<Result> {
  const client = createClient({ url: t.stack.gateway.wsUrl, webSocketImpl: WebSocket, connectionParams: { authorization: `Bearer ${token}` }, retryAttempts: 0, lazy: true });
  clients.push(client);
  return client.iterate<Obj>({ query, variables });
}

async function next(it: AsyncIterator<Result>): Promise<Obj> {
  const r = await withSafety(it.next(), 'sendingUpdated event');
  expect(r.done).toBe(false);
  seen.push(JSON.stringify(r.value));
  expect(r.value.errors, JSON.stringify(r.value.errors)).toBeUndefined();
  return (r.value.data as Obj).sendingUpdated as Obj;
}

const SEND = `mutation($input: BulkSendInput!, $c: BulkCredentialsInput!, $key: String) { sendCertifiedMail(input: $input, credentials: $c, idempotencyKey: $key) { id done counts { total queued sent accepted delivered failed } } }`;
const UPDATED = `subscription($id: ID!) { sendingUpdated(id: $id) { id done counts { total queued sent accepted delivered failed } recipients(state: FAILED) { address state } } }`;

beforeAll(async () => {
  for (const k of Object.keys(originals) as Array<keyof typeof originals>) {
    console[k] = (...args: unknown[]) => {
      logged.push(args.map((a) => (a instanceof Error ? `${a.message} ${a.stack}` : typeof a === 'string' ? a : JSON.stringify(a))).join(' '));
      originals[k](...args);
    };
  }
  t = await startTestStack(ENV);
  await t.control('pecmassiva/timing', { acceptAfterMs: 0, deliverAfterMs: 0 });
  token = await t.createToken(200);
});

afterAll(async () => {
  await Promise.allSettled(clients.map(async (c) => c.dispose()));
  await t?.close();
  Object.assign(console, originals);
});

describe('bulk sending', () => {
  it('sends to 50 recipients in one request and pushes acceptance and delivery per recipient', async () => {
    await t.clearCalls();
    const recipients = [...Array.from({ length: 48 }, (_, i) => `cliente${i}@legalmail.it`), 'bounce.one@legalmail.it', 'someone@example.org'];
    const { data, res } = await gql<{ sendCertifiedMail: Obj }>(SEND, {
      input: {
        sender: DEFAULT_BULK_USERNAME,
        recipients,
        subject: 'Avviso',
        html: '<p>Buongiorno</p>',
        attachments: [{ name: 'a.txt', contentType: 'text/plain', content: Buffer.from('ciao').toString('base64') }],
      },
      c: creds,
      key: 'bulk-send-fifty-1',
    });
    expect(res.errors).toBeUndefined();
    const id = String(data.sendCertifiedMail.id);
    const it = subscribe(UPDATED, { id });
    // Latest state first: queued or already sent.
    let ev = await next(it);
    while ((ev.counts as Obj).sent !== 50) ev = await next(it);
    expect(ev.counts).toMatchObject({ total: 50, queued: 0, sent: 50 });

    await t.control('pecmassiva/advance', {});
    while (ev.done !== true) ev = await next(it);
    expect(ev.counts).toMatchObject({ total: 50, delivered: 48, failed: 2, sent: 0, accepted: 0 });
    expect((ev.recipients as Obj[]).map((r) => r.address).sort()).toEqual(['bounce.one@legalmail.it', 'someone@example.org']);
    expect((await withSafety(it.next(), 'end')).done).toBe(true);

    // The same key: the same sending, nothing sent again.
    const again = await gql<{ sendCertifiedMail: Obj }>(SEND, {
      input: { sender: DEFAULT_BULK_USERNAME, recipients, subject: 'Avviso', html: '<p>Buongiorno</p>' },
      c: creds,
      key: 'bulk-send-fifty-1',
    });
    expect(again.data.sendCertifiedMail.id).toBe(id);
    const calls = await t.calls('pecmassiva');
    expect(calls.filter((c) => c.method === 'POST').map((c) => `${c.path} ${c.status}`)).toEqual(['/send 201']);
    expect(calls.filter((c) => c.method === 'GET').every((c) => /^\/send\/\d+$/.test(c.path))).toBe(true);
  });

  it('queues 1,000 recipients at one request per second per mailbox, never refused, with progress', async () => {
    await t.clearCalls();
    const recipients = Array.from({ length: 1000 }, (_, i) => `destinatario${i}@legalmail.it`);
    const { data } = await gql<{ sendCertifiedMail: Obj }>(SEND, {
      input: { sender: DEFAULT_BULK_USERNAME, recipients, subject: 'Circolare', html: '<p>Circolare</p>' },
      c: creds,
    });
    const id = String(data.sendCertifiedMail.id);
    const it = subscribe(UPDATED, { id });
    // Latest state first: the first event may already show the first request sent.
    let ev = await next(it);
    const progress: number[] = [Number((ev.counts as Obj).sent)];
    while ((ev.counts as Obj).sent !== 1000) {
      ev = await next(it);
      const sent = Number((ev.counts as Obj).sent);
      if (progress.at(-1) !== sent) progress.push(sent);
    }
    expect(progress.filter((n) => n > 0)).toEqual([250, 500, 750, 1000]);
    const posts = (await t.calls('pecmassiva')).filter((c) => c.method === 'POST') as Array<{ status: number; at?: string }>;
    // Four requests carried the 1,000 recipients, at least a second apart. The emulator refuses a
    // mailbox's second request within a second (429, nothing sent): the layer paces itself, and
    // should a request still arrive early (a busy machine delaying the previous one), it is queued
    // again, never reported as failed.
    const accepted = posts.filter((c) => c.status === 201);
    expect(accepted).toHaveLength(4);
    expect(posts.every((c) => c.status === 201 || c.status === 429)).toBe(true);
    const at = accepted.map((c) => Date.parse(String(c.at)));
    // (`at` is when the emulator began reading a request; its one-second rule is checked a little later.)
    for (let i = 1; i < at.length; i++) expect(at[i] - at[i - 1]).toBeGreaterThanOrEqual(950);
    expect(ev.counts).toMatchObject({ total: 1000, sent: 1000, queued: 0, failed: 0 });
    await it.return?.();
  }, 60_000);

  it('refuses bad recipients and credentials shapes before any call, and wrong credentials as UNAUTHENTICATED', async () => {
    await t.clearCalls();
    const bad = await gql(SEND, { input: { sender: DEFAULT_BULK_USERNAME, recipients: ['not an address'], subject: 'x', html: 'x' }, c: creds });
    expect(bad.res.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'input.recipients[0]' });
    // (The receipts of the earlier sendings may still be read meanwhile: nothing else was called.)
    expect((await t.calls('pecmassiva')).filter((c) => !/^\/send\/\d+$/.test(c.path) || c.method !== 'GET')).toEqual([]);
    const wrong = await gql(`query($c: BulkCredentialsInput!) { bulkQuota(credentials: $c) { usage } }`, { c: { username: DEFAULT_BULK_USERNAME, password: 'wrong-password' } });
    expect(wrong.res.errors?.[0]?.extensions).toMatchObject({ code: 'UNAUTHENTICATED', field: 'credentials' });
  });
});

describe('bulk inbox and quota', () => {
  const INBOX = `query($c: BulkCredentialsInput!, $q: String, $first: Int!, $after: String) { bulkInbox(credentials: $c, search: $q, first: $first, after: $after) { total endCursor hasNextPage nodes { id subject sender } } }`;

  it('searches and pages with cursors over the service pages of 25', async () => {
    await t.clearCalls();
    const p1 = (await gql<{ bulkInbox: Obj }>(INBOX, { c: creds, q: 'Fattura', first: 5 })).data.bulkInbox;
    expect(p1).toMatchObject({ total: 12, hasNextPage: true });
    expect((p1.nodes as Obj[]).every((n) => String(n.subject).includes('Fattura'))).toBe(true);
    const p2 = (await gql<{ bulkInbox: Obj }>(INBOX, { c: creds, q: 'Fattura', first: 5, after: p1.endCursor })).data.bulkInbox;
    const p3 = (await gql<{ bulkInbox: Obj }>(INBOX, { c: creds, q: 'Fattura', first: 5, after: p2.endCursor })).data.bulkInbox;
    expect(p3).toMatchObject({ hasNextPage: false });
    const ids = [...(p1.nodes as Obj[]), ...(p2.nodes as Obj[]), ...(p3.nodes as Obj[])].map((n) => n.id);
    expect(new Set(ids).size).toBe(12);
    // 30 messages without a search span two service pages.
    const wide = (await gql<{ bulkInbox: Obj }>(INBOX, { c: creds, first: 30 })).data.bulkInbox;
    expect((wide.nodes as Obj[]).length).toBe(30);
    // (The receipts of the 1,000-recipient sending are still being read meanwhile: only the inbox calls here.)
    const calls = (await t.calls('pecmassiva')).filter((c) => c.path === '/inbox').map((c) => `${c.method} ${c.path} ${(c as { query?: string }).query ?? ''}`);
    expect(calls).toEqual(['GET /inbox ?q=Fattura&page=1', 'GET /inbox ?q=Fattura&page=1', 'GET /inbox ?q=Fattura&page=1', 'GET /inbox ?page=1', 'GET /inbox ?page=2']);
  });

  it('reads one message, deletes it, and reports the quota', async () => {
    const one = (await gql<{ bulkInboxMessage: Obj }>(`query($c: BulkCredentialsInput!) { bulkInboxMessage(credentials: $c, id: "3") { id subject body } }`, { c: creds })).data
      .bulkInboxMessage;
    expect(one).toMatchObject({ id: '3' });
    expect(one.body).toBeTruthy();
    const del = await gql<{ deleteBulkInboxMessage: boolean }>(`mutation($c: BulkCredentialsInput!) { deleteBulkInboxMessage(credentials: $c, id: "3") }`, { c: creds });
    expect(del.data.deleteBulkInboxMessage).toBe(true);
    const gone = await gql<{ bulkInboxMessage: Obj | null }>(`query($c: BulkCredentialsInput!) { bulkInboxMessage(credentials: $c, id: "3") { id } }`, { c: creds });
    expect(gone.data.bulkInboxMessage).toBeNull();
    const quota = (await gql<{ bulkQuota: Obj }>(`query($c: BulkCredentialsInput!) { bulkQuota(credentials: $c) { mailbox usage limit usedPercent } }`, { c: creds })).data
      .bulkQuota;
    expect(quota).toMatchObject({ mailbox: 'INBOX', limit: 1048576 });
    expect(Number(quota.usage)).toBeGreaterThan(0);
  });

  it('pushes the newest inbox message first, then each arrival', async () => {
    const it = subscribe(`subscription($c: BulkCredentialsInput!) { inboxMessageReceived(credentials: $c) { id subject } }`, { c: creds });
    const first = await withSafety(it.next(), 'newest message');
    seen.push(JSON.stringify(first.value));
    const newestId = Number(((first.value?.data as Obj).inboxMessageReceived as Obj).id);
    expect(newestId).toBeGreaterThanOrEqual(60);
    await t.control('pecmassiva/receive', { username: DEFAULT_BULK_USERNAME, count: 2, subject: 'Arrivo' });
    const got: Obj[] = [];
    while (got.length < 2) {
      const r = await withSafety(it.next(), 'arrival');
      seen.push(JSON.stringify(r.value));
      got.push((r.value?.data as Obj).inboxMessageReceived as Obj);
    }
    expect(got.map((m) => Number(m.id))).toEqual([newestId + 1, newestId + 2]);
    expect(got.every((m) => String(m.subject).includes('Arrivo'))).toBe(true);
    await it.return?.();
  });

  it("threads (the project's design of the contract's /threads): start, reply, list, read, delete; cron-start", async () => {
    await t.clearCalls();
    const T = `id subject participants messageCount messages { id sender recipients body messageId }`;
    const START = `mutation($c: BulkCredentialsInput!) { startBulkThread(credentials: $c, input: { subject: "Pratica 12", participants: ["a@legalmail.it", "b@legalmail.it"], html: "<p>Primo</p>" }, idempotencyKey: "thread-key-01") { ${T} } }`;
    const started = await gql<{ startBulkThread: Obj }>(START, { c: creds });
    expect(started.res.errors).toBeUndefined();
    const th = started.data.startBulkThread;
    // Retried under its key: the same thread, read (GET), not started again.
    expect((await gql<{ startBulkThread: Obj }>(START, { c: creds })).data.startBulkThread).toEqual(th);
    expect(th).toMatchObject({ subject: 'Pratica 12', participants: ['a@legalmail.it', 'b@legalmail.it'], messageCount: 1 });
    const id = String(th.id);
    const REPLY = `mutation($c: BulkCredentialsInput!, $id: ID!) { replyBulkThread(credentials: $c, id: $id, html: "<p>Secondo</p>", idempotencyKey: "reply-key-01") { ${T} } }`;
    const reply = await gql<{ replyBulkThread: Obj }>(REPLY, { c: creds, id });
    expect((reply.data.replyBulkThread.messages as Obj[]).map((m) => m.body)).toEqual(['<p>Primo</p>', '<p>Secondo</p>']);
    expect(((await gql<{ replyBulkThread: Obj }>(REPLY, { c: creds, id })).data.replyBulkThread.messages as Obj[]).map((m) => m.body)).toEqual(['<p>Primo</p>', '<p>Secondo</p>']);
    const list = await gql<{ bulkThreads: Obj[] }>(`query($c: BulkCredentialsInput!) { bulkThreads(credentials: $c) { id messageCount } }`, { c: creds });
    expect(list.data.bulkThreads).toContainEqual({ id, messageCount: 2 });
    const one = await gql<{ bulkThread: Obj }>(`query($c: BulkCredentialsInput!, $id: ID!) { bulkThread(credentials: $c, id: $id) { messageCount } }`, { c: creds, id });
    expect(one.data.bulkThread).toEqual({ messageCount: 2 });
    const del = await gql<{ deleteBulkThread: boolean }>(`mutation($c: BulkCredentialsInput!, $id: ID!) { deleteBulkThread(credentials: $c, id: $id) }`, { c: creds, id });
    expect(del.data.deleteBulkThread).toBe(true);
    const cron = await gql<{ startBulkDispatch: number }>(`mutation { startBulkDispatch }`);
    expect(typeof cron.data.startBulkDispatch).toBe('number');
    // Receipt reads and a last inbox read of the previous test's subscription (its end crosses the gateway) aside.
    const calls = (await t.calls('pecmassiva')).filter((c) => !c.path.startsWith('/send/') && c.path !== '/inbox').map((c) => `${c.method} ${c.path} ${c.status}`);
    expect(calls).toEqual([
      `POST /threads 201`,
      `GET /threads/${id} 200`,
      `PATCH /threads/${id} 200`,
      `GET /threads/${id} 200`,
      'GET /threads 200',
      `GET /threads/${id} 200`,
      `DELETE /threads/${id} 200`,
      'GET /cron-start 200',
    ]);
  });

  it('never shows the mailbox password in a log line, a response, an event or the call log', async () => {
    const calls = JSON.stringify(await t.calls());
    expect(seen.length).toBeGreaterThan(10);
    for (const text of [...logged, ...seen, calls]) expect(text).not.toContain(DEFAULT_BULK_PASSWORD);
  });
});
