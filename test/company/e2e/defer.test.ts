/**
 * `@defer` of a company profile's slow sections, through the gateway against the emulator: the
 * part delivered at once is bought from a cheap endpoint and arrives while the slow dataset is
 * still being prepared (the emulator's clock is manual: the dataset is ready when the test moves
 * it), the deferred part when it is ready; over multipart/mixed, SSE and Apollo Client. The
 * emulator's call log is the ground truth of calls and euro; `extensions.cost` is a running total
 * whose last figure is the operation's whole.
 */
import { readFileSync } from 'node:fs';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { ApolloClient, HttpLink, InMemoryCache, gql } from '@apollo/client';
import { Defer20220824Handler } from '@apollo/client/incremental';
import { apolloCacheConfig } from '../../../client/apollo.ts';
import { registeredVats } from '../../../emulator/company/index.ts';
import { startTestStack, type GraphQLResponse, type TestStack } from '../../support/stack.ts';

/** Identity from IT-address (€0.03) at once; managers and shareholders from IT-stakeholders (€0.5) later. */
const PROFILE = `query Profile($vat: String!) {
  company(vatCode: $vat) {
    vatCode
    companyName
    address { town }
    ... @defer(label: "people") { managers { __typename } shareholders { __typename } }
  }
}`;
/** The same selection without `@defer`: one purchase, IT-stakeholders (€0.5), the existing plan. */
const PROFILE_AT_ONCE = PROFILE.replace('... @defer(label: "people") {', '... {');
/** Distinct cold companies, one per test. */
const VATS = registeredVats(2_600_000, 10);

type Cost = NonNullable<NonNullable<GraphQLResponse['extensions']>['cost']> & { partial?: boolean };
interface Payload {
  data?: { company?: Record<string, unknown> } | null;
  errors?: unknown[];
  hasNext?: boolean;
  incremental?: Array<{ data?: Record<string, unknown>; path?: Array<string | number>; label?: string }>;
  extensions?: { cost?: Cost };
}

let t: TestStack;

beforeAll(async () => {
  // A budget of €1 per operation: the deferred profile (€0.53) fits; see the budget test.
  t = await startTestStack({ OPENAPI_MAX_EURO_PER_OPERATION: '1' });
}, 120_000);
afterAll(async () => {
  await t?.close();
}, 120_000);
beforeEach(async () => {
  await t.control('clock', { mode: 'manual' });
  // The slow datasets take 5 s of the emulator's (manual) clock: within the vendor's GET wait.
  await t.control('company/slow', { ms: 5000 });
  await t.clearCalls();
});
afterEach(async () => {
  await t.control('company/slow', {});
  await t.control('clock', { mode: 'real' });
});

interface Clock {
  jobs: Array<{ label: string }>;
}

/** Until the emulator holds a GET of a slow dataset, waiting for it to be prepared (a job on its clock). */
async function untilSlowGetWaits(): Promise<void> {
  for (let i = 0; i < 5000; i++) {
    const clock = (await (await request(`${t.stack.emulatorUrl!}/_emulator/clock`)).body.json()) as Clock;
    if (clock.jobs.some((j) => j.label.endsWith(' wait'))) return;
  }
  throw new Error('safety limit: no slow GET is waiting');
}

/** The company calls the emulator answered, in order. */
const companyCalls = async (): Promise<string[]> => (await t.calls('company')).map((c) => `${c.method} ${c.path} ${c.status}`);
const euroCharged = async (): Promise<number> => (await t.calls('company')).reduce((sum, c) => sum + c.price, 0);

/** `openapi_operations_total` of the `Profile` operations that ended `ok` (the gateway's /metrics). */
async function profilesCounted(): Promise<number> {
  const text = await (await request(`${t.url}/metrics`)).body.text();
  const line = text.split('\n').find((l) => l.startsWith('openapi_operations_total{') && l.includes('operation="Profile"') && l.includes('outcome="ok"'));
  return line ? Number(line.split(' ').at(-1)) : 0;
}

/** Posts an operation asking for `accept`; the response's body. */
async function post(query: string, variables: Record<string, unknown>, accept: string): Promise<{ contentType: string; body: AsyncIterable<Buffer> }> {
  const res = await request(t.stack.gateway.graphqlUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept },
    body: JSON.stringify({ query, variables }),
  });
  expect(res.statusCode).toBe(200);
  return { contentType: String(res.headers['content-type']), body: res.body as AsyncIterable<Buffer> };
}

/** The JSON payloads of a `multipart/mixed` answer, as each part arrives (each part says its Content-Length). */
async function* multipartPayloads(body: AsyncIterable<Buffer>): AsyncGenerator<Payload> {
  let buf = Buffer.alloc(0);
  for await (const chunk of body) {
    buf = Buffer.concat([buf, chunk]);
    for (;;) {
      const head = buf.indexOf('\r\n\r\n');
      if (head < 0) break;
      const length = /content-length:\s*(\d+)/i.exec(buf.subarray(0, head).toString('utf8'));
      if (!length) {
        // The closing delimiter, or a part's headers not complete yet.
        if (buf.subarray(0, head).includes('-----')) buf = buf.subarray(head + 4);
        break;
      }
      const end = head + 4 + Number(length[1]);
      if (buf.length < end) break;
      yield JSON.parse(buf.subarray(head + 4, end).toString('utf8')) as Payload;
      buf = buf.subarray(end);
    }
  }
}

/** The payloads of a GraphQL-over-SSE answer (`event: next` … `event: complete`), as each event arrives. */
async function* ssePayloads(body: AsyncIterable<Buffer>): AsyncGenerator<Payload> {
  let text = '';
  for await (const chunk of body) {
    text += chunk.toString('utf8');
    for (let end = text.indexOf('\n\n'); end >= 0; end = text.indexOf('\n\n')) {
      const event = text.slice(0, end);
      text = text.slice(end + 2);
      const type = /^event: (.*)$/m.exec(event)?.[1];
      if (type === 'complete') return;
      const data = event
        .split('\n')
        .filter((l) => l.startsWith('data:'))
        .map((l) => l.slice(5).trimStart())
        .join('\n');
      if (type === 'next' && data !== '') yield JSON.parse(data) as Payload;
    }
  }
}

async function next(payloads: AsyncGenerator<Payload>): Promise<Payload> {
  const r = await payloads.next();
  if (r.done) throw new Error('the answer ended early');
  return r.value;
}

async function rest(payloads: AsyncGenerator<Payload>): Promise<Payload[]> {
  const out: Payload[] = [];
  for await (const p of payloads) out.push(p);
  return out;
}

/** The deferred profile, asserted payload by payload (whatever the transport). */
async function deferredProfile(vat: string, payloads: AsyncGenerator<Payload>): Promise<void> {
  // The fast part: identity from IT-address, while the slow dataset is still being prepared.
  const first = await next(payloads);
  expect(first.errors).toBeUndefined();
  expect(first.hasNext).toBe(true);
  expect(first.data?.company).toEqual({ vatCode: vat, companyName: expect.any(String), address: { town: expect.any(String) } });
  expect(first.extensions?.cost).toMatchObject({ upstreamCalls: 1, euro: 0.03, partial: true, estimate: { euro: 0.53 } });
  await untilSlowGetWaits();
  // Still pending on the emulator: only the cheap call is answered.
  expect(await companyCalls()).toEqual([`GET /IT-address/${vat} 200`]);

  // The dataset is ready: the deferred part.
  await t.control('clock', { advanceMs: 5000 });
  const later = await rest(payloads);
  const parts = later.flatMap((p) => p.incremental ?? []);
  expect(parts).toEqual([{ label: 'people', path: ['company'], data: { managers: expect.any(Array), shareholders: expect.any(Array) } }]);
  expect((parts[0].data?.managers as unknown[]).length).toBeGreaterThan(0);
  const last = later[later.length - 1];
  expect(last.hasNext).toBe(false);
  // The last payload's cost is the operation's whole; only the last one is not partial.
  expect(later.slice(0, -1).every((p) => p.extensions?.cost?.partial === true)).toBe(true);
  const total = last.extensions!.cost!;
  expect(total.partial).toBeUndefined();
  expect(total).toMatchObject({ upstreamCalls: 2, cacheHits: 0, dedupHits: 0, euro: 0.53, atRisk: 0, estimate: { euro: 0.53 } });
  // Both parts were charged to the one operation's budget (€1 in this file).
  expect(total.budget?.operation).toEqual({ limit: 1, committed: 0.53, remaining: 0.47 });
  expect(total.calls.map((c) => `${c.path} ${c.euro}`)).toEqual([`/IT-address/${vat} 0.03`, `/IT-stakeholders/${vat} 0.5`]);
  expect(await companyCalls()).toEqual([`GET /IT-address/${vat} 200`, `GET /IT-stakeholders/${vat} 200`]);
  expect(await euroCharged()).toBeCloseTo(total.euro, 6);
}

describe('a company profile deferring its slow sections', () => {
  it('over multipart/mixed: the identity at once from a cheap endpoint, the people when the dataset is ready', async () => {
    const vat = VATS[0];
    const before = await profilesCounted();
    const res = await post(PROFILE, { vat }, 'multipart/mixed');
    expect(res.contentType).toMatch(/^multipart\/mixed/);
    await deferredProfile(vat, multipartPayloads(res.body));
    // Counted once in /metrics, when it ended.
    expect((await profilesCounted()) - before).toBe(1);
  });

  it('over SSE (text/event-stream): the same parts, calls and euro', async () => {
    const vat = VATS[1];
    const res = await post(PROFILE, { vat }, 'text/event-stream');
    expect(res.contentType).toMatch(/^text\/event-stream/);
    await deferredProfile(vat, ssePayloads(res.body));
  });

  it('without @defer buys the whole profile in one purchase (the existing plan, fewest euro) and answers once', async () => {
    const vat = VATS[2];
    const estimate = await t.gql(PROFILE_AT_ONCE, { vat }, { 'x-openapi-estimate-only': 'true' });
    expect(estimate.extensions?.cost?.estimate?.euro).toBe(0.5);
    const answer = t.gql(PROFILE_AT_ONCE, { vat });
    await untilSlowGetWaits();
    expect(await companyCalls()).toEqual([]);
    await t.control('clock', { advanceMs: 5000 });
    const res = await answer;
    expect(res.errors).toBeUndefined();
    expect(res.extensions?.cost).toMatchObject({ upstreamCalls: 1, euro: 0.5, estimate: { euro: 0.5 } });
    expect(await companyCalls()).toEqual([`GET /IT-stakeholders/${vat} 200`]);
  });

  it('asked again, is answered whole from the response cache: nothing bought, the saving said', async () => {
    const vat = VATS[3];
    const first = multipartPayloads((await post(PROFILE, { vat }, 'multipart/mixed')).body);
    await next(first);
    await untilSlowGetWaits();
    await t.control('clock', { advanceMs: 5000 });
    await rest(first);
    await t.clearCalls();
    const again = await rest(multipartPayloads((await post(PROFILE, { vat }, 'multipart/mixed')).body));
    expect(again).toHaveLength(1);
    expect(again[0].data?.company).toMatchObject({ vatCode: vat, managers: expect.any(Array), shareholders: expect.any(Array) });
    expect(again[0].extensions?.cost).toMatchObject({ upstreamCalls: 0, cacheHits: 2, euro: 0, saved: { upstreamCalls: 2, euro: 0.53 } });
    expect(await t.calls()).toEqual([]);
  });
});

describe('the estimate and the budget of deferred parts', () => {
  // €1 exactly at once (IT-stakeholders + IT-marketing); the identity at once and the rest deferred: €1.02.
  const AT_ONCE = `query($vat: String!) { company(vatCode: $vat) { companyName managers { __typename } webAndSocial { hasSocial } } }`;
  const DEFERRED = `query($vat: String!) { company(vatCode: $vat) { companyName ... @defer { managers { __typename } webAndSocial { hasSocial } } } }`;

  it('prices each deferred part as the purchase of its own it is, and refuses one over the budget before any call', async () => {
    const vat = VATS[4];
    const atOnce = await t.gql(AT_ONCE, { vat }, { 'x-openapi-estimate-only': 'true' });
    expect(atOnce.extensions?.cost?.estimate?.euro).toBe(1);
    const deferred = await t.gql(DEFERRED, { vat });
    expect(deferred.errors?.map((e) => e.extensions?.code)).toEqual(['COST_LIMIT_EXCEEDED']);
    expect(deferred.extensions?.cost?.estimate?.euro).toBe(1.02);
    expect(await t.calls()).toEqual([]);
  });

  it('a fragment marked @defer(if: false) is still fetched apart (the gateway splits on the directive): priced and bought as two parts, answered at once', async () => {
    const vat = VATS[5];
    const query = PROFILE.replace('@defer(label: "people")', '@defer(label: "people", if: $later)').replace('($vat: String!)', '($vat: String!, $later: Boolean!)');
    const estimate = await t.gql(query, { vat, later: false }, { 'x-openapi-estimate-only': 'true' });
    expect(estimate.extensions?.cost?.estimate?.euro).toBe(0.53);
    const answer = t.gql<{ company: { managers: unknown[] } }>(query, { vat, later: false });
    await untilSlowGetWaits();
    await t.control('clock', { advanceMs: 5000 });
    const res = await answer;
    expect(res.errors).toBeUndefined();
    expect(res.data?.company.managers.length).toBeGreaterThan(0);
    expect(res.extensions?.cost).toMatchObject({ upstreamCalls: 2, euro: 0.53, estimate: { euro: 0.53 } });
    expect(await companyCalls()).toEqual([`GET /IT-address/${vat} 200`, `GET /IT-stakeholders/${vat} 200`]);
  });
});

describe('deferred fragments on search items', () => {
  const SEARCH = (limit: number) => `{ searchCompanies(filter: { province: "MI" }, limit: ${limit}) { items { companyName ... @defer { managers { __typename } } } } }`;

  it('are bought for every item: refused past 25 items before any call, as the search refuses purchases on more', async () => {
    const res = await t.gql(SEARCH(100));
    expect(res.errors?.map((e) => e.extensions?.code)).toEqual(['COST_LIMIT_EXCEEDED']);
    expect(res.errors?.[0].message).toMatch(/fields deferred on search items are bought per company, for every item; use limit ≤ 25/);
    expect(await t.calls()).toEqual([]);
  });

  it('are priced per item within 25 (the search €0.01 and IT-stakeholders for each of 2 items)', async () => {
    const res = await t.gql(SEARCH(2), undefined, { 'x-openapi-estimate-only': 'true' });
    expect(res.extensions?.cost?.estimate?.euro).toBe(1.01);
    expect(await t.calls()).toEqual([]);
  });
});

describe('where @defer works', () => {
  it('is refused inside an object without a key (the gateway could not fetch it): a validation error, nothing bought', async () => {
    const vat = VATS[7];
    const res = await t.gql(`query($vat: String!) { company(vatCode: $vat) { companyName address { street ... @defer { coordinates { latitude } } } } }`, { vat });
    expect(res.errors?.map((e) => e.extensions?.code)).toEqual(['GRAPHQL_VALIDATION_FAILED']);
    expect(res.errors?.[0].message).toMatch(/@defer is not supported on a fragment inside CompanyAddress: defer a fragment on Company/);
    expect(await t.calls()).toEqual([]);
  });

  it('the example of docs/incremental-delivery.md runs: the fast part, then the people', async () => {
    const doc = readFileSync(new URL('../../../docs/incremental-delivery.md', import.meta.url), 'utf8');
    const query = /```graphql\n([\s\S]*?)```/.exec(doc)?.[1];
    expect(query).toContain('@defer');
    const vat = VATS[6];
    const payloads = multipartPayloads((await post(query!, { vatCode: vat }, 'multipart/mixed')).body);
    const first = await next(payloads);
    expect(first.errors).toBeUndefined();
    expect(first.data?.company).toMatchObject({ vatCode: vat, companyName: expect.any(String) });
    await untilSlowGetWaits();
    await t.control('clock', { advanceMs: 5000 });
    const later = await rest(payloads);
    expect(later.flatMap((p) => p.incremental ?? []).map((p) => [p.label, Object.keys(p.data ?? {}).sort()])).toEqual([['people', ['managers', 'shareholders']]]);
    expect(later.at(-1)?.extensions?.cost).toMatchObject({ upstreamCalls: 2 });
  });
});

describe('Apollo Client (multipart, @defer)', () => {
  interface Profile {
    company: { vatCode: string; companyName: string; address: { town: string }; managers?: Array<{ __typename: string }>; shareholders?: unknown[] };
  }

  it('gets the fast fields first, then the full data once the dataset is ready', async () => {
    const vat = VATS[8];
    const client = new ApolloClient({
      cache: new InMemoryCache(apolloCacheConfig),
      link: new HttpLink({ uri: t.stack.gateway.graphqlUrl }),
      incrementalHandler: new Defer20220824Handler(),
    });
    const results: Array<{ data: Profile | undefined; dataState: string }> = [];
    let notify: (() => void) | null = null;
    /** Until the client has given `n` results with data (no timer: each result wakes it). */
    const until = async (n: number): Promise<void> => {
      while (results.length < n) await new Promise<void>((resolve) => (notify = resolve));
    };
    let failure: unknown = null;
    const sub = client.watchQuery<Profile>({ query: gql(PROFILE), variables: { vat }, fetchPolicy: 'network-only' }).subscribe({
      next: (r) => {
        if (r.dataState === 'streaming' || r.dataState === 'complete') results.push({ data: r.data, dataState: r.dataState });
        notify?.();
      },
      error: (err: unknown) => {
        failure = err;
        notify?.();
      },
    });
    try {
      await until(1);
      expect(failure).toBeNull();
      expect(results[0].dataState).toBe('streaming');
      expect(results[0].data?.company).toMatchObject({ vatCode: vat, companyName: expect.any(String), address: { town: expect.any(String) } });
      expect(results[0].data?.company.managers).toBeUndefined();
      await untilSlowGetWaits();
      expect(await companyCalls()).toEqual([`GET /IT-address/${vat} 200`]);

      await t.control('clock', { advanceMs: 5000 });
      await until(2);
      const done = results[results.length - 1];
      expect(done.dataState).toBe('complete');
      expect(done.data?.company.managers?.length).toBeGreaterThan(0);
      expect(done.data?.company.shareholders).toEqual(expect.any(Array));
      expect(await companyCalls()).toEqual([`GET /IT-address/${vat} 200`, `GET /IT-stakeholders/${vat} 200`]);
      expect(await euroCharged()).toBeCloseTo(0.53, 6);
    } finally {
      sub.unsubscribe();
    }
  });
});
