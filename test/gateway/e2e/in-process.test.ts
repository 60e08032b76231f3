/**
 * One-process mode: the gateway hands queries to the subgraphs in process (no loopback HTTP), and
 * what reaches a subgraph is what would have reached it over HTTP (the caller's token pays, the
 * operation's cost is reported). A gateway started as a separate service over the same subgraphs
 * still talks HTTP to them.
 */
import dc from 'node:diagnostics_channel';
import type { IncomingMessage } from 'node:http';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { parse, print } from 'graphql';
import { startGateway, type RunningGateway } from '../../../gateway/index.ts';
import { gatewayOptionsFromEnv } from '../../../services/build.ts';
import { ESTIMATE_HEADER, OPERATION_HEADER } from '../../../subgraphs/runtime/operation.ts';
import { comparable } from '../../support/answers.ts';
import { startTestStack, type GraphQLResponse, type TestStack } from '../../support/stack.ts';

const OPENAPI_SPA = '12485671007';
const QUERY = `query($vatCode: String!) { company(vatCode: $vatCode) { companyName address { town } } }`;

let t: TestStack;
/** GraphQL requests the subgraphs' HTTP server received, by path, and their headers. */
const subgraphHttp: string[] = [];
const subgraphHttpHeaders: Array<IncomingMessage['headers']> = [];
let subgraphHost = '';
const onRequest = (message: unknown): void => {
  const req = (message as { request: IncomingMessage }).request;
  if (req.headers.host === subgraphHost && /^\/[a-z]+\/graphql/.test(req.url ?? '')) {
    subgraphHttp.push(req.url ?? '');
    subgraphHttpHeaders.push(req.headers);
  }
};
/** The headers a subgraph acts on (the operation's budget entry and estimate, the credentials, the trace). */
const FORWARDED = ['authorization', 'x-openapi-account-key', OPERATION_HEADER, ESTIMATE_HEADER, 'traceparent'] as const;

beforeAll(async () => {
  t = await startTestStack();
  subgraphHost = new URL(t.stack.subgraphs.url).host;
  dc.subscribe('http.server.request.start', onRequest);
}, 120_000);
afterAll(async () => {
  dc.unsubscribe('http.server.request.start', onRequest);
  await t?.close();
});
beforeEach(async () => {
  await t.cold();
  subgraphHttp.length = 0;
  subgraphHttpHeaders.length = 0;
});

async function post(
  url: string,
  query: string,
  variables: Record<string, unknown>,
  headers: Record<string, string> = {},
  operationName?: string,
): Promise<GraphQLResponse<{ company: { companyName: string; address: { town: string } } }>> {
  const res = await request(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify({ query, variables, operationName }) });
  return (await res.body.json()) as GraphQLResponse<{ company: { companyName: string; address: { town: string } } }>;
}

/** The options of a gateway of its own over the stack's subgraphs, reached over HTTP (in-process entries added by each test). */
const gatewayOverSubgraphs = (): ReturnType<typeof gatewayOptionsFromEnv> =>
  gatewayOptionsFromEnv({ OPENAPI_ENV: 'emulator' }, Object.fromEntries(subgraphNames().map((name) => [name, t.stack.subgraphs.graphqlUrl(name)])), { port: 0 });
const subgraphNames = (): string[] => [...t.stack.subgraphs.schemas.keys()];

describe('one process', () => {
  it('answers a query with no HTTP request to the subgraphs, its cost reported as over HTTP', async () => {
    const res = await t.gql<{ company: { companyName: string } }>(QUERY, { vatCode: OPENAPI_SPA });
    expect(res.errors).toBeUndefined();
    expect(res.data?.company.companyName).toBe('OPENAPI S.P.A.');
    expect(res.extensions?.cost).toMatchObject({ upstreamCalls: 1, euro: 0.03 });
    expect((await t.calls('company')).map((c) => `${c.method} ${c.path}`)).toEqual([`GET /IT-address/${OPENAPI_SPA}`]);
    expect(subgraphHttp).toEqual([]);
  });

  it("passes the caller's token through: its own wallet pays", async () => {
    const token = await t.createToken(10);
    const res = await t.gql(QUERY, { vatCode: OPENAPI_SPA }, { authorization: `Bearer ${token}` });
    expect(res.errors).toBeUndefined();
    expect(await t.credit(token)).toBeCloseTo(10 - 0.03, 6);
    expect(subgraphHttp).toEqual([]);
  });

  it('refuses a malformed credential as over HTTP, before any call', async () => {
    const res = await t.gql(QUERY, { vatCode: OPENAPI_SPA }, { authorization: 'Basic Zm9vOmJhcg==' });
    expect(res.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    expect(await t.calls()).toEqual([]);
  });
});

describe('separate services', () => {
  let gateway: RunningGateway;
  beforeAll(async () => {
    gateway = await startGateway(gatewayOverSubgraphs());
  }, 120_000);
  afterAll(async () => {
    await gateway?.close();
  });

  it('a gateway without in-process subgraphs calls them over HTTP, same answer', async () => {
    const token = await t.createToken(10);
    const res = await post(gateway.graphqlUrl, QUERY, { vatCode: OPENAPI_SPA }, { authorization: `Bearer ${token}` });
    expect(res.errors).toBeUndefined();
    expect(res.data?.company).toEqual({ companyName: 'OPENAPI S.P.A.', address: { town: expect.any(String) as string } });
    expect(res.extensions?.cost).toMatchObject({ upstreamCalls: 1, euro: 0.03 });
    expect(await t.credit(token)).toBeCloseTo(10 - 0.03, 6);
    expect(subgraphHttp).toEqual(['/company/graphql']);
  });
});

describe('in process and over HTTP, a subgraph reads the same headers', () => {
  it('operation id, estimate, credentials, account key (and traceparent when traced) reach it alike', async () => {
    const inProcessHeaders: Array<Record<string, string | null>> = [];
    const account = t.stack.subgraphs.fetch('account');
    const recorded = await startGateway({
      ...gatewayOverSubgraphs(),
      inProcess: {
        account: (url, init) => {
          const h = new Headers(init.headers);
          inProcessHeaders.push(Object.fromEntries(FORWARDED.map((n) => [n, h.get(n)])));
          return account(url, init);
        },
      },
    });
    const overHttp = await startGateway(gatewayOverSubgraphs());
    try {
      const token = await t.createToken(10);
      const headers = { authorization: `Bearer ${token}`, 'x-openapi-account-key': 'in-process-operator-key-0123' };
      const WALLET = '{ account { wallet { credit } } }';
      const a = await post(recorded.graphqlUrl, WALLET, {}, headers);
      const b = await post(overHttp.graphqlUrl, WALLET, {}, headers);
      expect(a.data).toEqual(b.data);
      expect(subgraphHttp).toEqual(['/account/graphql']);
      const http = Object.fromEntries(FORWARDED.map((n) => [n, (subgraphHttpHeaders[0][n] as string | undefined) ?? null]));
      expect(inProcessHeaders).toHaveLength(1);
      const inProc = inProcessHeaders[0];
      expect(inProc.authorization).toBe(headers.authorization);
      expect(inProc['x-openapi-account-key']).toBe(headers['x-openapi-account-key']);
      expect(inProc[OPERATION_HEADER]).toMatch(/^[0-9a-f-]{36}$/);
      expect(inProc[ESTIMATE_HEADER]).not.toBeNull();
      // The same headers, with each operation's own id.
      expect({ ...inProc, [OPERATION_HEADER]: 'id' }).toEqual({ ...http, [OPERATION_HEADER]: 'id' });
      expect(http[OPERATION_HEADER]).toMatch(/^[0-9a-f-]{36}$/);
    } finally {
      await recorded.close();
      await overHttp.close();
    }
  });
});

describe('executed in process (no HTTP on either side) and handed over as HTTP requests', () => {
  it('answer alike: data, errors and their codes, and cost', async () => {
    const names = subgraphNames();
    const base = gatewayOverSubgraphs();
    // No response cache: each operation runs.
    const viaFetch = await startGateway({ ...base, responseCache: false, inProcess: Object.fromEntries(names.map((n) => [n, t.stack.subgraphs.fetch(n)])) });
    const executed = await startGateway({ ...base, responseCache: false, inProcessExecutors: Object.fromEntries(names.map((n) => [n, t.stack.subgraphs.execute(n)])) });
    try {
      const cases: Array<[string, Record<string, unknown>, Record<string, string>]> = [
        [
          `query($v: String!) { company(vatCode: $v) { companyName shareholders { percentShare owners { ... on ShareholderCompany { company { companyName address { town } } } } } } }`,
          { v: '04123450159' },
          {},
        ],
        [QUERY, { vatCode: '12345678901' }, {}],
        [QUERY, { vatCode: '00000000000' }, {}],
        [QUERY, { vatCode: OPENAPI_SPA }, { authorization: 'Basic Zm9vOmJhcg==' }],
      ];
      for (const [query, variables, headers] of cases) {
        // A token each (its day's spending is in the cost).
        const auth = async () => ({ authorization: `Bearer ${await t.createToken(10)}`, ...headers });
        await t.stack.upstream.clearCache();
        const a = await post(viaFetch.graphqlUrl, query, variables, await auth());
        await t.stack.upstream.clearCache();
        const b = await post(executed.graphqlUrl, query, variables, await auth());
        // The time each upstream call took is its own, and each operation has an id of its own.
        expect(comparable(b), query).toEqual(comparable(a));
      }
      expect(subgraphHttp).toEqual([]);
    } finally {
      await viaFetch.close();
      await executed.close();
    }
  });
});

describe('a query one subgraph answers whole goes to it directly, as the planned path would answer it', () => {
  it('answer alike: data, errors and their codes, bad input, and cost; only whole queries skip the plan', async () => {
    const names = subgraphNames();
    const base = gatewayOverSubgraphs();
    /** The documents the company subgraph was handed, as text. */
    const handed: string[] = [];
    const executors = Object.fromEntries(
      names.map((n) => {
        const execute = t.stack.subgraphs.execute(n);
        return [
          n,
          (req: Parameters<typeof execute>[0]) => {
            if (n === 'company') handed.push(print(req.document));
            return execute(req);
          },
        ];
      }),
    );
    const directSubgraphs = [...t.stack.subgraphs.schemas].map(([name, schema]) => ({ name, schema }));
    // No response cache: each operation runs.
    const planned = await startGateway({ ...base, responseCache: false, inProcessExecutors: executors });
    const direct = await startGateway({ ...base, responseCache: false, inProcessExecutors: executors, directSubgraphs });
    // With it (the stack's default: the document it rewrites is what the subgraph is handed).
    const plannedCached = await startGateway({ ...base, inProcessExecutors: executors });
    const directCached = await startGateway({ ...base, inProcessExecutors: executors, directSubgraphs });
    try {
      const WALK = `query($v: String!) { company(vatCode: $v) { companyName shareholders { percentShare owners { ... on ShareholderCompany { company { companyName address { town } } } } } } }`;
      const PROFILE = `query Profile($v: String!, $withEcofin: Boolean = true) { company(vatCode: $v) { __typename name: companyName ...Where managers { roles { role { code } } } ecofin @include(if: $withEcofin) { turnover netWorth } } } fragment Where on Company { address { town zipCode } }`;
      const SCORE = `query($v: String!) { company(vatCode: $v) { companyName creditScore { level } } }`;
      const BASIC = { authorization: 'Basic Zm9vOmJhcg==' };
      // Two operations in one document: whatever one of them is, the other is decided alone.
      const TWO = (other: string): string => `query A($v: String!) { company(vatCode: $v) { companyName } } ${other}`;
      // [document, variables, headers, goes direct, operation name, with the response cache]
      const cases: Array<[string, Record<string, unknown>, Record<string, string>, boolean, string?, boolean?]> = [
        // The plan rewrites these two (fragment inlined, abstract types' __typename): what the
        // subgraph is handed tells the paths apart.
        [WALK, { v: '04123450159' }, {}, true],
        [PROFILE, { v: OPENAPI_SPA, withEcofin: false }, {}, true],
        [QUERY, { vatCode: '12345678901' }, {}, true],
        [QUERY, { vatCode: '00000000000' }, {}, true],
        // Bad input: refused by the supergraph's coercion before anything runs, on both paths.
        [QUERY, { vatCode: 12_485_671_007 }, {}, true],
        [QUERY, {}, {}, true],
        [QUERY, { vatCode: OPENAPI_SPA }, { authorization: 'Basic Zm9vOmJhcg==' }, true],
        // A root field's @skip/@include: the planned path calls nothing for a skipped field.
        [`query($s: Boolean!, $v: String!) { company(vatCode: $v) @skip(if: $s) { companyName } }`, { s: true, v: OPENAPI_SPA }, {}, false],
        [`query($s: Boolean!, $v: String!) { company(vatCode: $v) @skip(if: $s) { companyName } }`, { s: true, v: OPENAPI_SPA }, BASIC, false],
        // A non-null root field refused whole: data null.
        [`{ lf: legalForms { code } }`, {}, BASIC, true],
        // Documents of several operations: planned, whichever is named (the first one too).
        [TWO(`query B { __type(name: "Company") { fields { name } } }`), { v: OPENAPI_SPA }, {}, false, 'A'],
        [TWO(`query B { __type(name: "Company") { fields { name } } }`), {}, {}, false, 'B'],
        [TWO(`query B { __schema { queryType { fields { name } } } }`), {}, {}, false, 'B'],
        [TWO(`mutation B($id: ID!) { deleteCompanyMonitor(id: $id) }`), { id: 'aaaaaaaaaaaaaaaaaaaaaaaa' }, {}, false, 'B'],
        [TWO(`query B { x: company(vatCode: "${OPENAPI_SPA}") { companyName } legalForms(code: "SP") { code } }`), {}, {}, false, 'B'],
        // With the response cache, as the stack runs.
        [WALK, { v: '04123450159' }, {}, true, undefined, true],
        [PROFILE, { v: OPENAPI_SPA, withEcofin: true }, {}, true, undefined, true],
        // Introspection describes the supergraph (the risk subgraph's score on Company included): planned.
        [`{ __type(name: "Company") { fields { name } } }`, {}, {}, false],
        [`{ __schema { queryType { fields { name } } } }`, {}, {}, false],
        // Two subgraphs (the score is the risk subgraph's): planned.
        [SCORE, { v: OPENAPI_SPA }, {}, false],
      ];
      for (const [query, variables, headers, whole, operationName, cached] of cases) {
        const auth = async () => ({ authorization: `Bearer ${await t.createToken(10)}`, ...headers });
        await t.stack.upstream.clearCache();
        handed.length = 0;
        const a = await post((cached ? plannedCached : planned).graphqlUrl, query, variables, await auth(), operationName);
        const plannedDocuments = [...handed];
        await t.stack.upstream.clearCache();
        handed.length = 0;
        const b = await post((cached ? directCached : direct).graphqlUrl, query, variables, await auth(), operationName);
        expect(comparable(b), query).toEqual(comparable(a));
        // What the subgraph was handed: the caller's document itself when it went direct, the
        // plan's rewritten one otherwise (and nothing when the input was refused first).
        const asked = print(parse(query));
        // (Nothing either way when the input was refused first.)
        if (whole && !cached) expect(handed.length === Math.min(1, plannedDocuments.length) && handed.every((d) => d === asked), query).toBe(true);
        else if (!whole) expect(handed, query).toEqual(plannedDocuments);
        if ((query === WALK || query === PROFILE) && !cached) expect(plannedDocuments.includes(asked), query).toBe(false);
      }
    } finally {
      await planned.close();
      await direct.close();
      await plannedCached.close();
      await directCached.close();
    }
  });
});
