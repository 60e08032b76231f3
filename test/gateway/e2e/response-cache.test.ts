/**
 * Whole answers cached at the gateway (`gateway/response-cache.ts`), through the gateway against the
 * emulator: a repeated query is answered without any upstream call and says so in
 * `extensions.cost` (calls as cache hits, the euro saved); another tenant's credential misses; a
 * company monitor's check and a mutation of the caller drop the answers; risk data (read upstream
 * every time) and estimate-only requests are never served from it; each field's lifetime is its
 * subgraph's shortest upstream lifetime.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SUPERGRAPH_FILE } from '../../../gateway/compose.ts';
import { request } from 'undici';
import { callerSessions, credentialHeadersOf } from '../../../gateway/caller-session.ts';
import { cacheable, cachePolicyOf, ttlPerSchemaCoordinate } from '../../../gateway/response-cache.ts';
import { GATEWAY_AREAS } from '../../../subgraphs/index.ts';
import { DEFAULT_TOKEN } from '../../../emulator/server.ts';
import { announceChange } from '../../../platform/changes.ts';
import { POSTAL_TTL } from '../../../subgraphs/postal/upstream.ts';
import { tenantOf } from '../../../subgraphs/upstream/tenant.ts';
import { comparableBody } from '../../support/answers.ts';
import { startTestStack, type GraphQLResponse, type TestStack } from '../../support/stack.ts';
import { waitFor } from '../../support/wait.ts';
import { untilInFlight } from '../../support/inflight.ts';

/** OPENAPI S.P.A. (sandbox company). */
const VAT = '12485671007';
const TENANT_B = 'response-cache-tenant-b-token';
const NAME = `query($vat: String!) { company(vatCode: $vat) { companyName address { town } } }`;

type Cost = NonNullable<NonNullable<GraphQLResponse['extensions']>['cost']> & { answeredFrom?: string; saved?: { upstreamCalls: number; euro: number } };
const costOf = (r: GraphQLResponse): Cost => r.extensions!.cost as Cost;

let t: TestStack;
/** The layer's clock (its caches' and the response cache's lifetimes). */
let now = Date.now();
const auth = (token?: string): Record<string, string> => (token ? { authorization: `Bearer ${token}` } : {});
/** The caller's session as the gateway computes it from the registry's areas. */
const callerSessionOf = callerSessions(credentialHeadersOf(GATEWAY_AREAS));

async function ok<T = Record<string, unknown>>(
  query: string,
  variables: Record<string, unknown> = {},
  token?: string,
  headers: Record<string, string> = {},
): Promise<GraphQLResponse<T>> {
  const r = await t.gql<T>(query, variables, { ...auth(token), ...headers });
  expect(r.errors, JSON.stringify(r.errors)).toBeUndefined();
  return r;
}

beforeAll(async () => {
  t = await startTestStack({ LAYER_SECRET: 'response-cache-test-secret-0123456789' }, { clock: () => now });
  await t.control('tokens', { token: TENANT_B, owner: 'response-cache-b@example.com' });
}, 120_000);

afterAll(async () => {
  await t?.close();
});

describe('a repeated query', () => {
  it('is answered from the response cache: no upstream call, cost says cache hits and the euro saved', async () => {
    await t.cold();
    const first = await ok(NAME, { vat: VAT });
    const bought = costOf(first);
    expect(bought.upstreamCalls).toBe(1);
    expect(bought.euro).toBeGreaterThan(0);
    expect(bought.answeredFrom).toBeUndefined();
    expect(await t.calls()).toHaveLength(1);

    await t.clearCalls();
    const again = await ok(NAME, { vat: VAT });
    expect(again.data).toEqual(first.data);
    expect(await t.calls()).toEqual([]);
    const hit = costOf(again);
    expect(hit).toMatchObject({ upstreamCalls: 0, cacheHits: 1, dedupHits: 0, euro: 0, answeredFrom: 'response-cache', saved: { upstreamCalls: 1, euro: bought.euro } });
    expect(hit.calls.map((c) => [c.source, c.euro])).toEqual([['cache', 0]]);
    expect(hit.estimate).toEqual(bought.estimate);
  });

  it('from another tenant is not answered from the first tenant’s answers', async () => {
    await t.clearCalls();
    const b = await ok(NAME, { vat: VAT }, TENANT_B);
    expect(costOf(b).answeredFrom).toBeUndefined();
    // Tenant B buys its own data (the upstream cache is per tenant too).
    expect(costOf(b).upstreamCalls).toBe(1);
    expect((await t.calls()).length).toBe(1);
    // B's own repeat is B's hit.
    expect(costOf(await ok(NAME, { vat: VAT }, TENANT_B)).answeredFrom).toBe('response-cache');
  });

  it('asking for the estimate alone is never answered from the cache', async () => {
    const r = await t.gql(NAME, { vat: VAT }, { 'x-openapi-estimate-only': 'true' });
    expect(r.data).toBeNull();
    expect(costOf(r)).toMatchObject({ executed: false, upstreamCalls: 0 });
    expect(costOf(r).answeredFrom).toBeUndefined();
  });

  it('a hit answered at the HTTP edge (`cache-hits.ts`) is the runtime’s answer, byte for byte, whatever Accept asks', async () => {
    const post = async (headers: Record<string, string>) => {
      const res = await request(t.stack.gateway.graphqlUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...auth(TENANT_B), ...headers },
        body: JSON.stringify({ query: NAME, variables: { vat: VAT } }),
      });
      return { status: res.statusCode, type: res.headers['content-type'], vary: res.headers.vary, id: res.headers['x-request-id'], body: await res.body.text() };
    };
    await ok(NAME, { vat: VAT }, TENANT_B);
    await t.clearCalls();
    // An Origin (CORS, here one not allowed: no CORS header either way) takes the runtime's path.
    const runtime = { origin: 'http://elsewhere.example' };
    for (const accept of [
      undefined,
      '*/*',
      'application/json',
      'application/graphql-response+json, application/json',
      'application/json;q=0.9, application/graphql-response+json',
      'text/event-stream',
      'multipart/mixed',
    ]) {
      const headers: Record<string, string> = accept === undefined ? {} : { accept };
      const [edge, viaRuntime] = [await post(headers), await post({ ...headers, ...runtime })];
      // Each answer is an operation of its own: its id (`extensions.cost.operationId`) is new.
      expect(edge.body).toMatch(/"operationId":"[0-9a-f-]{36}"/);
      expect({ ...edge, id: undefined, body: comparableBody(edge.body) }, accept).toEqual({ ...viaRuntime, id: undefined, body: comparableBody(viaRuntime.body) });
      expect(edge.id).toMatch(/^[0-9a-f-]{36}$/);
      if (accept === undefined || accept.includes('json')) expect(JSON.parse(edge.body).extensions.cost.answeredFrom).toBe('response-cache');
    }
    expect((await post({ 'x-request-id': 'mine' })).id).toBe('mine');
    // Every answer from the edge is an operation of its own, with its own id.
    const ids = await Promise.all(
      [post({}), post({})].map(async (p) => (JSON.parse((await p).body) as { extensions: { cost: { operationId: string } } }).extensions.cost.operationId),
    );
    expect(ids[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(ids[0]).not.toBe(ids[1]);
    expect(await t.calls()).toEqual([]);
  });

  it('with risk data (read upstream every time) is never cached', async () => {
    const SCORE = `query($vat: String!) { company(vatCode: $vat) { companyName creditScore { rating } } }`;
    const first = await t.gql(SCORE, { vat: VAT });
    await t.clearCalls();
    const again = await t.gql(SCORE, { vat: VAT });
    expect(again.data).toEqual(first.data);
    expect(costOf(again).answeredFrom).toBeUndefined();
  });
});

describe('what the layer learns drops the answers', () => {
  const MONITOR = `query($id: ID!) { companyMonitor(id: $id) { id checkedOn updatedFields } }`;
  const CREATE = `mutation($input: CreateCompanyMonitorInput!) { createCompanyMonitor(input: $input) { id } }`;
  let monitorId = '';

  it('a monitor’s check (a status change of tracked work): the next answer shows it', async () => {
    const created = await ok<{ createCompanyMonitor: { id: string } }>(CREATE, { input: { code: VAT, dataset: 'IT_START', monitoredFields: ['companyName'] } });
    monitorId = created.data!.createCompanyMonitor.id;
    const before = await ok<{ companyMonitor: { checkedOn: string | null } }>(MONITOR, { id: monitorId });
    expect(before.data!.companyMonitor.checkedOn).toBeNull();
    // A monitor's upstream is read every time (`/monitor/{id}` has no ttl): never from the response cache.
    expect(costOf(await ok(MONITOR, { id: monitorId })).answeredFrom).toBeUndefined();
    await ok(NAME, { vat: VAT });
    expect(costOf(await ok(NAME, { vat: VAT })).answeredFrom).toBe('response-cache');

    await t.control('company/monitorCheck', { id: monitorId, changes: { companyName: 'OPENAPI RENAMED S.P.A.' } });
    // The check reaches the layer through its callback; a cached answer would never show it.
    const after = await waitFor(
      async () => {
        const res: GraphQLResponse<{ companyMonitor: { checkedOn: string | null; updatedFields: unknown } }> = await ok(MONITOR, { id: monitorId });
        return res.data!.companyMonitor.checkedOn !== null && res;
      },
      'the monitor check to reach the layer',
      { deadline: 20_000 },
    );
    expect(after.data!.companyMonitor).toMatchObject({ checkedOn: expect.any(String), updatedFields: { companyName: 'OPENAPI RENAMED S.P.A.' } });
    // And the company's own answer, cached before the check, is bought again (the company area
    // dropped its data of the company too).
    await t.clearCalls();
    const fresh = await ok(NAME, { vat: VAT });
    expect(costOf(fresh).answeredFrom).toBeUndefined();
    expect(costOf(fresh).upstreamCalls).toBe(1);
    expect(await t.calls('company')).toHaveLength(1);
  });

  it('a mutation of the caller (one that starts no tracked work): the next answer is not the one cached before it', async () => {
    await ok(NAME, { vat: VAT }, TENANT_B);
    expect(costOf(await ok(NAME, { vat: VAT }, TENANT_B)).answeredFrom).toBe('response-cache');
    // A new token of the account: nothing tracked, nothing published on the bus; only the mutation itself drops B's answers.
    await ok('mutation { createToken(input: { scopes: ["GET:cap.openapi.it/comuni_base"], name: "response-cache", ttl: 3600 }) { value } }', {}, TENANT_B);
    expect(costOf(await ok(NAME, { vat: VAT }, TENANT_B)).answeredFrom).toBeUndefined();
  });
});

describe('lifetime', () => {
  it('a company answer lives an hour on the layer’s clock; the entity cache (a day) still answers after it', async () => {
    const Q = `query($vat: String!) { company(vatCode: $vat) { companyName } }`;
    await ok(Q, { vat: VAT });
    now += 3_600_000 - 1_000;
    expect(costOf(await ok(Q, { vat: VAT })).answeredFrom).toBe('response-cache');
    now += 1_000;
    await t.clearCalls();
    const later = costOf(await ok(Q, { vat: VAT }));
    expect(later.answeredFrom).toBeUndefined();
    expect(later).toMatchObject({ upstreamCalls: 0, cacheHits: 1 });
    expect(await t.calls()).toEqual([]);
  });
});

describe('rules', () => {
  it('each field lives as long as its subgraph’s shortest upstream data', () => {
    const policy = cachePolicyOf(GATEWAY_AREAS);
    const ttl = ttlPerSchemaCoordinate(readFileSync(SUPERGRAPH_FILE, 'utf8'), policy.ttlBySubgraph);
    expect(ttl['Query.company']).toBe(policy.ttlBySubgraph.company * 1000);
    expect(ttl['Query.company']).toBe(3_600_000);
    expect(ttl['Company.companyName']).toBe(3_600_000);
    expect(ttl['Company.creditScore']).toBe(0);
    expect(ttl['Query.searchMunicipalities']).toBe(POSTAL_TTL * 1000);
    expect(
      Object.entries(ttl)
        .filter(([k]) => k.startsWith('Account.'))
        .every(([, v]) => v === 0),
    ).toBe(true);
    // Fields read upstream every time are in the schema (a rename would let them be cached).
    for (const field of policy.neverCached) expect(ttl[field], field).toBeDefined();
    expect(policy.neverCached).toContain('Query.mailboxes');
    expect(policy.neverCached).toContain('Query.companyMonitor');
  });

  it('only clean answers are kept: no errors, nothing stale, nothing at risk, executed', () => {
    const cost = { upstreamCalls: 1, staleHits: 0, atRisk: 0, calls: [] };
    expect(cacheable({ data: {}, extensions: { cost } })).toBe(true);
    expect(cacheable({ data: {}, errors: [new Error('x') as never], extensions: { cost } })).toBe(false);
    expect(cacheable({ data: {}, extensions: { cost: { ...cost, staleHits: 1 } } })).toBe(false);
    expect(cacheable({ data: {}, extensions: { cost: { ...cost, atRisk: 0.5 } } })).toBe(false);
    expect(cacheable({ data: null, extensions: { cost: { ...cost, executed: false } } })).toBe(false);
    expect(cacheable({ data: {} })).toBe(false);
  });

  it('the session is the layer’s tenant of the credential and a hash of the account key, never either in clear', () => {
    // The credentials the areas have forwarded: the account area's operator key.
    expect(credentialHeadersOf(GATEWAY_AREAS)).toEqual(['x-openapi-account-key']);
    const as = (headers: Record<string, string>): string => callerSessionOf(new Request('http://x/', { headers }));
    expect(as({ authorization: 'Bearer secret-token' })).toBe(tenantOf('secret-token'));
    expect(as({ authorization: 'Bearer secret-token' })).not.toContain('secret-token');
    expect(as({})).toBe(as({ authorization: '' }));
    expect(as({ authorization: 'Basic abc' })).not.toContain('abc');
    const keyed = as({ 'x-openapi-account-key': 'operator-key-0123456789' });
    expect(keyed).not.toBe(as({}));
    expect(keyed).not.toContain('operator-key');
    // graphql-ws: the connection params merged into the context's headers.
    expect(callerSessionOf({ headers: { authorization: 'Bearer secret-token', 'x-openapi-account-key': 'operator-key-0123456789' } })).toBe(
      as({ authorization: 'Bearer secret-token', 'x-openapi-account-key': 'operator-key-0123456789' }),
    );
  });
});

describe('answers of one tenant are never another’s, nor older than a change', () => {
  /** Sandbox companies none of the tests above reads. */
  const HELD = { stored: '03456783053', shared: '03456782055' } as const;
  const http = async (headers: Record<string, string>) => {
    const res = await request(t.stack.gateway.graphqlUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ query: NAME, variables: { vat: VAT } }),
    });
    const text = await res.body.text();
    if (res.statusCode !== 200) throw new Error(`HTTP ${res.statusCode}: ${text}`);
    return { status: res.statusCode, headers: res.headers, body: JSON.parse(text) as GraphQLResponse };
  };
  /** Waits until the emulator holds a call (its answer delayed by a fault). */
  const untilHeld = (): Promise<void> => untilInFlight(t.stack.emulatorUrl!, 'some', 10_000);

  it('no ETag shows a session, and If-None-Match never answers 304: tenant B with A’s tag gets the full answer', async () => {
    const a = await http({});
    const b0 = await http(auth(TENANT_B));
    expect(a.status).toBe(200);
    expect(a.headers.etag).toBeUndefined();
    expect(b0.headers.etag).toBeUndefined();
    // What the yoga plugin used as ETag (the cache key: session and hash) does not open anything.
    const key = `${callerSessionOf(new Request('http://x/'))}:anything`;
    for (const tag of [key, String(a.headers['last-modified'] ?? 'x'), '*']) {
      const b = await http({ ...auth(TENANT_B), 'if-none-match': tag });
      expect(b.status).toBe(200);
      expect(b.body.data).toEqual(a.body.data);
      expect(costOf(b.body).answeredFrom).toBe('response-cache');
    }
  });

  it('an answer read before a change of its tenant is neither stored nor shared', async () => {
    const tenant = tenantOf(TENANT_B);
    // The answer comes back wrapped: an async function returning the bare promise would wait for it.
    const held = async (vat: string): Promise<{ answer: Promise<GraphQLResponse> }> => {
      await t.control('faults', { area: 'company', delayAfterMs: 1_500, count: 1 });
      const answer = t.gql(NAME, { vat }, auth(TENANT_B));
      await untilHeld();
      announceChange({ kind: 'topic', topic: `company:${tenant}` });
      return { answer };
    };
    // Stored: the answer held across the change is not kept; the next one is computed again.
    const before = await held(HELD.stored);
    expect((await before.answer).errors).toBeUndefined();
    expect(costOf(await ok(NAME, { vat: HELD.stored }, TENANT_B)).answeredFrom).toBeUndefined();
    // Shared: the same query asked after the change, while the first is still held, does not join it.
    const leader = await held(HELD.shared);
    const late = await ok(NAME, { vat: HELD.shared }, TENANT_B);
    expect((await leader.answer).errors).toBeUndefined();
    expect(costOf(late).answeredFrom).not.toBe('in-flight');
  });
});

describe('with the layer’s service token (OPENAPI_TOKEN)', () => {
  let svc: TestStack;
  beforeAll(async () => {
    svc = await startTestStack({ OPENAPI_TOKEN: DEFAULT_TOKEN, OPENAPI_MANAGED_TOKEN: 'off', LAYER_SECRET: 'response-cache-test-secret-0123456789' });
  }, 120_000);
  afterAll(async () => {
    await svc?.close();
  });

  it('a change of the service’s tenant (what the subgraphs announce) drops the answers of callers with their own bearer', async () => {
    const mine = { authorization: 'Bearer some-caller-of-the-service' };
    const ask = async (): Promise<GraphQLResponse> => {
      const r = await svc.gql(NAME, { vat: VAT }, mine);
      expect(r.errors, JSON.stringify(r.errors)).toBeUndefined();
      return r;
    };
    await ask();
    expect(costOf(await ask()).answeredFrom).toBe('response-cache');
    // The kit's topics carry the tenant the subgraphs answer with: the service token's.
    announceChange({ kind: 'topic', topic: `company:${tenantOf(DEFAULT_TOKEN)}` });
    expect(costOf(await ask()).answeredFrom).toBeUndefined();
  });
});
