/**
 * Shared subscriptions at the gateway: clients asking the same subscription with the same
 * credentials share one subscription to the subgraph, every one of them gets every event, a late
 * joiner gets the latest state first, and another tenant gets a subscription of its own; subscriptions
 * over many items are not shared. Subgraph
 * subscriptions are counted on the wire: the graphql-ws `subscribe` messages the gateway sends to the
 * subgraphs' server.
 */
import { Socket } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { createClient, type Client, type FormattedExecutionResult } from 'graphql-ws';
import { makeFiscalCode } from '../../../contract/checksums.ts';
import { startTestStack, type TestStack } from '../../support/stack.ts';
import { withSafety } from '../../support/safety.ts';
import type { Obj } from '../../../contract/values.ts';
import { waitFor } from '../../support/wait.ts';

type Result = FormattedExecutionResult<Obj, unknown>;

const TENANT_B = 'subscription-sharing-tenant-b';
const ORDER = `mutation($input: PersonSubjectInput!) { orderPatrimonialReport(level: STANDARD, input: $input) { id state } }`;
const UPDATED = `subscription($id: ID!) { riskRequestUpdated(id: $id) { id state done } }`;
const FEED = `subscription { riskRequestsUpdated(family: PATRIMONIAL) { id state } }`;
const taxCode = makeFiscalCode({ surname: 'Rossi', name: 'Mario', birthDate: '1990-04-28', gender: 'M', cadastralCode: 'L117' });

let t: TestStack;
const clients: Client[] = [];
/** graphql-ws messages the gateway sent to the subgraphs' server, by type. */
const toSubgraphs: Array<{ type: string; id?: string }> = [];
let subgraphWs = '';
/**
 * The gateway's graphql-ws client to the subgraphs uses the platform's WebSocket where there is one
 * (Node >= 22: undici's, global) and the `ws` package's otherwise: the messages are read at both.
 */
const socketClasses: Array<{ prototype: { send: (...args: never[]) => void } }> = [WebSocket, ...(typeof globalThis.WebSocket === 'function' ? [globalThis.WebSocket] : [])];
const originalSends = socketClasses.map((c) => c.prototype.send);

beforeAll(async () => {
  t = await startTestStack();
  subgraphWs = t.stack.subgraphs.url.replace(/^http/, 'ws');
  socketClasses.forEach((c, i) => {
    const original = originalSends[i] as (this: unknown, ...args: unknown[]) => void;
    c.prototype.send = function (this: { url?: unknown }, data: unknown, ...rest: unknown[]) {
      if (typeof this.url === 'string' && this.url.startsWith(subgraphWs) && typeof data === 'string') toSubgraphs.push(JSON.parse(data) as { type: string; id?: string });
      original.call(this, data, ...rest);
    };
  });
  // Requests complete only when the test says so.
  await t.control('risk/timing', { completeAfterMs: 0 });
  await t.control('tokens', { token: TENANT_B, owner: 'tenant-b@example.com' });
}, 120_000);
afterAll(async () => {
  socketClasses.forEach((c, i) => (c.prototype.send = originalSends[i]));
  await Promise.allSettled(clients.map(async (c) => c.dispose()));
  await t?.close();
});
beforeEach(() => {
  toSubgraphs.length = 0;
});

const subscribes = (): number => toSubgraphs.filter((m) => m.type === 'subscribe').length;
/** Subscriptions to the subgraph of the family feed (`FEED`) alone. */
const feedSubscribes = (): number => toSubgraphs.filter((m) => m.type === 'subscribe' && JSON.stringify(m).includes('riskRequestsUpdated')).length;
const completes = (): number => toSubgraphs.filter((m) => m.type === 'complete').length;

/** A client on its own connection, subscribed (its subscription's id `id`, else graphql-ws's UUID). */
function subscribe(query: string, variables: Obj, token?: string, id?: string): AsyncIterableIterator<Result> {
  const client = createClient({
    url: t.stack.gateway.wsUrl,
    webSocketImpl: WebSocket,
    connectionParams: token ? { authorization: `Bearer ${token}` } : {},
    retryAttempts: 0,
    lazy: true,
    ...(id === undefined ? {} : { generateID: () => id }),
  });
  clients.push(client);
  return client.iterate<Obj>({ query, variables });
}

async function next(it: AsyncIterator<Result>): Promise<Obj> {
  const r = await withSafety(it.next(), 'subscription event', 20_000);
  if (r.done) throw new Error('the subscription ended');
  expect(r.value.errors, JSON.stringify(r.value.errors)).toBeUndefined();
  return r.value.data as Obj;
}

/** Polls a condition (a safety limit, not a timed assertion). */
const until = async (what: string, ok: () => boolean | Promise<boolean>): Promise<void> => void (await waitFor(ok, what, { deadline: 20_000 }));

const metricsText = async (): Promise<string> => (await fetch(`${t.stack.gateway.url}/metrics`)).text();

/** `openapi_subscriptions_open` of one operation name. */
async function openOf(operation: string): Promise<number> {
  const line = (await metricsText()).split('\n').find((l) => l.startsWith('openapi_subscriptions_open{') && l.includes(`operation="${operation}"`));
  return line ? Number(line.split(' ').at(-1)) : 0;
}

async function order(): Promise<string> {
  const res = await t.gql<{ orderPatrimonialReport: { id: string } }>(ORDER, { input: { name: 'Mario', surname: 'Rossi', taxCode } });
  expect(res.errors).toBeUndefined();
  return res.data!.orderPatrimonialReport.id;
}

describe('one subgraph subscription per topic', () => {
  it('twelve clients of one request: one subgraph subscription, every client gets the change and the end', async () => {
    const id = await order();
    const first = Array.from({ length: 8 }, () => subscribe(UPDATED, { id }));
    for (const it of first) expect(await next(it)).toEqual({ riskRequestUpdated: { id, state: 'PROCESSING', done: false } });
    // Late joiners get the latest state at once, from the shared subscription.
    const late = Array.from({ length: 4 }, () => subscribe(UPDATED, { id }));
    for (const it of late) expect(await next(it)).toEqual({ riskRequestUpdated: { id, state: 'PROCESSING', done: false } });
    expect(subscribes()).toBe(1);

    await t.control('risk/advance', { id });
    for (const it of [...first, ...late]) expect(await next(it)).toEqual({ riskRequestUpdated: { id, state: 'COMPLETE', done: true } });
    for (const it of [...first, ...late]) expect((await withSafety(it.next(), 'end of stream', 20_000)).done).toBe(true);
    expect(subscribes()).toBe(1);
  });

  it('clients leaving do not end it for the others', async () => {
    const id = await order();
    const its = Array.from({ length: 3 }, () => subscribe(UPDATED, { id }));
    for (const it of its) await next(it);
    expect(subscribes()).toBe(1);
    await its[0].return!();
    await its[1].return!();
    // Still one subscriber: nothing is closed.
    await t.control('risk/advance', { id });
    expect(await next(its[2])).toEqual({ riskRequestUpdated: { id, state: 'COMPLETE', done: true } });
    expect(subscribes()).toBe(1);
  });

  it('another tenant asking for the same request gets its own subscription, and none of its states', async () => {
    const id = await order(); // tenant A's (the emulator's built-in account)
    const a = Array.from({ length: 3 }, () => subscribe(UPDATED, { id }));
    for (const it of a) expect(await next(it)).toEqual({ riskRequestUpdated: { id, state: 'PROCESSING', done: false } });
    const b = subscribe(UPDATED, { id }, TENANT_B);
    const first = await withSafety(b.next(), 'tenant B answer', 20_000);
    // Tenant B is answered on a subscription of its own, never with tenant A's request.
    expect(JSON.stringify(first.value?.data ?? null)).not.toContain('PROCESSING');
    expect(first.done || (first.value?.errors?.length ?? 0) > 0).toBe(true);
    expect(subscribes()).toBe(2);
    for (const it of a) await it.return!();
    await b.return?.();
  });

  it('late joiners are served from the running subscription, each counted open until it ends', async () => {
    const FOLLOW = `subscription Follow($id: ID!) { riskRequestUpdated(id: $id) { id state done } }`;
    const before = await openOf('Follow');
    const id = await order();
    const opener = subscribe(FOLLOW, { id });
    expect(await next(opener)).toEqual({ riskRequestUpdated: { id, state: 'PROCESSING', done: false } });
    const joiners = Array.from({ length: 30 }, () => subscribe(FOLLOW, { id }));
    for (const it of joiners) expect(await next(it)).toEqual({ riskRequestUpdated: { id, state: 'PROCESSING', done: false } });
    expect(subscribes()).toBe(1);
    expect(await openOf('Follow')).toBe(before + 31);

    await t.control('risk/advance', { id });
    for (const it of [opener, ...joiners]) expect(await next(it)).toEqual({ riskRequestUpdated: { id, state: 'COMPLETE', done: true } });
    for (const it of [opener, ...joiners]) expect((await withSafety(it.next(), 'end of stream', 20_000)).done).toBe(true);
    // The opener's count ends with its execution.
    await until('every subscriber counted closed', async () => (await openOf('Follow')) === before);
    expect(await openOf('Follow')).toBe(before);
    expect(subscribes()).toBe(1);
  });

  it('a connection whose params carry a malformed credential is refused, though the topic it asks for runs', async () => {
    const id = await order();
    const opener = subscribe(UPDATED, { id });
    expect(await next(opener)).toEqual({ riskRequestUpdated: { id, state: 'PROCESSING', done: false } });
    const client = createClient({ url: t.stack.gateway.wsUrl, webSocketImpl: WebSocket, connectionParams: { token: 'abc' }, retryAttempts: 0, lazy: true });
    clients.push(client);
    const refused = await withSafety(client.iterate<Obj>({ query: UPDATED, variables: { id } }).next(), 'refusal', 20_000).then(
      (r) => (r.value as Result | undefined)?.errors ?? [],
      (err: unknown) => (Array.isArray(err) ? (err as Array<{ extensions?: Obj }>) : [{ message: String(err) }]),
    );
    expect(refused.map((e) => (e as { extensions?: Obj }).extensions?.code)).toContain('UNAUTHENTICATED');
    await opener.return!();
  });

  it('the opener leaving while joiners stay: the open count follows the subscribers still there', async () => {
    const WATCH = `subscription Watch($id: ID!) { riskRequestUpdated(id: $id) { id state done } }`;
    const id = await order();
    const before = await openOf('Watch');
    const opener = subscribe(WATCH, { id });
    await next(opener);
    const joiners = Array.from({ length: 3 }, () => subscribe(WATCH, { id }));
    for (const it of joiners) await next(it);
    expect(await openOf('Watch')).toBe(before + 4);
    await opener.return!();
    await until('the opener counted closed', async () => (await openOf('Watch')) === before + 3);
    expect(await openOf('Watch')).toBe(before + 3);
    for (const it of joiners) await it.return!();
    await until('every subscriber counted closed', async () => (await openOf('Watch')) === before);
    expect(await openOf('Watch')).toBe(before);
  });

  it('a document refused at validation, asked by several at once, never becomes an operation label nor counts as ok', async () => {
    const JUNK = `subscription JunkName($id: ID!) { riskRequestUpdated(id: $id) { nope } }`;
    const id = await order();
    const answers = await Promise.all(
      Array.from({ length: 3 }, async () => {
        const r = await withSafety(subscribe(JUNK, { id }).next(), 'refusal', 20_000).then(
          (x) => (x.value as Result | undefined)?.errors ?? [],
          (err: unknown) => (Array.isArray(err) ? (err as unknown[]) : [err]),
        );
        return r.length;
      }),
    );
    expect(answers.every((n) => n > 0)).toBe(true);
    expect(await metricsText()).not.toContain('JunkName');
  });

  it('a subscriber whose persisted-query hash does not match its document is refused, though the topic runs', async () => {
    const id = await order();
    const opener = subscribe(UPDATED, { id });
    await next(opener);
    const client = createClient({ url: t.stack.gateway.wsUrl, webSocketImpl: WebSocket, retryAttempts: 0, lazy: true });
    clients.push(client);
    const got = await withSafety(
      client.iterate<Obj>({ query: UPDATED, variables: { id }, extensions: { persistedQuery: { version: 1, sha256Hash: 'f'.repeat(64) } } }).next(),
      'refusal',
      20_000,
    ).then(
      (r) => JSON.stringify(r.value ?? null),
      (err: unknown) => `refused: ${JSON.stringify(err)}`,
    );
    // An `error` message with its code (not a closed socket), and none of the topic's states.
    expect(got).toContain('PERSISTED_QUERY_HASH_MISMATCH');
    expect(got).not.toContain('PROCESSING');
    await opener.return!();
  });

  it('subscriptions over many items (every request of a family) are not shared: a joiner would get only the last item', async () => {
    const a = Array.from({ length: 3 }, () => subscribe(FEED, {}));
    const b = Array.from({ length: 2 }, () => subscribe(FEED, {}, TENANT_B));
    await until('five subgraph subscriptions', () => feedSubscribes() >= 5);
    const id = await order(); // tenant A's (the emulator's built-in account)
    // Every client of tenant A sees its new request (after whatever the feed sent before it).
    for (const it of a) {
      let seen: Obj | undefined;
      while ((seen = (await next(it)).riskRequestsUpdated as Obj).id !== id);
      expect(seen).toMatchObject({ id, state: 'PROCESSING' });
    }
    // Tenant B's feed holds B's requests only: up to B's own new request, never A's.
    const ordered = await t.gql<{ orderPatrimonialReport: { id: string } }>(
      ORDER,
      { input: { name: 'Mario', surname: 'Rossi', taxCode } },
      { authorization: `Bearer ${TENANT_B}` },
    );
    expect(ordered.errors).toBeUndefined();
    const idB = ordered.data!.orderPatrimonialReport.id;
    for (const it of b) {
      const seen: string[] = [];
      while (seen.at(-1) !== idB) seen.push(((await next(it)).riskRequestsUpdated as Obj).id as string);
      expect(seen).not.toContain(id);
    }
    for (const it of [...a, ...b]) await it.return!();
    await until('all closed', () => completes() >= 5);
    expect(feedSubscribes()).toBe(5);
  });
});

describe('frames written straight to the sockets', () => {
  it('many subscribers, a late joiner, ids long enough for 16- and 64-bit frame lengths: every client reads every frame', async () => {
    // The gateway's frames written whole to a socket (a server's: unmasked) carrying a `next`.
    const direct: Buffer[] = [];
    const write = Socket.prototype.write;
    const spy = function (this: Socket, chunk: unknown, ...rest: unknown[]): boolean {
      if (
        chunk instanceof Uint8Array &&
        chunk[0] === 0x81 &&
        ((chunk[1] ?? 0) & 0x80) === 0 &&
        Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength).includes('"type":"next"')
      ) {
        direct.push(Buffer.from(chunk));
      }
      return (write as (this: Socket, ...args: unknown[]) => boolean).call(this, chunk, ...rest);
    };
    Socket.prototype.write = spy;
    try {
      const id = await order();
      const processing = { riskRequestUpdated: { id, state: 'PROCESSING', done: false } };
      const many = Array.from({ length: 20 }, () => subscribe(UPDATED, { id }));
      const [short, long16, long64] = ['s', 'm'.repeat(400), 'L'.repeat(70_000)].map((subId) => subscribe(UPDATED, { id }, undefined, subId));
      const all = [...many, short, long16, long64];
      for (const it of all) expect(await next(it)).toEqual(processing);
      const late = subscribe(UPDATED, { id });
      expect(await next(late)).toEqual(processing);
      all.push(late);
      expect(subscribes()).toBe(1);

      await t.control('risk/advance', { id });
      for (const it of all) expect(await next(it)).toEqual({ riskRequestUpdated: { id, state: 'COMPLETE', done: true } });
      for (const it of all) expect((await withSafety(it.next(), 'end of stream', 20_000)).done).toBe(true);
      // Every `next` (the first state and the last, to each) was written whole, with lengths of every size.
      expect(direct).toHaveLength(2 * all.length);
      const lengthBits = new Set(direct.map((f) => (f[1] === 127 ? 64 : f[1] === 126 ? 16 : 7)));
      expect(lengthBits).toContain(16);
      expect(lengthBits).toContain(64);
    } finally {
      Socket.prototype.write = write;
    }
  });
});
