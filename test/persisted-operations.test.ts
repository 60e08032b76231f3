/**
 * Persisted operations through the gateway, with the real clients: Apollo Client's persisted-queries
 * link and urql's persisted exchange (sha256 from node:crypto), over POST and GET. A first hash-only
 * request is answered PersistedQueryNotFound, the client sends the query with its hash, the gateway
 * keeps it, and the next request travels as the hash alone. A query whose hash does not match is
 * refused and not kept. Trusted documents: only the manifest's operations run (by hash, POST or GET),
 * any document sent as text or an unknown hash is refused with a stable code before any upstream
 * call. The stores: memory (bounded LRU) and Redis, one spec.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHash, randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApolloClient, HttpLink, InMemoryCache, gql } from '@apollo/client/core';
import { createPersistedQueryLink } from '@apollo/client/link/persisted-queries';
import { Client, fetchExchange } from '@urql/core';
import { persistedExchange } from '@urql/exchange-persisted';
import { request } from 'undici';
import { memoryDocumentStore, readManifest, redisDocumentStore, sha256Hex, type PersistedDocumentStore } from '../gateway/persisted.ts';
import { persistedFromEnv, ServiceConfigError } from '../services/build.ts';
import { startTestStack, type GraphQLResponse, type TestStack } from './support/stack.ts';

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

/** What the client put on the wire, and what came back. */
interface Sent {
  method: string;
  hash: string | null;
  withQuery: boolean;
  code: string | null;
}

/** A `fetch` that records each request's shape (hash, query or not) and the first error code. */
function recordingFetch(log: Sent[]): typeof fetch {
  return async (input, init) => {
    const url = new URL(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url);
    const method = (init?.method ?? 'GET').toUpperCase();
    const params = method === 'GET' ? { query: url.searchParams.get('query'), extensions: JSON.parse(url.searchParams.get('extensions') ?? 'null') as unknown } : (JSON.parse(typeof init?.body === 'string' ? init.body : '{}') as { query?: string; extensions?: unknown });
    const hash = (params.extensions as { persistedQuery?: { sha256Hash?: string } } | null)?.persistedQuery?.sha256Hash ?? null;
    const res = await fetch(input, init);
    const body = (await res.clone().json()) as GraphQLResponse;
    log.push({ method, hash, withQuery: typeof params.query === 'string' && params.query.length > 0, code: (body.errors?.[0]?.extensions?.code) ?? null });
    return res;
  };
}

const LEGAL_FORMS = 'query LegalForms { legalForms { code description } }';

describe('automatic persisted queries (default mode, memory)', () => {
  let t: TestStack;
  beforeAll(async () => {
    t = await startTestStack();
  }, 120_000);
  afterAll(async () => {
    await t?.close();
  });

  function apollo(log: Sent[], useGET: boolean): ApolloClient<unknown> {
    const http = new HttpLink({ uri: t.stack.gateway.graphqlUrl, fetch: recordingFetch(log), headers: { 'x-graphql-csrf': '1' } });
    return new ApolloClient({ cache: new InMemoryCache(), link: createPersistedQueryLink({ sha256, useGETForHashedQueries: useGET }).concat(http) });
  }

  it('Apollo Client (POST): hash only → PersistedQueryNotFound → query and hash → kept → hash only', async () => {
    const log: Sent[] = [];
    const query = gql`query ApolloPost { legalForms { code } }`;
    const first = await apollo(log, false).query<{ legalForms: Array<{ code: string }> }>({ query, fetchPolicy: 'network-only' });
    expect(first.errors).toBeUndefined();
    expect(first.data.legalForms.length).toBeGreaterThan(0);
    const hash = log[0].hash!;
    expect(hash).toMatch(/^[0-9a-f]{64}$/);
    expect(log).toEqual([
      { method: 'POST', hash, withQuery: false, code: 'PERSISTED_QUERY_NOT_FOUND' },
      { method: 'POST', hash, withQuery: true, code: null },
    ]);
    // Another client (another page load): the hash alone is enough now.
    const again = await apollo(log, false).query<{ legalForms: Array<{ code: string }> }>({ query, fetchPolicy: 'network-only' });
    expect(again.data).toEqual(first.data);
    expect(log.slice(2)).toEqual([{ method: 'POST', hash, withQuery: false, code: null }]);
  });

  it('Apollo Client (GET for hashed queries): the same over GET, the registration over POST', async () => {
    const log: Sent[] = [];
    const query = gql`query ApolloGet { legalForms { description } }`;
    const first = await apollo(log, true).query<{ legalForms: Array<{ description: string }> }>({ query, fetchPolicy: 'network-only' });
    expect(first.errors).toBeUndefined();
    const hash = log[0].hash!;
    expect(log).toEqual([
      { method: 'GET', hash, withQuery: false, code: 'PERSISTED_QUERY_NOT_FOUND' },
      { method: 'POST', hash, withQuery: true, code: null },
    ]);
    await apollo(log, true).query({ query, fetchPolicy: 'network-only' });
    expect(log.slice(2)).toEqual([{ method: 'GET', hash, withQuery: false, code: null }]);
  });

  it("urql's persisted exchange: GET hash only → not found → query → GET hash only", async () => {
    const log: Sent[] = [];
    const client = (): Client =>
      new Client({
        url: t.stack.gateway.graphqlUrl,
        fetch: recordingFetch(log),
        fetchOptions: { headers: { 'x-graphql-csrf': '1' } },
        requestPolicy: 'network-only',
        exchanges: [persistedExchange({ preferGetForPersistedQueries: true, generateHash: (q) => Promise.resolve(sha256(q)) }), fetchExchange],
      });
    const query = 'query UrqlLegalForms { legalForms { code } }';
    const first = await client().query(query, {}).toPromise();
    expect(first.error).toBeUndefined();
    expect((first.data as { legalForms: unknown[] }).legalForms.length).toBeGreaterThan(0);
    const hash = log[0].hash!;
    expect(log[0]).toEqual({ method: 'GET', hash, withQuery: false, code: 'PERSISTED_QUERY_NOT_FOUND' });
    expect(log[1]).toMatchObject({ hash, withQuery: true, code: null });
    expect(log).toHaveLength(2);
    const again = await client().query(query, {}).toPromise();
    expect(again.data).toEqual(first.data);
    expect(log.slice(2)).toEqual([{ method: 'GET', hash, withQuery: false, code: null }]);
  });

  it('refuses a query whose hash does not match, and keeps nothing under that hash', async () => {
    const wrong = sha256('something else');
    const send = async (body: Record<string, unknown>): Promise<GraphQLResponse> => {
      const res = await request(t.stack.gateway.graphqlUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      return (await res.body.json()) as GraphQLResponse;
    };
    const mismatch = await send({ query: LEGAL_FORMS, extensions: { persistedQuery: { version: 1, sha256Hash: wrong } } });
    expect(mismatch.errors?.[0]?.extensions?.code).toBe('PERSISTED_QUERY_HASH_MISMATCH');
    expect(mismatch.data ?? null).toBeNull();
    const later = await send({ extensions: { persistedQuery: { version: 1, sha256Hash: wrong } } });
    expect(later.errors?.[0]).toMatchObject({ message: 'PersistedQueryNotFound', extensions: { code: 'PERSISTED_QUERY_NOT_FOUND' } });
    // Neither a hash nor a query: a clear error.
    const none = await send({});
    expect(none.errors?.[0]?.extensions?.code).toBe('PERSISTED_QUERY_ID_REQUIRED');
    // Documents as text still run in this mode.
    expect((await t.gql(LEGAL_FORMS)).errors).toBeUndefined();
  });
});

describe('trusted documents (PERSISTED_OPERATIONS=trusted)', () => {
  let t: TestStack;
  const allowed = 'query Allowed { legalForms { code } }';
  const allowedHash = sha256Hex(allowed);
  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'trusted-'));
    const manifest = join(dir, 'persisted-documents.json');
    writeFileSync(manifest, JSON.stringify({ [allowedHash]: allowed }));
    t = await startTestStack({ PERSISTED_OPERATIONS: 'trusted', PERSISTED_OPERATIONS_MANIFEST: manifest });
  }, 120_000);
  afterAll(async () => {
    await t?.close();
  });

  const send = async (body: Record<string, unknown>, get = false): Promise<GraphQLResponse<{ legalForms?: unknown[] }>> => {
    const url = new URL(t.stack.gateway.graphqlUrl);
    if (get) for (const [k, v] of Object.entries(body)) url.searchParams.set(k, typeof v === 'string' ? v : JSON.stringify(v));
    const res = await request(url, get ? { headers: { 'x-graphql-csrf': '1', accept: 'application/json' } } : { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return (await res.body.json()) as GraphQLResponse<{ legalForms?: unknown[] }>;
  };

  it("runs the manifest's operations by hash, over POST and GET", async () => {
    const ext = { persistedQuery: { version: 1, sha256Hash: allowedHash } };
    const post = await send({ extensions: ext });
    expect(post.errors).toBeUndefined();
    expect(post.data?.legalForms?.length).toBeGreaterThan(0);
    const viaGet = await send({ extensions: ext }, true);
    expect(viaGet.errors).toBeUndefined();
    expect(viaGet.data).toEqual(post.data);
  });

  it('refuses any document sent as text (even a registered one) and unknown hashes, before any upstream call', async () => {
    await t.clearCalls();
    const text = await send({ query: 'query Other { legalForms { description } }' });
    expect(text.errors?.[0]?.extensions?.code).toBe('PERSISTED_QUERY_ONLY');
    const registeredAsText = await send({ query: allowed, extensions: { persistedQuery: { version: 1, sha256Hash: allowedHash } } });
    expect(registeredAsText.errors?.[0]?.extensions?.code).toBe('PERSISTED_QUERY_ONLY');
    const unknown = await send({ extensions: { persistedQuery: { version: 1, sha256Hash: sha256('query X { __typename }') } } });
    expect(unknown.errors?.[0]?.extensions?.code).toBe('PERSISTED_QUERY_NOT_IN_LIST');
    expect(text.data ?? null).toBeNull();
    expect(await t.calls()).toEqual([]);
  });

  it('reads manifests as client builds emit them: { hash: document } and Apollo’s format', () => {
    const dir = mkdtempSync(join(tmpdir(), 'manifest-'));
    const apolloFile = join(dir, 'persisted-query-manifest.json');
    writeFileSync(apolloFile, JSON.stringify({ format: 'apollo-persisted-query-manifest', version: 1, operations: [{ id: allowedHash, name: 'Allowed', type: 'query', body: allowed }] }));
    expect(readManifest(apolloFile)).toEqual(new Map([[allowedHash, allowed]]));
    const broken = join(dir, 'broken.json');
    writeFileSync(broken, JSON.stringify({ abc: 'query {' }));
    expect(() => readManifest(broken)).toThrow(/does not parse/);
  });
});

describe('APQ document stores (one spec)', () => {
  const prefix = `test-apq-${randomUUID()}:`;
  const stores: Array<[string, () => PersistedDocumentStore]> = [
    ['memory', () => memoryDocumentStore()],
    ['redis', () => redisDocumentStore('redis://127.0.0.1:6379', { prefix, ttlSeconds: 60 })],
  ];
  it.each(stores)('%s: keeps a document under its hash, unknown hashes are null', async (_name, make) => {
    const store = make();
    try {
      const hash = sha256Hex(LEGAL_FORMS);
      expect(await store.get(hash)).toBeNull();
      await store.set(hash, LEGAL_FORMS);
      expect(await store.get(hash)).toBe(LEGAL_FORMS);
    } finally {
      await store.close();
    }
  });

  it('memory: bounded, least recently used dropped first', async () => {
    const store = memoryDocumentStore({ maxEntries: 2 });
    await store.set('a', 'query A { __typename }');
    await store.set('b', 'query B { __typename }');
    await store.get('a');
    await store.set('c', 'query C { __typename }');
    expect(await store.get('b')).toBeNull();
    expect(await store.get('a')).not.toBeNull();
    expect(await store.get('c')).not.toBeNull();
  });
});

describe('configuration (gatewayOptionsFromEnv)', () => {
  it('APQ by default, on Redis with REDIS_URL; trusted needs its manifest; unknown modes refused', () => {
    expect(persistedFromEnv({})).toMatchObject({ mode: 'apq', redisUrl: null });
    expect(persistedFromEnv({ REDIS_URL: 'redis://127.0.0.1:6379', REDIS_PREFIX: 'p:' })).toMatchObject({ mode: 'apq', redisUrl: 'redis://127.0.0.1:6379', redisPrefix: 'p:' });
    expect(() => persistedFromEnv({ PERSISTED_OPERATIONS: 'trusted' })).toThrow(ServiceConfigError);
    expect(persistedFromEnv({ PERSISTED_OPERATIONS: 'trusted', PERSISTED_OPERATIONS_MANIFEST: '/m.json' })).toMatchObject({ mode: 'trusted', manifest: '/m.json' });
    expect(persistedFromEnv({ PERSISTED_OPERATIONS: 'OFF' })).toMatchObject({ mode: 'off' });
    expect(() => persistedFromEnv({ PERSISTED_OPERATIONS: 'sometimes' })).toThrow(/apq, trusted or off/);
  });
});
