/**
 * Persisted operations, on the runtime's `persistedDocuments` (`@graphql-yoga/plugin-persisted-operations`):
 *
 * - `apq` (default): automatic persisted queries as Apollo Client's persisted-queries link and urql's
 *   persisted exchange send them (`extensions.persistedQuery: { version: 1, sha256Hash }`, over POST
 *   or GET). A hash the gateway does not know is answered `PersistedQueryNotFound`
 *   (`PERSISTED_QUERY_NOT_FOUND`), the client sends it again with the query, and the gateway keeps
 *   the query under its hash once the hash is checked (sha256 of the query) and the document valid.
 *   Documents are kept in a bounded LRU in memory, or on Redis (`REDIS_URL`, shared by replicas,
 *   each entry for `ttlSeconds` since last registered). Any other document still runs.
 * - `trusted`: only the operations of a manifest run (`PERSISTED_OPERATIONS_MANIFEST`: the file a
 *   client build emits, either `{ "<hash>": "<document>" }` as GraphQL Code Generator's client
 *   preset and Relay write it, or Apollo's `persisted-query-manifest.json`). A document sent as text
 *   is refused with `PERSISTED_QUERY_ONLY`, an unknown hash with `PERSISTED_QUERY_NOT_IN_LIST`,
 *   before anything runs. GraphiQL cannot run its own documents in this mode.
 * - `off`: documents as text only.
 *
 * The plugin package's APQ companion (`@graphql-yoga/plugin-apq`) does not install beside the
 * runtime, so the registration step (hash check, store) is the small plugin here.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { parse } from 'graphql';
import { LRUCache } from 'lru-cache';
import type { GatewayConfig, GatewayPlugin } from '@graphql-hive/gateway-runtime';
import { createGraphQLError, type GraphQLParams } from 'graphql-yoga';
import { connectRedis } from '../subgraphs/runtime/redis.ts';
import { log } from '../subgraphs/runtime/log.ts';

export type PersistedMode = 'apq' | 'trusted' | 'off';

export interface PersistedOperationsOptions {
  /** @default 'apq' */
  mode?: PersistedMode;
  /** `trusted`: path of the manifest (hash → document). Required in that mode. */
  manifest?: string;
  /** `apq`: Redis URL of the shared store; none = in process memory. @default null */
  redisUrl?: string | null;
  /** `apq` on Redis: key prefix (`<prefix>apq:<hash>`). @default 'openapi-supergraph:' */
  redisPrefix?: string;
  /** `apq` on Redis: how long a document is kept after it was last registered. @default 7 days */
  ttlSeconds?: number;
  /** `apq` in memory: documents kept (least recently used dropped first). @default 10,000 */
  maxEntries?: number;
  /** `apq` in memory: characters of documents kept in all. @default 20,000,000 */
  maxChars?: number;
}

/** Where automatic persisted queries are kept, by sha256 hash (hex). */
export interface PersistedDocumentStore {
  get(hash: string): Promise<string | null>;
  set(hash: string, document: string): Promise<void>;
  close(): Promise<void>;
}

/** A bounded LRU in process memory. */
export function memoryDocumentStore(opts: { maxEntries?: number; maxChars?: number } = {}): PersistedDocumentStore {
  const lru = new LRUCache<string, string>({ max: opts.maxEntries ?? 10_000, maxSize: opts.maxChars ?? 20_000_000, sizeCalculation: (doc) => Math.max(1, doc.length) });
  return {
    get: (hash) => Promise.resolve(lru.get(hash) ?? null),
    set: (hash, document) => {
      lru.set(hash, document);
      return Promise.resolve();
    },
    close: () => Promise.resolve(),
  };
}

/** Documents on Redis under `<prefix>apq:<hash>`, each for `ttlSeconds`. */
export function redisDocumentStore(url: string, opts: { prefix?: string; ttlSeconds?: number } = {}): PersistedDocumentStore {
  const redis = connectRedis(url, { prefix: opts.prefix, name: 'apq' });
  const ttl = opts.ttlSeconds ?? 7 * 24 * 3600;
  return {
    get: (hash) => redis.get(`apq:${hash}`),
    set: async (hash, document) => {
      await redis.set(`apq:${hash}`, document, 'EX', ttl);
    },
    close: async () => {
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}

/** The sha256 (hex) APQ clients send for a query. */
export const sha256Hex = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex');

/**
 * A trusted-documents manifest, `{ hash: document }` or Apollo's
 * `{ format: "apollo-persisted-query-manifest", operations: [{ id, body }] }`; every document must parse.
 */
export function readManifest(path: string): Map<string, string> {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new Error(`PERSISTED_OPERATIONS_MANIFEST: cannot read "${path}" as JSON (${(err as Error).message})`, { cause: err });
  }
  const entries: Array<[string, unknown]> =
    raw !== null && typeof raw === 'object' && !Array.isArray(raw) && (raw as { format?: unknown }).format === 'apollo-persisted-query-manifest'
      ? ((raw as { operations?: unknown }).operations as Array<{ id?: unknown; body?: unknown }> | undefined ?? []).map((op) => [String(op.id), op.body])
      : raw !== null && typeof raw === 'object' && !Array.isArray(raw)
        ? Object.entries(raw)
        : [];
  const documents = new Map<string, string>();
  for (const [hash, document] of entries) {
    if (typeof document !== 'string') throw new Error(`PERSISTED_OPERATIONS_MANIFEST: the entry "${hash}" of "${path}" is not a document`);
    try {
      parse(document);
    } catch (err) {
      throw new Error(`PERSISTED_OPERATIONS_MANIFEST: the document "${hash}" of "${path}" does not parse (${(err as Error).message})`, { cause: err });
    }
    documents.set(hash, document);
  }
  if (documents.size === 0) throw new Error(`PERSISTED_OPERATIONS_MANIFEST: "${path}" holds no operation (expected { "<hash>": "<document>" } or an Apollo persisted query manifest)`);
  return documents;
}

type PersistedDocumentsConfig = NonNullable<GatewayConfig<Record<string, unknown>>['persistedDocuments']>;

export interface PersistedOperations {
  /** The runtime's `persistedDocuments`; undefined when off. */
  persistedDocuments: PersistedDocumentsConfig | undefined;
  /** Plugins to add (the APQ registration). */
  plugins: GatewayPlugin[];
  close(): Promise<void>;
}

/** The `persistedQuery` extension of a request, when it is one APQ clients send. */
function persistedQueryHash(params: GraphQLParams): string | null {
  const pq = (params.extensions as { persistedQuery?: { version?: unknown; sha256Hash?: unknown } } | undefined)?.persistedQuery;
  return pq && pq.version === 1 && typeof pq.sha256Hash === 'string' ? pq.sha256Hash : null;
}

/** The runtime configuration and plugins of a mode (see the module's comment). */
export function persistedOperations(opts: PersistedOperationsOptions = {}): PersistedOperations {
  const mode = opts.mode ?? 'apq';
  if (mode === 'off') return { persistedDocuments: undefined, plugins: [], close: () => Promise.resolve() };
  const keyNotFound = { message: 'Send a query, or a persisted query hash (extensions.persistedQuery.sha256Hash)', extensions: { code: 'PERSISTED_QUERY_ID_REQUIRED', http: { status: 400 } } };

  if (mode === 'trusted') {
    if (!opts.manifest) throw new Error('PERSISTED_OPERATIONS=trusted needs PERSISTED_OPERATIONS_MANIFEST: the path of the manifest of allowed operations (hash → document)');
    const documents = readManifest(opts.manifest);
    return {
      persistedDocuments: {
        getPersistedOperation: (hash) => documents.get(hash) ?? null,
        allowArbitraryDocuments: false,
        customErrors: {
          notFound: { message: 'PersistedQueryNotFound', extensions: { code: 'PERSISTED_QUERY_NOT_IN_LIST', http: { status: 400 } } },
          persistedQueryOnly: { message: 'Only registered operations run on this gateway: send the hash of one (extensions.persistedQuery.sha256Hash)', extensions: { code: 'PERSISTED_QUERY_ONLY', http: { status: 400 } } },
          keyNotFound,
        },
      },
      plugins: [],
      close: () => Promise.resolve(),
    };
  }

  const store = opts.redisUrl ? redisDocumentStore(opts.redisUrl, { prefix: opts.redisPrefix, ttlSeconds: opts.ttlSeconds }) : memoryDocumentStore(opts);
  // Requests carrying a query and its hash, checked: kept once their document validates.
  const toRegister = new WeakMap<object, { hash: string; query: string }>();
  const register: GatewayPlugin = {
    onParams({ params, context }) {
      const hash = persistedQueryHash(params);
      if (hash === null || typeof params.query !== 'string') return;
      if (sha256Hex(params.query) !== hash.toLowerCase()) {
        throw createGraphQLError('provided sha does not match query', { extensions: { code: 'PERSISTED_QUERY_HASH_MISMATCH', http: { status: 400 } } });
      }
      toRegister.set(context, { hash: hash.toLowerCase(), query: params.query });
    },
    onValidate({ context }) {
      const pending = toRegister.get(context);
      if (!pending) return;
      return ({ valid }) => {
        if (!valid) return;
        store.set(pending.hash, pending.query).catch((err: unknown) => log.warn({ area: 'persisted', err }, 'persisted query not kept'));
      };
    },
  };
  return {
    persistedDocuments: {
      getPersistedOperation: (hash) => store.get(hash.toLowerCase()),
      allowArbitraryDocuments: true,
      customErrors: {
        // The message and code Apollo Client's link and urql's exchange answer by sending the query.
        notFound: { message: 'PersistedQueryNotFound', extensions: { code: 'PERSISTED_QUERY_NOT_FOUND' } },
        keyNotFound,
      },
    },
    plugins: [register],
    close: () => store.close(),
  };
}
