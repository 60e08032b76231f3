/**
 * Slow company datasets bought by their asynchronous POST variant, through the gateway against the
 * emulator: the layer POSTs once with its signed callback (`/callbacks/company/datasets/…`), the
 * emulator delivers the dataset there, the query answers with no IT-check_id poll, and the dataset
 * is cached under the GET's key (a later read is a cache hit). When the callback is lost, the layer
 * polls IT-check_id (free) for the request it paid for, never buying it twice. Forged callbacks are
 * refused.
 *
 * Completion is driven by the emulator's control API (`company/complete`); timeouts are safety
 * limits only.
 */
import { randomBytes } from 'node:crypto';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COMPANY_ENDPOINTS } from '../../../subgraphs/company/upstream.ts';
import { Signer } from '../../../platform/signing.ts';
import { CostMeter } from '../../../subgraphs/upstream/cost.ts';
import type { Endpoint } from '../../../subgraphs/upstream/endpoint.ts';
import { withSafety } from '../../support/safety.ts';
import { startTestStack, type GraphQLResponse, type TestStack } from '../../support/stack.ts';
import { waitFor } from '../../support/wait.ts';

const LAYER_SECRET = 'company-async-test-secret-0123456789';
const VAT = '12485671007';
const TENANT_B = 'company-async-tenant-b-token';
const MANAGERS = `query($vat: String!) { company(vatCode: $vat) { managers { __typename } } }`;

let t: TestStack;

beforeAll(async () => {
  // The POST + callback flow (the GET is the default).
  t = await startTestStack({ LAYER_SECRET, COMPANY_SLOW_PURCHASE: 'callback', COMPANY_SLOW_CALLBACK_WAIT_MS: '3000' });
  await t.control('tokens', { token: TENANT_B, owner: 'company-async-b@example.com' });
  // Requests complete only when the test says so.
  await t.control('company/slow', { ms: 3_600_000 });
});

afterAll(async () => {
  await t?.control('callbacks', { enabled: true }).catch(() => undefined);
  await t?.close();
});

const auth = (token?: string): Record<string, string> => (token ? { authorization: `Bearer ${token}` } : {});
const callsOf = async (): Promise<string[]> => (await t.calls('company')).map((c) => `${c.method} ${c.path}`);

/** Resolves once the emulator has received the layer's `times`-th POST of the slow tier (of `stack`, `t` by default). */
async function posted(path: string, times = 1, stack?: TestStack): Promise<void> {
  const of = async (): Promise<string[]> => (await (stack ?? t).calls('company')).map((c) => `${c.method} ${c.path}`);
  await waitFor(async () => (await of()).filter((c) => c === `POST ${path}`).length >= times, `POST ${path} (${times}×)`, { deadline: 20_000, every: 20 });
}

/** Resolves once the emulator has delivered a dataset callback to the layer (accepted). */
async function delivered(): Promise<void> {
  const log = async (): Promise<Array<{ url: string; status: number }>> => {
    const res = await request(`${t.stack.emulatorUrl}/_emulator/callbacks`);
    return (await res.body.json()) as Array<{ url: string; status: number }>;
  };
  await waitFor(async () => (await log()).some((d) => d.url.includes('/callbacks/company/datasets/') && d.status === 200), 'dataset callback', { deadline: 20_000, every: 20 });
}

function expectManagers(res: GraphQLResponse): void {
  expect(res.errors, JSON.stringify(res.errors)).toBeUndefined();
  const managers = (res.data as { company: { managers: unknown[] } }).company.managers;
  expect(managers.length).toBeGreaterThan(0);
}

describe('a slow tier bought by POST + callback', () => {
  it('POSTs once, answers from the callback with no IT-check_id poll, and caches the dataset under the GET key', async () => {
    await t.clearCalls();
    const query = t.gql(MANAGERS, { vat: VAT });
    await posted(`/IT-stakeholders/${VAT}`);
    expect(await t.control('company/complete', {})).toEqual({ completed: 1 });
    const res = await withSafety(query, 'answer', 20_000);
    expectManagers(res);
    expect(await callsOf()).toEqual([`POST /IT-stakeholders/${VAT}`]);
    expect(res.extensions?.cost?.euro).toBe(0.5);

    // The GET's key holds the dataset: a cache hit, nothing bought.
    const again = await t.gql(MANAGERS, { vat: VAT });
    expectManagers(again);
    expect(await callsOf()).toEqual([`POST /IT-stakeholders/${VAT}`]);
    expect(again.extensions?.cost?.euro).toBe(0);
  });

  it('polls IT-check_id for the request it paid for when the callback is lost, never buying twice', async () => {
    await t.clearCalls();
    await t.control('callbacks', { enabled: false });
    const query = t.gql(MANAGERS, { vat: VAT }, auth(TENANT_B));
    await posted(`/IT-stakeholders/${VAT}`);
    expect(await t.control('company/complete', {})).toEqual({ completed: 1 });
    const res = await withSafety(query, 'answer', 20_000);
    await t.control('callbacks', { enabled: true });
    expectManagers(res);
    const calls = await callsOf();
    expect(calls).toHaveLength(2);
    expect(calls[0]).toBe(`POST /IT-stakeholders/${VAT}`);
    expect(calls[1]).toMatch(/^GET \/IT-check_id\/[0-9a-f]{24}$/);
    expect(res.extensions?.cost?.euro).toBe(0.5);

    const again = await t.gql(MANAGERS, { vat: VAT }, auth(TENANT_B));
    expectManagers(again);
    expect(await callsOf()).toEqual(calls);
  });

  it('refuses forged and replayed dataset callbacks', async () => {
    const post = async (url: string): Promise<number> => {
      const res = await request(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ data: { companyDetails: { vatCode: VAT } } }) });
      await res.body.dump();
      return res.statusCode;
    };
    const claims = Buffer.from(JSON.stringify({ n: 'forged-nonce', t: 'someone', e: 'IT-full', i: VAT }), 'utf8').toString('base64url');
    const forged = new Signer(Buffer.from('another-secret-of-sufficient-length')).sign('company-dataset', claims, 3600);
    expect(await post(`${t.url}/callbacks/company/datasets/${forged}`)).toBe(403);
    // Signed with the layer's secret, but for another purpose (a monitor's callback): refused too.
    const other = new Signer(Buffer.from(LAYER_SECRET)).sign('company-callback', claims, 3600);
    expect(await post(`${t.url}/callbacks/company/datasets/${other}`)).toBe(403);
    // A genuine URL is accepted once.
    const genuine = new Signer(Buffer.from(LAYER_SECRET)).sign('company-dataset', claims, 3600);
    expect(await post(`${t.url}/callbacks/company/datasets/${genuine}`)).toBe(200);
    expect(await post(`${t.url}/callbacks/company/datasets/${genuine}`)).toBe(403);
  });
});

describe('a slow tier bought by POST + callback, never twice', () => {
  const PATH = `/IT-stakeholders/${VAT}`;

  it('two concurrent reads of the same tier make one POST', async () => {
    const token = await t.createToken(100);
    await t.clearCalls();
    const a = t.gql(MANAGERS, { vat: VAT }, auth(token));
    const b = t.gql(MANAGERS, { vat: VAT }, auth(token));
    await posted(PATH);
    expect(await t.control('company/complete', {})).toEqual({ completed: 1 });
    const [ra, rb] = await withSafety(Promise.all([a, b]), 'answers', 20_000);
    expectManagers(ra);
    expectManagers(rb);
    expect(await callsOf()).toEqual([`POST ${PATH}`]);
    expect((ra.extensions?.cost?.euro ?? 0) + (rb.extensions?.cost?.euro ?? 0)).toBe(0.5);
  });

  it('a callback that comes before the POST’s answer leaves no pending mark behind', async () => {
    const token = await t.createToken(100);
    await t.clearCalls();
    await t.control('callbacks', {});
    await request(`${t.stack.emulatorUrl}/_emulator/callbacks`, { method: 'DELETE' }).then((r) => r.body.dump());
    // The POST is carried out at once; its answer comes 5 s later (the call log has it only then).
    await t.control('faults', { area: 'company', pathPrefix: '/IT-stakeholders/', delayAfterMs: 5_000, count: 1 });
    let answered = false;
    const query = t.gql(MANAGERS, { vat: VAT }, auth(token)).finally(() => (answered = true));
    // Completed (and called back) as soon as the emulator holds the request.
    await waitFor(async () => ((await t.control('company/complete', {})) as { completed: number }).completed > 0, 'the POST carried out', { deadline: 20_000, every: 20 });
    await delivered();
    expect(answered).toBe(false);
    const res = await withSafety(query, 'answer', 20_000);
    expectManagers(res);
    expect(await callsOf()).toEqual([`POST ${PATH}`]);

    // With the cached copy gone (as after its TTL), a read buys it again: no stale mark makes it poll
    // the old request.
    await t.stack.upstream.clearCache();
    const again = t.gql(MANAGERS, { vat: VAT }, auth(token));
    await posted(PATH, 2);
    expect(await t.control('company/complete', {})).toEqual({ completed: 1 });
    expectManagers(await withSafety(again, 'answer', 20_000));
    expect(await callsOf()).toEqual([`POST ${PATH}`, `POST ${PATH}`]);
  });

  it('a retry after a POST whose outcome is unknown waits for its delivery instead of paying again', async () => {
    const token = await t.createToken(100);
    await t.clearCalls();
    // Carried out and charged upstream, the connection reset before the answer.
    await t.control('faults', { area: 'company', pathPrefix: '/IT-stakeholders/', reset: true, count: 1 });
    const first = await t.gql(MANAGERS, { vat: VAT }, auth(token));
    expect(first.errors).toBeDefined();
    expect(first.extensions?.cost?.atRisk).toBe(0.5);
    expect(await callsOf()).toEqual([`POST ${PATH}`]);

    const retry = t.gql(MANAGERS, { vat: VAT }, auth(token));
    expect(await t.control('company/complete', {})).toEqual({ completed: 1 });
    const res = await withSafety(retry, 'answer', 20_000);
    expectManagers(res);
    expect(await callsOf()).toEqual([`POST ${PATH}`]);
    expect(res.extensions?.cost?.euro).toBe(0);
  });

  it('caches an immediate answer only when it is the dataset: a request state (DONE) is followed by its id', async () => {
    const token = await t.createToken(100);
    const up = t.stack.upstream;
    const ep = COMPANY_ENDPOINTS.itStakeholders;
    const ctx = { auth: { token, tenant: `done-${randomBytes(4).toString('hex')}` }, meter: new CostMeter() };
    const post: Endpoint = { area: 'company', method: 'POST', path: ep.path, ttl: 0, timeoutMs: 20_000 };
    await t.clearCalls();
    await t.control('callbacks', { enabled: false });
    let requestId = '';
    const data = await withSafety(
      up.buySlow<Record<string, unknown>>(
        ctx,
        ep,
        { params: { id: VAT } },
        {
          // The vendor's Request answer when the dataset is ready at once: `{state: "DONE", id}`.
          order: async () => {
            const answer = await up.call<{ id: string; state: string }>(ctx, post, {
              params: { id: VAT },
              body: { callback: { url: `${t.url}/callbacks/company/datasets/none`, method: 'JSON', field: 'data', headers: {}, retry: 5 } },
            });
            requestId = answer.id;
            await t.control('company/complete', { id: answer.id });
            return { ...answer, state: 'DONE' };
          },
          isDataset: (d) => typeof d === 'object' && d !== null && !('state' in d) && JSON.stringify(d).includes(VAT),
          tag: 'done-test-order',
          delivered: new Promise<unknown>(() => undefined),
          waitMs: 600_000,
          markMs: 3_600_000,
        },
      ),
      'DONE answer',
      20_000,
    );
    await t.control('callbacks', { enabled: true });
    expect(data.state).toBeUndefined();
    expect(JSON.stringify(data)).toContain(VAT);
    expect(await callsOf()).toEqual([`POST ${PATH}`, `GET /IT-check_id/${requestId}`]);
    expect(await up.isCached(ctx, ep, { params: { id: VAT } })).toBe(true);
  });
});

describe('a slow tier bought by POST + callback on two replicas sharing Redis', () => {
  const PATH = `/IT-stakeholders/${VAT}`;
  const shared = {
    LAYER_SECRET,
    COMPANY_SLOW_PURCHASE: 'callback',
    REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
    REDIS_PREFIX: `test:company-async:${randomBytes(4).toString('hex')}:`,
    COMPANY_SLOW_CALLBACK_WAIT_MS: '600000',
  };
  let a: TestStack;
  let b: TestStack;

  beforeAll(async () => {
    // B calls the emulator; A calls B's emulator and gives the upstream B's URL for callbacks.
    b = await startTestStack(shared);
    await b.control('company/slow', { ms: 3_600_000 });
    a = await startTestStack({ ...shared, OPENAPI_COMPANY_URL: `${b.stack.emulatorUrl}/company`, PUBLIC_URL: b.url });
  }, 60_000);

  afterAll(async () => {
    await a?.close();
    await b?.close();
  });

  const callsOnB = async (): Promise<string[]> => (await b.calls('company')).map((c) => `${c.method} ${c.path}`);

  it('both replicas asked at once make one POST', async () => {
    const token = await b.createToken(100);
    await b.clearCalls();
    const qa = a.gql(MANAGERS, { vat: VAT }, auth(token));
    const qb = b.gql(MANAGERS, { vat: VAT }, auth(token));
    await posted(PATH, 1, b);
    expect(await b.control('company/complete', {})).toEqual({ completed: 1 });
    const [ra, rb] = await withSafety(Promise.all([qa, qb]), 'answers', 20_000);
    expectManagers(ra);
    expectManagers(rb);
    expect(await callsOnB()).toEqual([`POST ${PATH}`]);
    expect((ra.extensions?.cost?.euro ?? 0) + (rb.extensions?.cost?.euro ?? 0)).toBe(0.5);
  });

  it('a callback that reaches the other replica wakes the waiter: no IT-check_id poll', async () => {
    const token = await b.createToken(100);
    await b.clearCalls();
    // A waits up to 10 minutes for the callback, which lands on B.
    const qa = a.gql(MANAGERS, { vat: VAT }, auth(token));
    await posted(PATH, 1, b);
    expect(await b.control('company/complete', {})).toEqual({ completed: 1 });
    const res = await withSafety(qa, 'answer', 20_000);
    expectManagers(res);
    expect(await callsOnB()).toEqual([`POST ${PATH}`]);
    expect(res.extensions?.cost?.euro).toBe(0.5);
  });
});

describe('a Company reference by an 11-digit lookupCode', () => {
  /** The company subgraph's own answer for `_entities` representations (what the gateway hands over). */
  async function entities(selection: string, token: string): Promise<{ data?: { _entities: Array<Record<string, unknown>> }; errors?: unknown }> {
    const res = await request(t.stack.subgraphs.graphqlUrl('company'), {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...auth(token) },
      body: JSON.stringify({
        query: `query($r: [_Any!]!) { _entities(representations: $r) { ... on Company { ${selection} } } }`,
        variables: { r: [{ __typename: 'Company', lookupCode: VAT }] },
      }),
    });
    return (await res.body.json()) as { data?: { _entities: Array<Record<string, unknown>> }; errors?: unknown };
  }

  it('is not taken for the VAT number: vatCode is bought when asked (the code may be a tax code that differs)', async () => {
    const token = await t.createToken(100);
    await t.clearCalls();
    const key = await entities('lookupCode', token);
    expect(key.errors).toBeUndefined();
    expect(key.data?._entities).toEqual([{ lookupCode: VAT }]);
    expect(await callsOf()).toEqual([]);

    const vat = await entities('vatCode', token);
    expect(vat.errors).toBeUndefined();
    expect(vat.data?._entities).toEqual([{ vatCode: VAT }]);
    const calls = await callsOf();
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatch(new RegExp(`^GET /IT-[a-z]+/${VAT}$`));
  });
});
