/**
 * Resolvers of bulk certified mail: sending (queued), its progress, the inbox with cursor
 * pagination over the service's pages of 25, one message, deletion and quota. Inputs are validated
 * before any call; credentials go to the service only (`x-username` / `x-password`).
 */
import { cursorOffset, offsetCursor } from '../../runtime/cursor.ts';
import { GraphQLError } from 'graphql';
import type { SubgraphContext } from '../../runtime/context.ts';
import { badUserInput } from '../../runtime/errors.ts';
import { idempotencyKey } from '../../runtime/tracking/args.ts';
import { payloads } from '../../runtime/tracking/subscribe.ts';
import { email, requiredText } from '../../runtime/validate.ts';
import { UpstreamError } from '../../upstream/errors.ts';
import type { CallContext, Upstream } from '../../upstream/upstream.ts';
import type {
  BulkCredentialsInput,
  BulkInboxMessage,
  BulkReceipt,
  BulkReceiptKind,
  BulkThread,
  BulkSendingResolvers,
  BulkSendInput,
  MutationResolvers,
  QueryResolvers,
  SubscriptionResolvers,
} from '../__generated__/resolvers-types.ts';
import { bare, BULK, countsOf, type BulkCredentials, type BulkService, type SendRequest } from '../bulk.ts';
import { log } from '../../../platform/log.ts';
import { asText, isObj, objects, type Obj } from '../../../contract/values.ts';

const PAGE = 25;

function credentials(c: BulkCredentialsInput): BulkCredentials {
  const username = email(c.username, 'credentials.username').toLowerCase();
  if (typeof c.password !== 'string' || c.password.length === 0 || c.password.length > 200)
    throw badUserInput('credentials.password must be 1 to 200 characters', 'credentials.password');
  return { username, password: c.password };
}

const headersOf = (c: BulkCredentials): Record<string, string> => ({ 'x-username': c.username, 'x-password': c.password });

function sendRequest(input: BulkSendInput, maxBytes: number): SendRequest {
  const sender = email(input.sender, 'input.sender').toLowerCase();
  if (input.recipients.length === 0 || input.recipients.length > 5000) throw badUserInput('input.recipients: 1 to 5000 addresses', 'input.recipients');
  const recipients = input.recipients.map((r, i) => email(r, `input.recipients[${i}]`).toLowerCase());
  // One message per address: a second one would be paid for and could not be told apart in the receipts.
  const first = new Map<string, number>();
  recipients.forEach((r, i) => {
    const seen = first.get(r);
    if (seen !== undefined) throw badUserInput(`input.recipients[${i}] repeats input.recipients[${seen}] (${r})`, `input.recipients[${i}]`);
    first.set(r, i);
  });
  const subject = requiredText(input.subject, 'input.subject', 500);
  const html = typeof input.html === 'string' ? input.html : '';
  if (html.trim() === '' || html.length > 1_000_000) throw badUserInput('input.html: 1 character to 1 MB', 'input.html');
  const attachments = (input.attachments ?? []).map((a, i) => {
    const field = `input.attachments[${i}]`;
    const name = requiredText(a.name, `${field}.name`, 200);
    if (!/^[\w.+-]+\/[\w.+-]+$/.test(a.contentType)) throw badUserInput(`${field}.contentType must be a media type`, `${field}.contentType`);
    const b64 = a.content.replace(/^data:[^,]*;base64,/i, '').replace(/\s+/g, '');
    if (b64 === '' || b64.length % 4 === 1 || !/^[A-Za-z0-9+/]*={0,2}$/.test(b64)) throw badUserInput(`${field}.content must be base64`, `${field}.content`);
    if (Math.floor((b64.length * 3) / 4) > maxBytes) throw badUserInput(`${field}.content is larger than ${Math.floor(maxBytes / 1024)} KiB`, `${field}.content`);
    return { name, file: `data:${a.contentType};base64,${b64}` };
  });
  return { sender, recipients, subject, html, attachments };
}

/** A thread as the service gives it (`messages` a list, or a count in lists). */
function thread(t: unknown): BulkThread | null {
  if (!isObj(t) || (typeof t.id !== 'string' && typeof t.id !== 'number')) return null;
  const msgs = objects(t.messages);
  return {
    id: String(t.id),
    subject: raw(t.subject),
    participants: Array.isArray(t.participants) ? t.participants.map(String) : [],
    messageCount: typeof t.messages === 'number' ? t.messages : msgs.length,
    messages: msgs.map((m) => ({
      id: asText(m.id),
      sender: raw(m.sender),
      recipients: Array.isArray(m.recipients) ? m.recipients.map(String) : [],
      date: raw(m.date),
      body: raw(m.body),
      messageId: raw(m.message_id),
    })),
    updated: raw(t.updated) ?? raw(msgs.at(-1)?.date) ?? raw(t.created),
  };
}

const threadId = (id: string): string => {
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(id)) throw badUserInput('id must be a thread id', 'id');
  return id;
};

const refusedCredentials = (err: unknown): unknown =>
  err instanceof UpstreamError && err.status === 401
    ? new GraphQLError('the bulk mailbox refused these credentials', { extensions: { code: 'UNAUTHENTICATED', field: 'credentials' } })
    : err;

const cursorOf = (offset: number): string => offsetCursor('inbox', offset);
const offsetOf = (after: string | null | undefined): number => cursorOffset('inbox', after, 'after must be an endCursor of bulkInbox');

/** A text exactly as the service wrote it (the receipts' quoted, space-padded addresses included). */
const raw = (v: unknown): string | null => asText(v, null);

/** What an e-mail of a sending is, from its subject's prefix. */
function receiptKind(subject: string): BulkReceiptKind {
  if (/^ACCETTAZIONE:/i.test(subject)) return 'ACCEPTANCE';
  if (/^(AVVISO DI )?MANCATA CONSEGNA:/i.test(subject)) return 'NON_DELIVERY';
  if (/^CONSEGNA:/i.test(subject)) return 'DELIVERY';
  if (/^POSTA CERTIFICATA:/i.test(subject)) return 'MESSAGE';
  return 'OTHER';
}

/** One item of `GET /send/{code}` (`{sender, recipient, data, object, message}`). */
function receipt(r: Obj): BulkReceipt {
  const subject = raw(r.object);
  const date = raw(r.data);
  const t = date === null ? Number.NaN : Date.parse(date);
  const address = bare(r.recipient);
  return {
    kind: receiptKind(subject ?? ''),
    sender: raw(r.sender),
    recipient: raw(r.recipient),
    recipientAddress: /^[^\s@]+@[^\s@]+$/.test(address) ? address : null,
    date,
    dateTime: Number.isNaN(t) ? null : new Date(t).toISOString(),
    subject,
    body: raw(r.message),
  };
}

/** A sending code as the service gives it (`message_id`, e.g. `2020082610003492`). */
function sendingCode(value: string): string {
  const v = (value ?? '').trim();
  if (!/^[A-Za-z0-9._-]{1,64}$/.test(v)) throw badUserInput('code must be 1 to 64 letters, digits, ., _ or - (the code POST /send answered)', 'code');
  return v;
}

const message = (m: unknown): BulkInboxMessage | null =>
  isObj(m) ? { id: asText(m.id), sender: raw(m.sender), recipient: raw(m.recipient), date: raw(m.date), subject: raw(m.object), body: raw(m.body) } : null;

export function bulkResolvers(bulk: BulkService, maxBytes: number) {
  /** A thread as it stands (GET /threads/{id}), for an order replayed under its idempotency key. */
  const readThread = async (ctx: CallContext & { upstream: Upstream }, creds: BulkCredentials, id: string): Promise<BulkThread> => {
    const t = thread(await ctx.upstream.call<unknown>(ctx, BULK.thread, { params: { id }, headers: headersOf(creds) }));
    if (!t) throw new UpstreamError('decode', 'the answer carries no thread', 'pecmassiva', 'threads', 200);
    return t;
  };

  const Query: QueryResolvers = {
    bulkSending: (_root, { id }, ctx) => bulk.get(ctx.auth.tenant, id),
    bulkInbox: async (_root, { credentials: c, search, first, after }, ctx) => {
      const creds = credentials(c);
      if (!Number.isInteger(first) || first < 1 || first > 100) throw badUserInput('first must be 1 to 100', 'first');
      const q = search?.trim() ?? '';
      if (q.length > 200) throw badUserInput('search: at most 200 characters', 'search');
      const offset = offsetOf(after);
      const nodes: BulkInboxMessage[] = [];
      let total: number;
      // The service's pages of 25 that cover [offset, offset + first).
      for (let page = Math.floor(offset / PAGE) + 1; ; page++) {
        let body: unknown;
        try {
          body = await ctx.upstream.call<unknown>(ctx, BULK.inbox, { query: { ...(q ? { q } : {}), page }, headers: headersOf(creds) });
        } catch (err) {
          throw refusedCredentials(err);
        }
        const b = isObj(body) ? body : {};
        total = typeof b.total === 'number' ? b.total : 0;
        const items = Array.isArray(b.data) ? b.data : [];
        items.forEach((m, i) => {
          const at = (page - 1) * PAGE + i;
          if (at >= offset && nodes.length < first) nodes.push(message(m)!);
        });
        const pages = typeof b.n_of_pages === 'number' ? b.n_of_pages : page;
        if (nodes.length >= first || page >= pages || items.length === 0) break;
      }
      const end = offset + nodes.length;
      return { nodes, total, endCursor: nodes.length > 0 ? cursorOf(end) : (after ?? null), hasNextPage: end < total };
    },
    bulkInboxMessage: async (_root, { credentials: c, id }, ctx) => {
      const creds = credentials(c);
      if (!/^\d{1,12}$/.test(id)) throw badUserInput('id must be a number', 'id');
      try {
        const data = await ctx.upstream.call<unknown>(ctx, BULK.message, { params: { id }, headers: headersOf(creds) });
        const m = message(data);
        return m ? { ...m, id } : null;
      } catch (err) {
        if (err instanceof UpstreamError && err.status === 404) return null;
        throw refusedCredentials(err);
      }
    },
    bulkThreads: async (_root, { credentials: c }, ctx) => {
      const creds = credentials(c);
      try {
        const data = await ctx.upstream.call<unknown>(ctx, BULK.threads, { headers: headersOf(creds) });
        return (Array.isArray(data) ? data : []).map(thread).filter((x): x is BulkThread => x !== null);
      } catch (err) {
        if (err instanceof UpstreamError && err.status === 404) return [];
        throw refusedCredentials(err);
      }
    },
    bulkThread: async (_root, { credentials: c, id }, ctx) => {
      const creds = credentials(c);
      try {
        return thread(await ctx.upstream.call<unknown>(ctx, BULK.thread, { params: { id: threadId(id) }, headers: headersOf(creds) }));
      } catch (err) {
        if (err instanceof UpstreamError && err.status === 404) return null;
        throw refusedCredentials(err);
      }
    },
    bulkSendingReceipts: async (_root, { credentials: c, code: raw }, ctx) => {
      const creds = credentials(c);
      const code = sendingCode(raw);
      try {
        const data = await ctx.upstream.call<unknown>(ctx, BULK.receipts, { params: { code }, headers: headersOf(creds) });
        return objects(data).map(receipt);
      } catch (err) {
        if (err instanceof UpstreamError && err.status === 404) return null;
        throw refusedCredentials(err);
      }
    },
    bulkQuota: async (_root, { credentials: c, mailbox }, ctx) => {
      const creds = credentials(c);
      const box = mailbox.trim().toUpperCase();
      if (!/^[A-Z0-9._-]{1,64}$/.test(box)) throw badUserInput('mailbox must be a folder name such as INBOX', 'mailbox');
      let data: unknown;
      try {
        data = await ctx.upstream.call<unknown>(ctx, BULK.quota, { params: { mailbox: box }, headers: headersOf(creds) });
      } catch (err) {
        throw refusedCredentials(err);
      }
      const d = isObj(data) ? data : {};
      const usage = typeof d.usage === 'number' ? d.usage : null;
      const limit = typeof d.limit === 'number' ? d.limit : null;
      return { mailbox: box, usage, limit, usedPercent: usage !== null && limit ? Math.round((usage / limit) * 10000) / 100 : null };
    },
  };

  const Mutation: MutationResolvers = {
    sendCertifiedMail: (_root, { input, credentials: c, idempotencyKey: key }, ctx) => {
      const idem = idempotencyKey(key);
      const creds = credentials(c);
      const request = sendRequest(input, maxBytes);
      // The sending's requests, all of them, must fit the operation's and the day's budgets before anything is queued.
      return (async () => {
        await ctx.meter.fits(bulk.estimate(request.recipients.length), 'pecmassiva POST /send');
        return bulk.queue(ctx.auth, creds, request, idem, ctx.meter.background());
      })();
    },
    cancelBulkSending: async (_root, { id }, ctx) => {
      if (!(await bulk.get(ctx.auth.tenant, id))) throw new GraphQLError(`no sending ${id} of this account`, { extensions: { code: 'NOT_FOUND' } });
      await bulk.cancel(ctx.auth.tenant, id);
      const s = await bulk.get(ctx.auth.tenant, id);
      if (!s) throw new GraphQLError(`no sending ${id} of this account`, { extensions: { code: 'NOT_FOUND' } });
      return s;
    },
    deleteBulkSending: async (_root, { credentials: c, id }, ctx) => {
      const creds = credentials(c);
      // What is still queued is not sent (a deleted sending sends nothing more).
      const cancelled = await bulk.cancel(ctx.auth.tenant, id);
      const codes = await bulk.codesOf(ctx.auth.tenant, id);
      if (codes.length === 0) {
        if (cancelled) return true;
        throw new GraphQLError(`no sent sending ${id} of this account`, { extensions: { code: 'NOT_FOUND' } });
      }
      let deleted = true;
      for (const code of codes) {
        try {
          await ctx.upstream.call<unknown>(ctx, BULK.deleteSending, { params: { code }, headers: headersOf(creds) });
        } catch (err) {
          if (err instanceof UpstreamError && err.status === 404) deleted = false;
          else throw refusedCredentials(err);
        }
      }
      await bulk.forget(ctx.auth.tenant, id);
      return deleted;
    },
    startBulkThread: async (_root, { credentials: c, input, idempotencyKey: key }, ctx) => {
      const idem = idempotencyKey(key);
      const creds = credentials(c);
      const subject = requiredText(input.subject, 'input.subject', 500);
      if (input.participants.length === 0 || input.participants.length > 100) throw badUserInput('input.participants: 1 to 100 addresses', 'input.participants');
      const participants = input.participants.map((p, i) => email(p, `input.participants[${i}]`).toLowerCase());
      if (input.html.trim() === '' || input.html.length > 1_000_000) throw badUserInput('input.html: 1 character to 1 MB', 'input.html');
      try {
        return await bulk.keyed(
          ctx.auth.tenant,
          idem,
          { op: 'thread', username: creds.username, subject, participants, html: input.html },
          async () => {
            const data = await ctx.upstream.call<unknown>(ctx, BULK.threadStart, {
              body: { subject, participants, body: input.html, username: creds.username, password: creds.password },
            });
            const t = thread(data);
            if (!t) throw new UpstreamError('decode', 'the answer carries no thread', 'pecmassiva', 'threads', 201);
            return { id: t.id, value: t };
          },
          (id) => readThread(ctx, creds, id),
        );
      } catch (err) {
        throw refusedCredentials(err);
      }
    },
    replyBulkThread: async (_root, { credentials: c, id, html, idempotencyKey: key }, ctx) => {
      const idem = idempotencyKey(key);
      const creds = credentials(c);
      const tid = threadId(id);
      if (html.trim() === '' || html.length > 1_000_000) throw badUserInput('html: 1 character to 1 MB', 'html');
      try {
        return await bulk.keyed(
          ctx.auth.tenant,
          idem,
          { op: 'reply', username: creds.username, thread: tid, html },
          async () => {
            const t = thread(
              await ctx.upstream.call<unknown>(ctx, BULK.threadReply, { params: { id: tid }, body: { body: html, username: creds.username, password: creds.password } }),
            );
            if (!t) throw new UpstreamError('decode', 'the answer carries no thread', 'pecmassiva', 'threads', 200);
            return { id: t.id, value: t };
          },
          (tidDone) => readThread(ctx, creds, tidDone),
        );
      } catch (err) {
        throw refusedCredentials(err);
      }
    },
    deleteBulkThread: async (_root, { credentials: c, id }, ctx) => {
      const creds = credentials(c);
      try {
        await ctx.upstream.call<unknown>(ctx, BULK.threadDelete, { params: { id: threadId(id) }, headers: headersOf(creds) });
        return true;
      } catch (err) {
        if (err instanceof UpstreamError && err.status === 404) return false;
        throw refusedCredentials(err);
      }
    },
    startBulkDispatch: async (_root, _args, ctx) => {
      const data = await ctx.upstream.call<unknown>(ctx, BULK.cronStart);
      return isObj(data) && typeof data.receipts === 'number' ? data.receipts : 0;
    },
    deleteBulkInboxMessage: async (_root, { credentials: c, id }, ctx) => {
      const creds = credentials(c);
      if (!/^\d{1,12}$/.test(id)) throw badUserInput('id must be a number', 'id');
      try {
        await ctx.upstream.call<unknown>(ctx, BULK.deleteMessage, { params: { id }, headers: headersOf(creds) });
        return true;
      } catch (err) {
        if (err instanceof UpstreamError && err.status === 404) return false;
        throw refusedCredentials(err);
      }
    },
  };

  /** One inbox page (the raw body: data, total, n_of_pages), read with a budget unit already taken. */
  const inboxPage = async (ctx: CallContext & { upstream: Upstream }, creds: BulkCredentials, q: string, page: number): Promise<{ items: unknown[]; pages: number }> => {
    const body = await ctx.upstream.call<unknown>(ctx, BULK.inbox, { query: { ...(q ? { q } : {}), page }, headers: headersOf(creds) });
    const b = isObj(body) ? body : {};
    return { items: Array.isArray(b.data) ? b.data : [], pages: typeof b.n_of_pages === 'number' ? Math.max(1, b.n_of_pages) : 1 };
  };

  /**
   * The newest messages (the last page, and the one before when the last is short; ids grow with
   * arrival), above `after`. `pages` is the inbox's page count last seen (1 when unknown): its last
   * page is read first, and the page count it answers says whether another page is needed. The round's
   * budget units are taken together before its first paid read (none left, nothing is read: null);
   * a round that needs more pages than it took units for and gets no more uses the pages it paid
   * for (`complete` false when the last page is not among them): no page read is discarded.
   */
  async function newest(
    ctx: CallContext & { upstream: Upstream },
    creds: BulkCredentials,
    q: string,
    after: number,
    pages: number,
  ): Promise<{ found: BulkInboxMessage[]; complete: boolean; pages: number } | null> {
    let units = 0;
    for (const want = pages > 1 ? 2 : 1; units < want; units++) if (!(await bulk.spendRead())) break;
    if (units === 0) return null;
    const read = new Map<number, { items: unknown[]; pages: number }>();
    const page = async (n: number): Promise<{ items: unknown[]; pages: number } | null> => {
      const known = read.get(n);
      if (known) return known;
      if (units > 0) units--;
      else if (!(await bulk.spendRead())) return null;
      const p = await inboxPage(ctx, creds, q, n);
      read.set(n, p);
      return p;
    };
    const guess = (await page(Math.max(1, pages)))!;
    const last = guess.pages === Math.max(1, pages) ? guess : await page(guess.pages);
    const count = last?.pages ?? guess.pages;
    // A short last page: the one before too, when a unit is left (else what was read is used).
    if (last !== null && count > 1 && last.items.length < 5) await page(count - 1);
    const complete = last !== null;
    const found = [...read.values()]
      .flatMap((p) => p.items)
      .map(message)
      .filter((m): m is BulkInboxMessage => m !== null && Number(m.id) > after)
      .sort((x, y) => Number(x.id) - Number(y.id));
    return { found: [...new Map(found.map((m) => [m.id, m])).values()], complete, pages: count };
  }

  /**
   * The inbox's arrivals while subscribed. The reads stop as soon as the client leaves (`return()`
   * ends the wait between two reads at once), and the credentials are dropped with the iterator.
   * Each read takes a unit of the bulk reads' per-minute budget (`BulkService.spendRead`: none
   * left, the inbox is read at the next round) and is charged, like the queue's reads, to the
   * tenant's day budget and free tiers on the shared ledger (a background meter of the subscribing
   * operation); what the reads cost is logged when the subscription ends.
   */
  function arrivals(ctx: SubgraphContext, creds: BulkCredentials, q: string): AsyncIterableIterator<{ inboxMessageReceived: BulkInboxMessage }> {
    const stop = new AbortController();
    const pause = (ms: number): Promise<void> =>
      new Promise((resolve) => {
        const timer = setTimeout(resolve, ms);
        stop.signal.addEventListener(
          'abort',
          () => {
            clearTimeout(timer);
            resolve();
          },
          { once: true },
        );
      });
    async function* loop(): AsyncGenerator<{ inboxMessageReceived: BulkInboxMessage }> {
      // Background reads: an operation of their own on the tenant's day (the subscribing one has ended).
      // The layer's own token is kept as a marker and resolved per read (it may be renewed meanwhile).
      const kept = bulk.tokens.keep(ctx.auth.token);
      const meter = ctx.meter.background();
      const read = (): CallContext & { upstream: Upstream } => ({ auth: { ...ctx.auth, token: bulk.tokens.use(kept) }, meter, upstream: ctx.upstream });
      let seen = 0;
      let start = true;
      let pages = 1;
      try {
        while (!stop.signal.aborted) {
          let round: Awaited<ReturnType<typeof newest>>;
          try {
            round = await newest(read(), creds, q, seen, pages);
          } catch (err) {
            throw refusedCredentials(err);
          }
          if (round !== null) {
            const { found } = round;
            pages = round.pages;
            // Latest first: on subscribing, only the newest message (none while the last page is unread:
            // what was read is older, marked seen); then every one above it.
            const out = start ? (round.complete ? found.slice(-1) : []) : found;
            start = start && !round.complete;
            if (found.length > 0) seen = Math.max(seen, ...found.map((m) => Number(m.id)));
            for (const m of out) yield { inboxMessageReceived: m };
          }
          await pause(bulk.inboxPollMs);
        }
      } finally {
        const spent = meter.summary();
        if (spent.upstreamCalls > 0) log.info({ area: 'pecmassiva', reads: spent.upstreamCalls, euro: spent.euro }, 'an inbox subscription ended');
      }
    }
    const gen = loop();
    const it: AsyncIterableIterator<{ inboxMessageReceived: BulkInboxMessage }> = {
      [Symbol.asyncIterator]: () => it,
      next: () => gen.next(),
      return: async () => {
        stop.abort();
        return { value: undefined, done: true };
      },
      throw: async (e?: unknown) => {
        stop.abort();
        throw e;
      },
    };
    return it;
  }

  const Subscription: SubscriptionResolvers = {
    inboxMessageReceived: {
      subscribe: (_root, { credentials: c, search }, ctx: SubgraphContext) => {
        const creds = credentials(c);
        const q = search?.trim() ?? '';
        if (q.length > 200) throw badUserInput('search: at most 200 characters', 'search');
        return arrivals(ctx, creds, q);
      },
    },
    sendingUpdated: {
      subscribe: async (_root, { id }, ctx: SubgraphContext) => {
        const known = await bulk.get(ctx.auth.tenant, id);
        if (!known) throw new GraphQLError(`no sending ${id} of this account`, { extensions: { code: 'NOT_FOUND' } });
        const source = bulk.bus.subscribe(bulk.topic(ctx.auth.tenant, id), {
          initial: async () => [structuredClone((await bulk.get(ctx.auth.tenant, id)) ?? known)],
          identity: (e) => e.id,
          version: (e) => e.seq,
          until: (e) => e.done,
        });
        return payloads('sendingUpdated', source);
      },
    },
  };

  const BulkSending: BulkSendingResolvers = {
    counts: (s) => countsOf(s),
    cost: (s) => s.cost ?? { euro: 0, atRisk: 0, estimate: bulk.estimate(s.recipients.length) },
    recipients: (s, { state }) =>
      s.recipients
        .filter((r) => !state || r.state === state)
        .map((r) => ({ address: r.address, state: r.state, messageId: r.code, acceptedAt: r.acceptedAt, deliveredAt: r.deliveredAt, failedAt: r.failedAt, reason: r.reason })),
  };

  return { Query, Mutation, Subscription, BulkSending };
}
