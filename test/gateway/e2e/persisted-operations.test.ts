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
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApolloClient, HttpLink, InMemoryCache, gql } from '@apollo/client';
import { createPersistedQueryLink } from '@apollo/client/link/persisted-queries';
import { Client, fetchExchange } from '@urql/core';
import { persistedExchange } from '@urql/exchange-persisted';
import { request } from 'undici';
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import {
  memoryDocumentStore,
  persistedOperations,
  readManifest,
  redisDocumentStore,
  redisDocumentStoreOn,
  sha256Hex,
  sqliteDocumentStore,
  type PersistedDocumentStore,
} from '../../../gateway/persisted.ts';
import { openDatabase } from '../../../platform/sqlite.ts';
import { describeStores } from '../../support/store-spec.ts';
import { persistedFromEnv, ServiceConfigError } from '../../../services/build.ts';
import { startTestStack, type GraphQLResponse, type TestStack } from '../../support/stack.ts';

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
    const params =
      method === 'GET'
        ? { query: url.searchParams.get('query'), extensions: JSON.parse(url.searchParams.get('extensions') ?? 'null') as unknown }
        : (JSON.parse(typeof init?.body === 'string' ? init.body : '{}') as { query?: string; extensions?: unknown });
    const hash = (params.extensions as { persistedQuery?: { sha256Hash?: string } } | null)?.persistedQuery?.sha256Hash ?? null;
    const res = await fetch(input, init);
    const body = (await res.clone().json()) as GraphQLResponse;
    log.push({ method, hash, withQuery: typeof params.query === 'string' && params.query.length > 0, code: body.errors?.[0]?.extensions?.code ?? null });
    return res;
  };
}

const LEGAL_FORMS = 'query LegalForms { legalForms { code description } }';

describe('automatic persisted queries (default mode, memory)', () => {
  let t: TestStack;
  beforeAll(async () => {
    // A day budget below any paid call: only free reads run here.
    t = await startTestStack({ OPENAPI_MAX_EURO_PER_DAY: '0.0005' });
  }, 120_000);
  afterAll(async () => {
    await t?.close();
  });

  function apollo(log: Sent[], useGET: boolean): ApolloClient {
    const http = new HttpLink({ uri: t.stack.gateway.graphqlUrl, fetch: recordingFetch(log), headers: { 'x-graphql-csrf': '1' } });
    return new ApolloClient({ cache: new InMemoryCache(), link: createPersistedQueryLink({ sha256, useGETForHashedQueries: useGET }).concat(http) });
  }

  it('Apollo Client (POST): hash only → PersistedQueryNotFound → query and hash → kept → hash only', async () => {
    const log: Sent[] = [];
    const query = gql`
      query ApolloPost {
        legalForms {
          code
        }
      }
    `;
    const first = await apollo(log, false).query<{ legalForms: Array<{ code: string }> }>({ query, fetchPolicy: 'network-only' });
    expect(first.error).toBeUndefined();
    expect(first.data!.legalForms.length).toBeGreaterThan(0);
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
    const query = gql`
      query ApolloGet {
        legalForms {
          description
        }
      }
    `;
    const first = await apollo(log, true).query<{ legalForms: Array<{ description: string }> }>({ query, fetchPolicy: 'network-only' });
    expect(first.error).toBeUndefined();
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

  it('a registration answered from the response cache is kept all the same', async () => {
    const query = 'query ApqCached { legalForms { code description } }';
    const hash = sha256(query);
    const post = async (body: Record<string, unknown>): Promise<GraphQLResponse> => {
      const res = await request(t.stack.gateway.graphqlUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      return (await res.body.json()) as GraphQLResponse;
    };
    expect((await t.gql(query)).errors).toBeUndefined();
    await t.clearCalls();
    // The query and its hash: answered from the response cache (no upstream call), and kept.
    const registration = await post({ query, extensions: { persistedQuery: { version: 1, sha256Hash: hash } } });
    expect(registration.errors).toBeUndefined();
    expect(await t.calls()).toEqual([]);
    const hashOnly = await post({ extensions: { persistedQuery: { version: 1, sha256Hash: hash } } });
    expect(hashOnly.errors).toBeUndefined();
    expect(hashOnly.data).toEqual(registration.data);
  });

  it('a paid operation sent by hash alone is refused by the budget like one sent as text, before any upstream call', async () => {
    const paid = 'query Paid { company(vatCode: "12485671007") { companyName } }';
    const ext = { persistedQuery: { version: 1, sha256Hash: sha256(paid) } };
    const post = async (body: Record<string, unknown>): Promise<GraphQLResponse> => {
      const res = await request(t.stack.gateway.graphqlUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      return (await res.body.json()) as GraphQLResponse;
    };
    await t.clearCalls();
    // Registered (the document is valid) though refused…
    expect((await post({ query: paid, extensions: ext })).errors?.[0]?.extensions?.code).toBe('COST_LIMIT_EXCEEDED');
    // …and by its hash alone: refused the same way.
    expect((await post({ extensions: ext })).errors?.[0]?.extensions?.code).toBe('COST_LIMIT_EXCEEDED');
    expect(await t.calls()).toEqual([]);
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
  const order = 'mutation Order { orderPatrimonialReport(input: { name: "MARIO", surname: "ROSSI", taxCode: "RSSMRA80A01H501U" }) { id } }';
  const watch = 'subscription Watch($id: ID!) { riskRequestUpdated(id: $id) { id state } }';
  const byHash = (doc: string): { extensions: { persistedQuery: { version: number; sha256Hash: string } } } => ({
    extensions: { persistedQuery: { version: 1, sha256Hash: sha256Hex(doc) } },
  });
  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'trusted-'));
    const manifest = join(dir, 'persisted-documents.json');
    writeFileSync(manifest, JSON.stringify(Object.fromEntries([allowed, order, watch].map((d) => [sha256Hex(d), d]))));
    t = await startTestStack({ PERSISTED_OPERATIONS: 'trusted', PERSISTED_OPERATIONS_MANIFEST: manifest });
    // Reports stay PROCESSING until the test moves them.
    await t.control('risk/timing', { completeAfterMs: 0 });
  }, 120_000);
  afterAll(async () => {
    await t?.close();
  });

  const send = async (body: Record<string, unknown>, get = false): Promise<GraphQLResponse<{ legalForms?: unknown[] }>> => {
    const url = new URL(t.stack.gateway.graphqlUrl);
    if (get) for (const [k, v] of Object.entries(body)) url.searchParams.set(k, typeof v === 'string' ? v : JSON.stringify(v));
    const res = await request(
      url,
      get ? { headers: { 'x-graphql-csrf': '1', accept: 'application/json' } } : { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) },
    );
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
    const text = await send({ query: 'query Other { company(vatCode: "03456783053") { companyName } }' });
    expect(text.errors?.[0]?.extensions?.code).toBe('PERSISTED_QUERY_ONLY');
    const registeredAsText = await send({ query: allowed, extensions: { persistedQuery: { version: 1, sha256Hash: allowedHash } } });
    expect(registeredAsText.errors?.[0]?.extensions?.code).toBe('PERSISTED_QUERY_ONLY');
    const unknown = await send({ extensions: { persistedQuery: { version: 1, sha256Hash: sha256('query X { __typename }') } } });
    expect(unknown.errors?.[0]?.extensions?.code).toBe('PERSISTED_QUERY_NOT_IN_LIST');
    expect(text.data ?? null).toBeNull();
    expect(await t.calls()).toEqual([]);
  });

  it('over graphql-ws: a refused document is an error message with its code, the socket and its other subscriptions live on', async () => {
    const ordered = await send(byHash(order));
    expect(ordered.errors).toBeUndefined();
    const id = (ordered.data as unknown as { orderPatrimonialReport: { id: string } }).orderPatrimonialReport.id;
    let closed: number | null = null;
    const client = createClient({
      url: t.stack.gateway.wsUrl,
      webSocketImpl: WebSocket,
      retryAttempts: 0,
      lazy: false,
      on: {
        closed: (e) => {
          closed = (e as { code: number }).code;
        },
      },
    });
    try {
      const events = client.iterate<{ riskRequestUpdated: { id: string; state: string } }>({ query: '', variables: { id }, ...byHash(watch) });
      expect((await events.next()).value).toEqual({ data: { riskRequestUpdated: { id, state: 'PROCESSING' } } });
      const refusal = async (payload: { query: string; extensions?: Record<string, unknown> }): Promise<unknown> => {
        try {
          await client.iterate(payload).next();
          return null;
        } catch (errors) {
          return (errors as Array<{ extensions?: { code?: string } }>)[0]?.extensions?.code;
        }
      };
      expect(await refusal({ query: 'subscription { riskRequestUpdated(id: "x") { id } }' })).toBe('PERSISTED_QUERY_ONLY');
      expect(await refusal({ query: '', ...byHash('subscription Unknown { riskRequestUpdated(id: "x") { id } }') })).toBe('PERSISTED_QUERY_NOT_IN_LIST');
      await t.control('risk/advance', { id });
      expect((await events.next()).value).toEqual({ data: { riskRequestUpdated: { id, state: 'COMPLETE' } } });
      expect(closed).toBeNull();
      await events.return?.();
    } finally {
      await client.dispose();
    }
  });

  it('serves no GraphiQL page (it could run none of its documents), a short text instead', async () => {
    const res = await request(t.stack.gateway.graphqlUrl, { headers: { accept: 'text/html' } });
    expect(res.statusCode).toBe(404);
    expect(await res.body.text()).toMatch(/registered operations only/);
  });

  it('reads manifests as client builds emit them: { hash: document } and Apollo’s format', () => {
    const dir = mkdtempSync(join(tmpdir(), 'manifest-'));
    const apolloFile = join(dir, 'persisted-query-manifest.json');
    writeFileSync(
      apolloFile,
      JSON.stringify({ format: 'apollo-persisted-query-manifest', version: 1, operations: [{ id: allowedHash, name: 'Allowed', type: 'query', body: allowed }] }),
    );
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

  it('redis: a known hash is never rewritten; at most maxEntries documents, the oldest dropped', async () => {
    const store = redisDocumentStore('redis://127.0.0.1:6379', { prefix: `${prefix}cap:`, ttlSeconds: 60, maxEntries: 3 });
    try {
      await store.set('h1', 'query One { __typename }');
      await store.set('h1', 'query Other { __typename }');
      expect(await store.get('h1')).toBe('query One { __typename }');
      for (const h of ['h2', 'h3', 'h4', 'h5']) await store.set(h, `query ${h} { __typename }`);
      expect(await Promise.all(['h1', 'h2', 'h3', 'h4', 'h5'].map((h) => store.get(h)))).toEqual([
        null,
        null,
        'query h3 { __typename }',
        'query h4 { __typename }',
        'query h5 { __typename }',
      ]);
    } finally {
      await store.close();
    }
  });

  it('redis down: a hash is answered PersistedQueryNotFound (the client then sends the query), not a failure', async () => {
    const persisted = persistedOperations({ redisUrl: 'redis://127.0.0.1:1', redisPrefix: prefix });
    try {
      const errors = await persisted.refused({ extensions: { persistedQuery: { version: 1, sha256Hash: sha256Hex(LEGAL_FORMS) } } });
      expect(errors?.map((e) => e.extensions.code)).toEqual(['PERSISTED_QUERY_NOT_FOUND']);
    } finally {
      await persisted.close();
    }
  }, 30_000);

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

describeStores<PersistedDocumentStore>(
  'APQ documents',
  {
    memory: () => memoryDocumentStore({ maxEntries: 3 }),
    redis: (redis) => redisDocumentStoreOn(redis, { ttlSeconds: 60, maxEntries: 3 }),
    sqlite: (db) => sqliteDocumentStore(db, { ttlSeconds: 60, maxEntries: 3 }),
  },
  (stores) => {
    it('keeps a document under its hash for every replica; a known hash is never rewritten; at most maxEntries, the oldest dropped', async () => {
      const a = await stores.make();
      const b = await stores.replica(a);
      expect(await b.get('h1')).toBeNull();
      await a.set('h1', 'query One { __typename }');
      expect(await b.get('h1')).toBe('query One { __typename }');
      if (stores.kind !== 'memory') {
        // Shared stores: the first registration stands (SET NX / INSERT unless present).
        await b.set('h1', 'query Other { __typename }');
        expect(await a.get('h1')).toBe('query One { __typename }');
      }
      const c = await stores.make();
      const d = await stores.replica(c);
      for (const h of ['g1', 'g2', 'g3', 'g4', 'g5']) await c.set(h, `query ${h} { __typename }`);
      const kept = await Promise.all(['g1', 'g2', 'g3', 'g4', 'g5'].map((h) => d.get(h)));
      // At most three, the newest kept (memory weighs each entry by size too, so it may keep fewer).
      expect(kept.slice(0, 2)).toEqual([null, null]);
      expect(kept.slice(3)).toEqual(['query g4 { __typename }', 'query g5 { __typename }']);
      if (stores.kind !== 'memory') expect(kept[2]).toBe('query g3 { __typename }');
    });

    it('forgets a document after its ttl', async () => {
      if (stores.kind !== 'sqlite') return; // memory: no ttl (bounded); Redis: EX, checked by Redis
      const dir = mkdtempSync(join(tmpdir(), 'apq-ttl-'));
      let now = Date.now();
      const store = sqliteDocumentStore(openDatabase(join(dir, 'layer.db')), { ttlSeconds: 60, now: () => now });
      try {
        await store.set('h', 'query H { __typename }');
        now += 59_000;
        expect(await store.get('h')).toBe('query H { __typename }');
        now += 2_000;
        expect(await store.get('h')).toBeNull();
      } finally {
        await store.close();
        rmSync(dir, { recursive: true, force: true });
      }
    });
  },
);

describe('configuration (gatewayOptionsFromEnv)', () => {
  it('APQ by default, on Redis with REDIS_URL; trusted needs its manifest; unknown modes refused', () => {
    expect(persistedFromEnv({})).toMatchObject({ mode: 'apq', redisUrl: null });
    expect(persistedFromEnv({ DATA_DIR: '/srv/layer' })).toMatchObject({ mode: 'apq', redisUrl: null, sqliteFile: '/srv/layer/layer.db' });
    expect(persistedFromEnv({ REDIS_URL: 'redis://127.0.0.1:6379', REDIS_PREFIX: 'p:' })).toMatchObject({ mode: 'apq', redisUrl: 'redis://127.0.0.1:6379', redisPrefix: 'p:' });
    expect(() => persistedFromEnv({ PERSISTED_OPERATIONS: 'trusted' })).toThrow(ServiceConfigError);
    expect(persistedFromEnv({ PERSISTED_OPERATIONS: 'trusted', PERSISTED_OPERATIONS_MANIFEST: '/m.json' })).toMatchObject({ mode: 'trusted', manifest: '/m.json' });
    expect(persistedFromEnv({ PERSISTED_OPERATIONS: 'OFF' })).toMatchObject({ mode: 'off' });
    expect(() => persistedFromEnv({ PERSISTED_OPERATIONS: 'sometimes' })).toThrow(/apq, trusted or off/);
  });
});
