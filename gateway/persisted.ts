/**
 * Persisted operations, on the runtime's `persistedDocuments` (`@graphql-yoga/plugin-persisted-operations`):
 *
 * - `apq` (default): automatic persisted queries as Apollo Client's persisted-queries link and urql's
 *   persisted exchange send them (`extensions.persistedQuery: { version: 1, sha256Hash }`, over POST
 *   or GET). A hash the gateway does not know is answered `PersistedQueryNotFound`
 *   (`PERSISTED_QUERY_NOT_FOUND`), the client sends it again with the query, and the gateway keeps
 *   the query under its hash once the hash is checked (sha256 of the query) and the document valid.
 *   Documents are kept in the embedded database (the default without Redis, kept across restarts),
 *   on Redis (`REDIS_URL`, shared by replicas), each entry for `ttlSeconds` since it was registered
 *   and at most `maxEntries`, or in a bounded LRU in memory (`STORE=memory`). Any other document still runs.
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
import type { GraphQLError } from 'graphql';
import type { Redis } from 'ioredis';
import { connectRedis } from '../platform/redis.ts';
import { sharedDatabase, SqliteKv, type SqliteDatabase } from '../platform/sqlite.ts';
import { log } from '../platform/log.ts';
import { entriesAtMost } from '../platform/lru.ts';

export type PersistedMode = 'apq' | 'trusted' | 'off';

export interface PersistedOperationsOptions {
  /** @default 'apq' */
  mode?: PersistedMode;
  /** `trusted`: path of the manifest (hash → document). Required in that mode. */
  manifest?: string;
  /** `apq`: Redis URL of the shared store; none = the embedded database (`sqliteFile`) or process memory. @default null */
  redisUrl?: string | null;
  /** `apq` without Redis: the embedded database's file (documents kept across restarts); none = process memory. @default null */
  sqliteFile?: string | null;
  /** `apq` on Redis: key prefix (`<prefix>apq:<hash>`). @default 'openapi-supergraph:' */
  redisPrefix?: string;
  /** `apq` on Redis: how long a document is kept after it was registered. @default 7 days */
  ttlSeconds?: number;
  /** `apq`: documents kept (in memory least recently used dropped first, on Redis the oldest). @default 10,000 */
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

/**
 * A bounded LRU in process memory: at most `maxEntries` documents and `maxChars` characters (each
 * entry weighs its length, and at least `maxChars / maxEntries`, so both bounds hold; no `max`,
 * which preallocates, see `entriesAtMost`).
 */
export function memoryDocumentStore(opts: { maxEntries?: number; maxChars?: number } = {}): PersistedDocumentStore {
  const maxChars = opts.maxChars ?? 20_000_000;
  const floor = Math.ceil(maxChars / Math.max(1, opts.maxEntries ?? 10_000));
  const bound = entriesAtMost(maxChars);
  const lru = new LRUCache<string, string>({ maxSize: bound.maxSize, sizeCalculation: (doc) => Math.max(floor, doc.length, 1) });
  return {
    get: (hash) => Promise.resolve(lru.get(hash) ?? null),
    set: (hash, document) => {
      lru.set(hash, document);
      return Promise.resolve();
    },
    close: () => Promise.resolve(),
  };
}

/**
 * Stores a document once (`SET NX`: a known hash is never rewritten nor its TTL refreshed) and keeps
 * the index (a sorted set of hashes by registration time) at most ARGV[4] long: entries past their
 * TTL and then the oldest are dropped with their documents, in the same atomic step.
 * KEYS: document key, index key. ARGV: hash, document, ttl (s), max entries, now (ms).
 */
const SET_BOUNDED = `
if not redis.call('SET', KEYS[1], ARGV[2], 'NX', 'EX', ARGV[3]) then return 0 end
local docPrefix = string.sub(KEYS[1], 1, #KEYS[1] - #ARGV[1])
local now = tonumber(ARGV[5])
redis.call('ZADD', KEYS[2], now, ARGV[1])
local expired = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now - tonumber(ARGV[3]) * 1000)
if #expired > 0 then redis.call('ZREM', KEYS[2], unpack(expired)) end
local over = redis.call('ZCARD', KEYS[2]) - tonumber(ARGV[4])
if over > 0 then
  local oldest = redis.call('ZRANGE', KEYS[2], 0, over - 1)
  for _, h in ipairs(oldest) do redis.call('DEL', docPrefix .. h) end
  redis.call('ZREMRANGEBYRANK', KEYS[2], 0, over - 1)
end
return 1`;

/**
 * Documents on Redis under `<prefix>apq:<hash>`, each for `ttlSeconds` from its registration, at most
 * `maxEntries` of them (index `<prefix>apq-index`, oldest dropped first): anonymous callers can
 * register documents, and the Redis they fill holds the layer's other state.
 */
export function redisDocumentStore(url: string, opts: { prefix?: string; ttlSeconds?: number; maxEntries?: number } = {}): PersistedDocumentStore {
  return redisDocumentStoreOn(connectRedis(url, { prefix: opts.prefix, name: 'apq' }), opts);
}

/** The same on an open connection (its key prefix applies), which `close` quits. */
export function redisDocumentStoreOn(redis: Redis, opts: { ttlSeconds?: number; maxEntries?: number } = {}): PersistedDocumentStore {
  const ttl = opts.ttlSeconds ?? 7 * 24 * 3600;
  const max = opts.maxEntries ?? 10_000;
  return {
    get: (hash) => redis.get(`apq:${hash}`),
    set: async (hash, document) => {
      await redis.eval(SET_BOUNDED, 2, `apq:${hash}`, 'apq-index', hash, document, ttl, max, Date.now());
    },
    close: async () => {
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}

/**
 * Documents in the embedded database (namespace `apq`), each for `ttlSeconds` from its registration
 * (a known hash is never rewritten), at most `maxEntries` (the soonest-expiring, i.e. oldest, dropped
 * first, in the same transaction).
 */
export function sqliteDocumentStore(db: SqliteDatabase, opts: { ttlSeconds?: number; maxEntries?: number; now?: () => number } = {}): PersistedDocumentStore {
  const now = opts.now ?? Date.now;
  const kv = new SqliteKv(db, 'apq', now);
  const ttl = (opts.ttlSeconds ?? 7 * 24 * 3600) * 1000;
  const max = opts.maxEntries ?? 10_000;
  // A cache: a registration lost to a power cut is sent again by its client; nothing waits for the disk.
  return {
    get: (hash) => Promise.resolve(kv.get(hash) ?? null),
    set: (hash, document) => {
      db.tx(() => {
        if (kv.setNx(hash, document, { exp: now() + ttl })) kv.dropSoonest(kv.count() - max);
      });
      return Promise.resolve();
    },
    close: () => Promise.resolve(db.release()),
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
      ? (((raw as { operations?: unknown }).operations as Array<{ id?: unknown; body?: unknown }> | undefined) ?? []).map((op) => [String(op.id), op.body])
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
  if (documents.size === 0)
    throw new Error(`PERSISTED_OPERATIONS_MANIFEST: "${path}" holds no operation (expected { "<hash>": "<document>" } or an Apollo persisted query manifest)`);
  return documents;
}

type PersistedDocumentsConfig = NonNullable<GatewayConfig<Record<string, unknown>>['persistedDocuments']>;

export interface PersistedOperations {
  /** The runtime's `persistedDocuments`; undefined when off. */
  persistedDocuments: PersistedDocumentsConfig | undefined;
  /** Plugins to add (the APQ registration). */
  plugins: GatewayPlugin[];
  /**
   * For graphql-ws: the errors a subscribe payload is refused with (trusted mode, an unknown hash),
   * or null to run it. The runtime would throw them, and graphql-ws closes the whole socket (4500)
   * on a throw; returned from `onSubscribe` they are one `error` message with their code.
   */
  refused(params: RequestDocument): Promise<GraphQLError[] | null>;
  close(): Promise<void>;
}

type ErrorSpec = { message: string; extensions: { code: string; http?: { status: number } } };
const toError = (spec: ErrorSpec): GraphQLError => createGraphQLError(spec.message, { extensions: spec.extensions });
const hashMismatch: ErrorSpec = { message: 'provided sha does not match query', extensions: { code: 'PERSISTED_QUERY_HASH_MISMATCH', http: { status: 400 } } };

/** What a request carries of its document: the text and/or the extension with its hash. */
type RequestDocument = Pick<GraphQLParams, 'query'> & { extensions?: Record<string, unknown> | null };

/** The `persistedQuery` extension of a request, when it is one APQ clients send. */
function persistedQueryHash(params: RequestDocument): string | null {
  const pq = (params.extensions as { persistedQuery?: { version?: unknown; sha256Hash?: unknown } } | undefined)?.persistedQuery;
  return pq && pq.version === 1 && typeof pq.sha256Hash === 'string' ? pq.sha256Hash : null;
}

/** The runtime configuration and plugins of a mode (see the module's comment). */
export function persistedOperations(opts: PersistedOperationsOptions = {}): PersistedOperations {
  const mode = opts.mode ?? 'apq';
  if (mode === 'off') return { persistedDocuments: undefined, plugins: [], refused: () => Promise.resolve(null), close: () => Promise.resolve() };
  const keyNotFound = {
    message: 'Send a query, or a persisted query hash (extensions.persistedQuery.sha256Hash)',
    extensions: { code: 'PERSISTED_QUERY_ID_REQUIRED', http: { status: 400 } },
  };

  if (mode === 'trusted') {
    if (!opts.manifest) throw new Error('PERSISTED_OPERATIONS=trusted needs PERSISTED_OPERATIONS_MANIFEST: the path of the manifest of allowed operations (hash → document)');
    const documents = readManifest(opts.manifest);
    const notFound = { message: 'PersistedQueryNotFound', extensions: { code: 'PERSISTED_QUERY_NOT_IN_LIST', http: { status: 400 } } };
    const persistedQueryOnly = {
      message: 'Only registered operations run on this gateway: send the hash of one (extensions.persistedQuery.sha256Hash)',
      extensions: { code: 'PERSISTED_QUERY_ONLY', http: { status: 400 } },
    };
    return {
      persistedDocuments: {
        getPersistedOperation: (hash) => documents.get(hash) ?? null,
        allowArbitraryDocuments: false,
        customErrors: { notFound, persistedQueryOnly, keyNotFound },
      },
      plugins: [],
      refused: (params) => {
        const hash = persistedQueryHash(params);
        if (params.query) return Promise.resolve([toError(persistedQueryOnly)]);
        if (hash === null) return Promise.resolve([toError(keyNotFound)]);
        return Promise.resolve(documents.has(hash) ? null : [toError(notFound)]);
      },
      close: () => Promise.resolve(),
    };
  }

  const store = opts.redisUrl
    ? redisDocumentStore(opts.redisUrl, { prefix: opts.redisPrefix, ttlSeconds: opts.ttlSeconds, maxEntries: opts.maxEntries })
    : opts.sqliteFile
      ? sqliteDocumentStore(sharedDatabase(opts.sqliteFile), { ttlSeconds: opts.ttlSeconds, maxEntries: opts.maxEntries })
      : memoryDocumentStore(opts);
  // A store that cannot answer (Redis down) answers "not found": clients then send the query, which
  // runs. Logged once per outage.
  let failing = false;
  const lookUp = async (hash: string): Promise<string | null> => {
    try {
      const document = await store.get(hash.toLowerCase());
      failing = false;
      return document;
    } catch (err) {
      if (!failing) log.warn({ area: 'persisted', err }, 'persisted query store unavailable: hashes answered PersistedQueryNotFound until it is back');
      failing = true;
      return null;
    }
  };
  const notFound = { message: 'PersistedQueryNotFound', extensions: { code: 'PERSISTED_QUERY_NOT_FOUND' } };

  // A request whose client sent a query and its hash (checked in onParams): kept once, when its
  // document validated, or when it was answered without validating here (response cache, shared
  // in-flight answer: the same document validated before). Invalid ones are dropped.
  interface Pending {
    hash: string;
    query: string;
    state: 'pending' | 'invalid' | 'kept';
  }
  const byContext = new WeakMap<object, Pending>();
  const byRequest = new WeakMap<object, Pending>();
  // Requests the store answered (hash only): nothing to register.
  const resolved = new WeakSet<object>();
  const keep = (pending: Pending | undefined): void => {
    if (!pending || pending.state !== 'pending') return;
    pending.state = 'kept';
    store.set(pending.hash, pending.query).catch((err: unknown) => log.warn({ area: 'persisted', err }, 'persisted query not kept'));
  };
  const register: GatewayPlugin = {
    onParams({ params, context, request }) {
      const hash = persistedQueryHash(params);
      if (hash === null || typeof params.query !== 'string' || resolved.has(context)) return;
      if (sha256Hex(params.query) !== hash.toLowerCase()) {
        throw toError(hashMismatch);
      }
      const pending: Pending = { hash: hash.toLowerCase(), query: params.query, state: 'pending' };
      byContext.set(context, pending);
      if (request) byRequest.set(request, pending);
    },
    onParse({ context }) {
      const pending = byContext.get(context);
      if (!pending) return;
      return ({ result }) => {
        if (result instanceof Error) pending.state = 'invalid';
      };
    },
    onValidate({ context }) {
      const pending = byContext.get(context);
      if (!pending) return;
      return ({ valid }) => {
        if (!valid) pending.state = 'invalid';
        else keep(pending);
      };
    },
    onResultProcess({ request }) {
      keep(byRequest.get(request));
    },
  };
  return {
    persistedDocuments: {
      getPersistedOperation: async (hash, _request, context) => {
        const document = await lookUp(hash);
        if (document !== null && context) resolved.add(context);
        return document;
      },
      allowArbitraryDocuments: true,
      customErrors: {
        // The message and code Apollo Client's link and urql's exchange answer by sending the query.
        notFound,
        keyNotFound,
      },
    },
    plugins: [register],
    refused: async (params) => {
      const hash = persistedQueryHash(params);
      if (hash === null) return null;
      // A document whose hash is not its own: refused with its code, not a closed socket.
      if (typeof params.query === 'string') return sha256Hex(params.query) === hash.toLowerCase() ? null : [toError(hashMismatch)];
      return (await lookUp(hash)) === null ? [toError(notFound)] : null;
    },
    close: () => store.close(),
  };
}
