/**
 * The money of bulk sending, on the bulk service against the emulator with an injected clock (no
 * sleeping: each round is run by the test at a time it sets): the receipt reads take one unit of the
 * per-minute budget per upstream call (`GET /send/{code}`), wait longer after each read that brings
 * nothing, and stop for a code the service no longer knows (404); a subscribed inbox's reads take
 * the same budget and are charged to the tenant's day.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../../../emulator/server.ts';
import { createPecMassivaModule, DEFAULT_BULK_PASSWORD, DEFAULT_BULK_USERNAME } from '../../../emulator/pecmassiva/index.ts';
import { BulkService } from '../../../subgraphs/pec/bulk.ts';
import { bulkResolvers } from '../../../subgraphs/pec/resolvers/bulk.ts';
import type { SubgraphContext } from '../../../subgraphs/runtime/context.ts';
import { MemoryPollBook, type PollBook } from '../../../subgraphs/runtime/tracking/poller.ts';
import { CostMeter } from '../../../subgraphs/upstream/cost.ts';
import { MemoryCostLedger } from '../../../subgraphs/upstream/ledger.ts';
import { freeTierOf } from '../../../contract/prices.ts';
import { MemoryBulkStore } from '../../../subgraphs/pec/bulk-store.ts';
import { UpstreamClient } from '../../../subgraphs/upstream/client.ts';
import { loadUpstreamConfig } from '../../../subgraphs/upstream/config.ts';
import { startTestStack, type TestStack } from '../../support/stack.ts';
import { withSafety } from '../../support/safety.ts';
import { waitFor } from '../../support/wait.ts';

const ENV = {
  LAYER_SECRET: 'pec-bulk-money-secret-0123456789ab',
  PECMASSIVA_BATCH_SIZE: '10',
  PECMASSIVA_POLL_MS: '1000',
  PECMASSIVA_POLL_MAX_CALLS_PER_MIN: '2',
  PECMASSIVA_POLL_MAX_BACKOFF_MS: '8000',
};

let emu: RunningEmulator;
let upstream: UpstreamClient;
let token: string;
const stops: Array<() => Promise<void>> = [];

beforeAll(async () => {
  // Receipts never arrive on their own; sends are not paced by the emulator (the clock is the test's).
  emu = await startEmulator({ modules: [createPecMassivaModule({ acceptAfterMs: 1e9, sendIntervalMs: 0 })] });
  token = emu.tokens.create({ credit: 100 }).token;
  upstream = new UpstreamClient(loadUpstreamConfig({ OPENAPI_ENV: 'emulator' }, emu.url));
});

afterAll(async () => {
  for (const s of stops) await s().catch(() => undefined);
  await upstream?.close();
  await emu?.close();
});

const reads = () => emu.calls().filter((c) => c.area === 'pecmassiva' && c.method === 'GET' && /\/send\/[^/]+$/.test(c.path));
const posts = () => emu.calls().filter((c) => c.area === 'pecmassiva' && c.method === 'POST' && c.status === 201);

describe('receipt reads of bulk sendings', () => {
  it('spend one unit of the per-minute budget per upstream call, back off, and stop on 404', async () => {
    let clock = 1_000_000;
    const bulk = new BulkService({ ...ENV, PECMASSIVA_SEND_INTERVAL_MS: '1' }, { now: () => clock });
    stops.push(bulk.start({ upstream, publicUrl: () => '' }));
    const tenant = 'money-tenant';
    // One sending of 30 recipients: three requests, three codes.
    const s = await bulk.queue(
      { token, tenant },
      { username: DEFAULT_BULK_USERNAME, password: DEFAULT_BULK_PASSWORD },
      { sender: DEFAULT_BULK_USERNAME, recipients: Array.from({ length: 30 }, (_, i) => `m${i}@legalmail.it`), subject: 'Budget', html: '<p>x</p>', attachments: [] },
      null,
    );
    await bulk.tick();
    for (let i = 0; i < 2; i++) {
      clock += 1;
      await bulk.tick();
    }
    expect(posts()).toHaveLength(3);
    expect(reads()).toHaveLength(0);
    // All three codes due; the budget is 2 calls a minute, counted per call (not one per sending).
    clock += 1000;
    await bulk.tick();
    expect(reads()).toHaveLength(2);
    await bulk.tick();
    expect(reads()).toHaveLength(2);
    // A new minute: the code left waiting goes first, then the longest waiting.
    clock += 60_001;
    await bulk.tick();
    await bulk.tick();
    expect(reads()).toHaveLength(4);
    // The messages deleted upstream: each code's next read answers 404 and the code is dropped.
    const codes = await bulk.codesOf(tenant, s.id);
    expect(codes).toHaveLength(3);
    for (const code of codes) {
      const res = await fetch(`${emu.url}/pecmassiva/send/${code}`, {
        method: 'DELETE',
        headers: { 'x-username': DEFAULT_BULK_USERNAME, 'x-password': DEFAULT_BULK_PASSWORD, authorization: `Bearer ${token}` },
      });
      expect(res.status).toBe(200);
    }
    for (let i = 0; i < 6; i++) {
      clock += 120_000;
      await bulk.tick();
    }
    expect(
      reads()
        .slice(4)
        .map((c) => c.status),
    ).toEqual([404, 404, 404]);
    const done = await bulk.get(tenant, s.id);
    expect(done?.done).toBe(true);
    expect(done?.recipients.every((r) => r.state === 'SENT' && r.reason?.includes('404'))).toBe(true);
  });
});

describe('the budgets of a bulk sending, through the gateway', () => {
  // Ten recipients per request (0.05 € each): 300 recipients are 1.50 €, past a day budget of 1 €.
  const GW_ENV = {
    LAYER_SECRET: 'pec-bulk-money-gw-secret-0123456789',
    PECMASSIVA_BATCH_SIZE: '10',
    PECMASSIVA_POLL_MS: '50',
    PECMASSIVA_POLL_MAX_CALLS_PER_MIN: '6000',
    OPENAPI_MAX_EURO_PER_DAY: '1',
  };
  const SEND = `mutation($input: BulkSendInput!, $c: BulkCredentialsInput!) { sendCertifiedMail(input: $input, credentials: $c) { id cost { euro atRisk estimate } } }`;
  const SENDING = `query($id: ID!) { bulkSending(id: $id) { done counts { sent accepted delivered } cost { euro atRisk estimate } } }`;
  let gw: TestStack;
  let auth: Record<string, string>;
  const c = { username: DEFAULT_BULK_USERNAME, password: DEFAULT_BULK_PASSWORD };
  const recipients = (n: number, p: string) => Array.from({ length: n }, (_, i) => `${p}${i}@legalmail.it`);

  beforeAll(async () => {
    gw = await startTestStack(GW_ENV);
    await gw.control('pecmassiva/timing', { acceptAfterMs: 0, deliverAfterMs: 0 });
    auth = { authorization: `Bearer ${await gw.createToken(100)}` };
  });
  afterAll(async () => {
    await gw?.close();
  });

  it("refuses a sending whose requests would pass the day's budget before anything is queued or sent", async () => {
    await gw.clearCalls();
    const res = await gw.gql(SEND, { input: { sender: DEFAULT_BULK_USERNAME, recipients: recipients(300, 'over'), subject: 'Troppo', html: '<p>x</p>' }, c }, auth);
    expect(res.errors?.[0]?.extensions?.code).toBe('COST_LIMIT_EXCEEDED');
    expect(res.errors?.[0]?.extensions?.scope).toBe('day');
    expect(await gw.calls('pecmassiva')).toHaveLength(0);
  });

  it('reports what its sends and receipt reads cost (what the service charged), never above the estimate', async () => {
    await gw.clearCalls();
    const res = await gw.gql<{ sendCertifiedMail: { id: string; cost: Record<string, number> } }>(
      SEND,
      { input: { sender: DEFAULT_BULK_USERNAME, recipients: recipients(20, 'ok'), subject: 'Costo', html: '<p>x</p>' }, c },
      auth,
    );
    expect(res.errors).toBeUndefined();
    const { id, cost } = res.data!.sendCertifiedMail;
    expect(cost).toEqual({ euro: 0, atRisk: 0, estimate: 0.1 });
    // Until every receipt is in (the emulator delivers on `advance`).
    const view = await waitFor(
      async () => {
        await gw.control('pecmassiva/advance', {});
        const r = await gw.gql<{ bulkSending: { done: boolean; cost: Record<string, number> } }>(SENDING, { id }, auth);
        return r.data!.bulkSending.done && r.data!.bulkSending;
      },
      'sending done',
      { deadline: 30_000, every: 1 },
    );
    const calls = await gw.calls('pecmassiva');
    const posts = calls.filter((x) => x.method === 'POST' && x.status === 201);
    expect(posts).toHaveLength(2);
    const charged = calls.reduce((sum, x) => sum + x.price, 0);
    expect(view.cost.euro).toBeCloseTo(charged, 4);
    expect(view.cost.estimate).toBeGreaterThanOrEqual(posts.reduce((sum, x) => sum + x.price, 0));
    expect(view.cost.atRisk).toBe(0);
    // A sending the budget still holds is queued (the check is of the estimate, 0.95 € < 1 €).
    const fits = await gw.gql<{ sendCertifiedMail: { id: string } }>(
      SEND,
      { input: { sender: DEFAULT_BULK_USERNAME, recipients: recipients(190, 'fit'), subject: 'Giorno', html: '<p>x</p>' }, c },
      auth,
    );
    expect(fits.errors).toBeUndefined();
    // Cancelled, so that none of its sends lands in a later test's call log.
    const cancelled = await gw.gql(`mutation($id: ID!) { cancelBulkSending(id: $id) { id } }`, { id: fits.data!.sendCertifiedMail.id }, auth);
    expect(cancelled.errors).toBeUndefined();
  });

  it('refuses a recipient given twice (in any case) before any call', async () => {
    await gw.clearCalls();
    const res = await gw.gql(
      SEND,
      { input: { sender: DEFAULT_BULK_USERNAME, recipients: ['uno@legalmail.it', 'due@legalmail.it', 'UNO@legalmail.it'], subject: 'Doppio', html: '<p>x</p>' }, c },
      auth,
    );
    expect(res.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(res.errors?.[0]?.extensions?.field).toBe('input.recipients[2]');
    // Nothing sent (receipts of earlier sendings may still be read meanwhile).
    expect((await gw.calls('pecmassiva')).filter((x) => x.method === 'POST')).toHaveLength(0);
  });

  it('matches receipts that name their recipient ("Mario" <mario@…>) to that recipient', async () => {
    await gw.control('pecmassiva/timing', { displayNames: true });
    try {
      const res = await gw.gql<{ sendCertifiedMail: { id: string } }>(
        SEND,
        { input: { sender: DEFAULT_BULK_USERNAME, recipients: ['mario@legalmail.it', 'anna@legalmail.it'], subject: 'Nomi', html: '<p>x</p>' }, c },
        auth,
      );
      expect(res.errors).toBeUndefined();
      const id = res.data!.sendCertifiedMail.id;
      const q = `query($id: ID!) { bulkSending(id: $id) { done recipients { address state } } }`;
      type View = { done: boolean; recipients: Array<{ address: string; state: string }> };
      const view = await waitFor(
        async () => {
          await gw.control('pecmassiva/advance', {});
          const v = (await gw.gql<{ bulkSending: View }>(q, { id }, auth)).data!.bulkSending;
          return v.done && v;
        },
        'sending done',
        { deadline: 30_000, every: 1 },
      );
      expect(view.recipients).toEqual([
        { address: 'mario@legalmail.it', state: 'DELIVERED' },
        { address: 'anna@legalmail.it', state: 'DELIVERED' },
      ]);
    } finally {
      await gw.control('pecmassiva/timing', { displayNames: false });
    }
  });
});

describe('cancelling a bulk sending, through the gateway', () => {
  // One request of ten recipients, then the next only after ten minutes: the rest stays queued.
  const ENV_SLOW = { LAYER_SECRET: 'pec-bulk-money-cancel-secret-012345', PECMASSIVA_BATCH_SIZE: '10', PECMASSIVA_SEND_INTERVAL_MS: '600000', PECMASSIVA_POLL_MS: '600000' };
  let gw: TestStack;
  let auth: Record<string, string>;
  const c = { username: DEFAULT_BULK_USERNAME, password: DEFAULT_BULK_PASSWORD };

  beforeAll(async () => {
    gw = await startTestStack(ENV_SLOW);
    auth = { authorization: `Bearer ${await gw.createToken(100)}` };
  });
  afterAll(async () => {
    await gw?.close();
  });

  it('sends nothing more of a cancelled or deleted sending: its queued recipients are FAILED, cancelled before sending', async () => {
    const SEND = `mutation($input: BulkSendInput!, $c: BulkCredentialsInput!) { sendCertifiedMail(input: $input, credentials: $c) { id } }`;
    const VIEW = `{ done counts { queued sent failed } recipients(state: FAILED) { reason } }`;
    const start = async (p: string, cr = c) =>
      (
        await gw.gql<{ sendCertifiedMail: { id: string } }>(
          SEND,
          { input: { sender: cr.username, recipients: Array.from({ length: 30 }, (_, i) => `${p}${i}@legalmail.it`), subject: 'Annulla', html: '<p>x</p>' }, c: cr },
          auth,
        )
      ).data!.sendCertifiedMail.id;
    const firstSent = async (id: string) =>
      waitFor(
        async () => {
          const r = await gw.gql<{ bulkSending: { counts: { sent: number } } }>(`query($id: ID!) { bulkSending(id: $id) { counts { sent } } }`, { id }, auth);
          return r.data!.bulkSending.counts.sent === 10;
        },
        'first request sent',
        { deadline: 30_000, every: 1 },
      );

    const a = await start('annulla');
    await firstSent(a);
    await gw.clearCalls();
    const cancelled = await gw.gql<{ cancelBulkSending: { done: boolean; counts: Record<string, number>; recipients: Array<{ reason: string }> } }>(
      `mutation($id: ID!) { cancelBulkSending(id: $id) ${VIEW} }`,
      { id: a },
      auth,
    );
    expect(cancelled.errors).toBeUndefined();
    expect(cancelled.data!.cancelBulkSending.counts).toEqual({ queued: 0, sent: 10, failed: 20 });
    expect(new Set(cancelled.data!.cancelBulkSending.recipients.map((r) => r.reason))).toEqual(new Set(['cancelled before sending']));
    expect(cancelled.extensions?.cost?.upstreamCalls).toBe(0);
    expect(await gw.calls('pecmassiva')).toHaveLength(0);

    // Deleting another sending (another mailbox: its own pace) part-way: its queue goes too, and its one request is deleted upstream.
    const other = { username: 'seconda@pecmassiva.com', password: 'seconda-password-1' };
    await gw.control('pecmassiva/account', other);
    const b = await start('cancella', other);
    await firstSent(b);
    await gw.clearCalls();
    const del = await gw.gql<{ deleteBulkSending: boolean }>(
      `mutation($id: ID!, $c: BulkCredentialsInput!) { deleteBulkSending(id: $id, credentials: $c) }`,
      { id: b, c: other },
      auth,
    );
    expect(del.data?.deleteBulkSending).toBe(true);
    expect((await gw.calls('pecmassiva')).map((x) => `${x.method} ${x.status}`)).toEqual(['DELETE 200']);
    const after = await gw.gql<{ bulkSending: { counts: Record<string, number> } }>(`query($id: ID!) { bulkSending(id: $id) ${VIEW} }`, { id: b }, auth);
    expect(after.data!.bulkSending.counts).toEqual({ queued: 0, sent: 10, failed: 20 });
  });
});

describe('inbox subscription reads', () => {
  it("take the bulk reads' per-minute budget, one unit per call, and are charged to the tenant's day", async () => {
    let clock = 5_000_000;
    // The kit's book, counting the reads it refuses (the loop keeps looking while the budget is spent).
    const inner = new MemoryPollBook({ now: () => clock });
    let refused = 0;
    const book: PollBook = {
      budgetLeft: (now, max) => inner.budgetLeft(now, max),
      spend: async (now, max) => {
        const ok = await inner.spend(now, max);
        if (!ok) refused++;
        return ok;
      },
      state: (k) => inner.state(k),
      setState: (k, st, ttl) => inner.setState(k, st, ttl),
      clearState: (k) => inner.clearState(k),
      retain: (live) => inner.retain(live),
      // One process: leases are always granted.
      lease: () => inner.lease(),
      release: () => inner.release(),
    };
    // Two reads a minute (ENV), the inbox looked at every millisecond.
    const bulk = new BulkService({ ...ENV, PECMASSIVA_INBOX_POLL_MS: '1' }, { now: () => clock, book });
    const ledger = new MemoryCostLedger();
    const tenant = 'inbox-tenant';
    const ctx: SubgraphContext = {
      auth: { token, tenant },
      meter: new CostMeter({ ledger, account: { operationId: 'inbox-subscribe', tenant }, limits: { operation: null, day: null } }),
      upstream,
      once: (_key, make) => make(),
    };
    type Arrival = { inboxMessageReceived: { id: string } };
    const field = bulkResolvers(bulk, 1024).Subscription.inboxMessageReceived as unknown as {
      subscribe: (root: unknown, args: unknown, c: SubgraphContext) => AsyncIterableIterator<Arrival>;
    };
    const inboxReads = () => emu.calls().filter((c) => c.area === 'pecmassiva' && c.method === 'GET' && c.path.startsWith('/inbox'));
    const before = inboxReads().length;
    const it = field.subscribe({}, { credentials: { username: DEFAULT_BULK_USERNAME, password: DEFAULT_BULK_PASSWORD } }, ctx);
    try {
      const first = await withSafety(it.next(), 'newest message');
      const newest = Number(first.value.inboxMessageReceived.id);
      // The first page (the count of pages) and the last one: the minute's whole budget.
      expect(inboxReads().length - before).toBe(2);
      await fetch(`${emu.url}/_emulator/pecmassiva/receive`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ username: DEFAULT_BULK_USERNAME, count: 1 }),
      });
      const arrival = it.next();
      // The loop goes on looking, refused by the budget each time: nothing is read in this minute.
      await waitFor(() => refused >= 3, 'refused reads', { every: 1 });
      expect(inboxReads().length - before).toBe(2);
      // The next minute: the last page only (the page count is known), and the arrival; every page
      // paid for was used (reads cost 0.001 € each, logged when the subscription ends).
      clock += 60_001;
      expect(Number((await withSafety(arrival, 'arrival')).value.inboxMessageReceived.id)).toBe(newest + 1);
      expect(inboxReads().length - before).toBe(3);
    } finally {
      await it.return?.();
    }
    // Accounted like the queue's reads, on the tenant's day in the shared ledger: its free tier of inbox reads counts the three.
    const tier = freeTierOf('pecmassiva', 'GET', '/inbox')!;
    expect((await ledger.freeUse(tenant, tier.key, tier.tiers))[0].used).toBe(3);
  });
});

describe('inbox subscription at a budget of one read a minute', () => {
  it('uses every page it paid for: the first page then the last, each read once, and the newest shown', async () => {
    let clock = 9_000_000;
    const book = new MemoryPollBook({ now: () => clock });
    const bulk = new BulkService({ ...ENV, PECMASSIVA_POLL_MAX_CALLS_PER_MIN: '1', PECMASSIVA_INBOX_POLL_MS: '1' }, { now: () => clock, book });
    const tenant = 'inbox-one-a-minute';
    const ctx: SubgraphContext = {
      auth: { token, tenant },
      meter: new CostMeter({ ledger: new MemoryCostLedger(), account: { operationId: 'inbox-one', tenant }, limits: { operation: null, day: null } }),
      upstream,
      once: (_key, make) => make(),
    };
    type Arrival = { inboxMessageReceived: { id: string } };
    const field = bulkResolvers(bulk, 1024).Subscription.inboxMessageReceived as unknown as {
      subscribe: (root: unknown, args: unknown, c: SubgraphContext) => AsyncIterableIterator<Arrival>;
    };
    const inboxReads = () => emu.calls().filter((c) => c.area === 'pecmassiva' && c.method === 'GET' && c.path.startsWith('/inbox'));
    const before = inboxReads().length;
    const it = field.subscribe({}, { credentials: { username: DEFAULT_BULK_USERNAME, password: DEFAULT_BULK_PASSWORD } }, ctx);
    try {
      const first = it.next();
      // This minute: page 1 only (it tells the page count); the last page waits for the next unit.
      await waitFor(() => inboxReads().length - before >= 1, 'first page read', { every: 1 });
      clock += 60_001;
      const newest = Number((await withSafety(first, 'newest message')).value.inboxMessageReceived.id);
      expect(newest).toBeGreaterThan(25);
      // Two paid reads, two different pages: nothing read twice, nothing thrown away.
      const pages = inboxReads()
        .slice(before)
        .map((c) => (c as { query?: string }).query ?? c.path);
      expect(pages).toHaveLength(2);
      expect(new Set(pages).size).toBe(2);
    } finally {
      await it.return?.();
    }
  });
});

describe('the memory bulk store', () => {
  it('forgets sendings after a week and idempotency keys after a day, as Redis does, and holds at most `max` entries', async () => {
    let clock = 1_000_000;
    const store = new MemoryBulkStore({ now: () => clock, max: 2 });
    const sending = (id: string) => ({
      sending: { id, tenant: 't', sender: 's@x.it', subject: 's', createdAt: '', recipients: [], seq: 1, done: true, cost: { euro: 0, atRisk: 0, estimate: 0 } },
      username: 'u',
      batches: [],
      codes: [],
      startedAt: 0,
    });
    await store.save(sending('a'));
    expect(await store.claimKey('t', 'key-00001', 'a')).toBeNull();
    clock += 24 * 3600 * 1000 + 1;
    expect(await store.claimKey('t', 'key-00001', 'b')).toBeNull();
    expect(await store.load('a')).not.toBeNull();
    clock += 7 * 24 * 3600 * 1000;
    expect(await store.load('a')).toBeNull();
    for (const id of ['x', 'y', 'z']) await store.save(sending(id));
    expect(await store.load('x')).toBeNull();
    expect(await store.load('z')).not.toBeNull();
  });
});
