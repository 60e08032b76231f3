/** The public edge: health, offline GraphiQL with its examples, SSE, cost aggregation. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { request as httpRequest } from 'node:http';
import { extendSchema, Kind, parse, validate } from 'graphql';
import { EXAMPLES } from '../../../gateway/examples.ts';
import { docFiles, graphqlBlocks } from '../../support/docs.ts';
import { startTestStack, type TestStack } from '../../support/stack.ts';

let t: TestStack;
beforeAll(async () => {
  t = await startTestStack();
});
afterAll(async () => {
  await t?.close();
});

describe('gateway', () => {
  it('answers /healthz', async () => {
    const res = await request(`${t.url}/healthz`);
    expect(res.statusCode).toBe(200);
    expect(await res.body.json()).toEqual({ ok: true });
  });

  it('serves GraphiQL offline, preloaded with the example operations', async () => {
    const res = await request(`${t.url}/graphql`, { headers: { accept: 'text/html' } });
    expect(res.statusCode).toBe(200);
    const html = await res.body.text();
    expect(html).toContain('<html');
    expect(html).not.toMatch(/unpkg\.com|jsdelivr|cdn\./);
    expect(html).toContain('CompanyProfile');
  });

  const queries = EXAMPLES.filter((e) => /^\s*(#[^\n]*\n\s*)*query\b/.test(e.query));

  it('has only examples valid against the supergraph', async () => {
    const schema = await t.stack.gateway.runtime.getSchema();
    for (const e of EXAMPLES) expect(validate(schema, parse(e.query)).map((err) => `${e.title}: ${err.message}`)).toEqual([]);
  });

  it('documents only operations valid against the supergraph in the README and docs/', async () => {
    // The gateway answers @defer and @stream (deferStream); its schema object does not list them.
    const incremental = parse(
      'directive @defer(if: Boolean! = true, label: String) on FRAGMENT_SPREAD | INLINE_FRAGMENT\n' +
        'directive @stream(if: Boolean! = true, label: String, initialCount: Int = 0) on FIELD',
    );
    const schema = extendSchema(await t.stack.gateway.runtime.getSchema(), incremental);
    const blocks = docFiles().flatMap((f) => graphqlBlocks(f.text));
    expect(blocks.length).toBeGreaterThanOrEqual(3);
    for (const block of blocks) {
      for (const definition of parse(block).definitions) {
        expect(definition.kind).toBe(Kind.OPERATION_DEFINITION);
        expect(validate(schema, { kind: Kind.DOCUMENT, definitions: [definition] }).map((e) => e.message)).toEqual([]);
      }
    }
  });

  it('has query, mutation and subscription examples', () => {
    expect(queries.length).toBeGreaterThanOrEqual(5);
    expect(EXAMPLES.some((e) => /\bmutation\b/.test(e.query))).toBe(true);
    expect(EXAMPLES.some((e) => /\bsubscription\b/.test(e.query))).toBe(true);
  });

  it.each(queries.map((e) => [e.title, e] as const))('runs the example "%s" without errors', async (_title, example) => {
    const res = await t.gql(example.query, example.variables);
    expect(res.errors).toBeUndefined();
    expect(res.data).toBeTruthy();
    expect(res.extensions?.cost).toBeDefined();
  });

  /** Paths of the null values in an answer. */
  const nullPaths = (value: unknown, path = ''): string[] =>
    value === null ? [path] : typeof value === 'object' ? Object.entries(value).flatMap(([k, v]) => nullPaths(v, path ? `${path}.${k}` : k)) : [];

  it('the Search example selects what has a value (total is null but for a dry run): no null in its answer', async () => {
    const search = EXAMPLES.find((e) => e.title === 'Search')!;
    expect(search.query).not.toMatch(/^\s+total$/m);
    const res = await t.gql<{ searchCompanies: { count: number; items: unknown[] } }>(search.query, search.variables);
    expect(res.errors).toBeUndefined();
    expect(res.data?.searchCompanies.count).toBe(5);
    expect(res.data?.searchCompanies.items).toHaveLength(5);
    expect(nullPaths(res.data)).toEqual([]);
    // What its comment says of dryRun: the total and the price, no items.
    const dry = await t.gql<{ searchCompanies: { total: number | null; cost: number | null; items: unknown[] } }>(
      `{ searchCompanies(filter: { province: "RM" }, dryRun: true) { total cost items { vatCode } } }`,
    );
    expect(dry.errors).toBeUndefined();
    expect(dry.data?.searchCompanies.total).toEqual(expect.any(Number));
    expect(dry.data?.searchCompanies.items).toEqual([]);
    expect(search.query).toContain('dryRun: true answers that (total) and its price (cost), with no items');
  });

  it('serves queries over SSE too', async () => {
    const res = await request(`${t.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ query: '{ company(vatCode: "12485671007") { companyName } }' }),
    });
    expect(res.headers['content-type']).toMatch(/text\/event-stream/);
    const text = await res.body.text();
    expect(text).toContain('"companyName":"OPENAPI S.P.A."');
  });

  it.each([
    ['a missing required argument', '{ company { companyName } }'],
    ['an argument of the wrong type', '{ company(vatCode: 12485671007) { companyName } }'],
    ['an unknown enum value', '{ foreignCompany(country: "FR", id: "x", level: PLATINUM) { companyName } }'],
    ['a missing input field', '{ searchCompanies(filter: { noSuchFilter: 1 }) { total } }'],
  ])('gives BAD_USER_INPUT for %s written in the document, with no upstream call', async (_what, query) => {
    await t.clearCalls();
    const res = await t.gql(query);
    expect(res.errors?.map((e) => e.extensions?.code)).toEqual(res.errors?.map(() => 'BAD_USER_INPUT'));
    expect(res.errors?.length).toBeGreaterThan(0);
    expect(await t.calls()).toEqual([]);
  });

  it('gives BAD_USER_INPUT for variables of the wrong type', async () => {
    const res = await t.gql('query($v: String!) { company(vatCode: $v) { companyName } }', { v: 42 });
    expect(res.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    const missing = await t.gql('query($v: String!) { company(vatCode: $v) { companyName } }', {});
    expect(missing.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
  });

  it('reports zero cost for an operation refused before execution', async () => {
    const res = await t.gql('{ company(vatCode: "12485671007") { noSuchField } }');
    expect(res.errors?.[0]?.extensions?.code).toBe('GRAPHQL_VALIDATION_FAILED');
    expect(res.extensions?.cost).toMatchObject({ upstreamCalls: 0, cacheHits: 0, dedupHits: 0, euro: 0 });
  });

  it('reports zero cost for an operation that needs no upstream data', async () => {
    await t.clearCalls();
    const res = await t.gql('{ company(vatCode: "12485671007") { vatCode } }');
    expect(res.data).toEqual({ company: { vatCode: '12485671007' } });
    expect(res.extensions?.cost).toMatchObject({ upstreamCalls: 0, euro: 0 });
    expect(await t.calls()).toEqual([]);
  });
});

describe('callback and file routes', () => {
  it.each([
    '/callbacks/risk/../../risk/graphql',
    '/callbacks/risk/%2e%2e/%2e%2e/risk/graphql',
    '/files/risk/..%2f..%2fcompany/graphql',
    '/files/risk/x/../../../company/graphql',
    '/callbacks/risk/.%2e/graphql',
  ])('cannot reach a subgraph behind the gateway through %s', async (path) => {
    // node:http sends the path as written (fetch and undici would normalise the dots away)
    const { status, text } = await new Promise<{ status: number; text: string }>((resolve, reject) => {
      const { hostname, port } = new URL(t.url);
      const req = httpRequest({ hostname, port, path, method: 'POST', headers: { 'content-type': 'application/json' } }, (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      });
      req.on('error', reject);
      req.end(JSON.stringify({ query: '{ _service { sdl } }' }));
    });
    expect(text).not.toContain('sdl');
    expect([403, 404]).toContain(status);
  });
});

describe('graphql-ws credentials', () => {
  it.each([
    ['authorization', { authorization: 'Bearer not-a-real-token-ws' }],
    ['Authorization', { Authorization: 'Bearer not-a-real-token-ws' }],
    ['headers.authorization', { headers: { authorization: 'Bearer not-a-real-token-ws' } }],
  ])("uses the caller's token sent as %s", async (_shape, connectionParams) => {
    const client = createClient({ url: t.stack.gateway.wsUrl, webSocketImpl: WebSocket, connectionParams, retryAttempts: 0, lazy: true });
    try {
      const results = client.iterate({ query: '{ company(vatCode: "12485671007") { companyName } }' });
      const first = await results.next();
      const value = first.value as { errors?: Array<{ extensions?: { code?: string } }> } | undefined;
      expect(value?.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    } finally {
      await client.dispose();
    }
  });
});

describe('document limits', () => {
  const nested = (levels: number): string =>
    `{ company(vatCode: "12485671007") { ${'managers { ... on ManagerCompany { company { '.repeat(levels)}companyName${' } } }'.repeat(levels)} } }`;

  it('refuses a document nested too deep, with no upstream call', async () => {
    await t.clearCalls();
    const res = await t.gql(nested(30));
    expect(res.errors?.[0]?.message).toMatch(/deeper than 25/);
    expect(res.errors?.[0]?.extensions?.code).toBe('GRAPHQL_VALIDATION_FAILED');
    expect(await t.calls()).toEqual([]);
  });

  it('refuses a huge document without exhausting the stack', async () => {
    const res = await t.gql(nested(2000));
    expect(res.errors?.[0]?.extensions?.code).toBe('GRAPHQL_PARSE_FAILED');
    // Refused before the parser runs, at the first limit passed: its nesting (128 levels).
    expect(res.errors?.[0]?.message).toMatch(/deeper than 128 levels/);
  });

  it('accepts a reasonable ownership walk', async () => {
    const res = await t.gql(nested(3));
    expect(res.errors).toBeUndefined();
  });
});
