/** Bulk certified mail's `Subscription` fields: the inbox's arrivals (budgeted reads) and a sending's progress. */
import { GraphQLError } from 'graphql';
import type { SubgraphContext } from '../../../runtime/context.ts';
import { badUserInput } from '../../../runtime/errors.ts';
import { payloads } from '../../../runtime/tracking/subscribe.ts';
import type { CallContext, Upstream } from '../../../upstream/upstream.ts';
import type { BulkInboxMessage, SubscriptionResolvers } from '../../__generated__/resolvers-types.ts';
import { BULK, type BulkCredentials, type BulkService } from '../../bulk.ts';
import { log } from '../../../../platform/log.ts';
import { isObj } from '../../../../contract/values.ts';
import { credentials, headersOf, message, refusedCredentials } from './shared.ts';

export function subscriptionResolvers(bulk: BulkService): SubscriptionResolvers {
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

  return {
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
}
