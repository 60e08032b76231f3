/**
 * Whole answers at the gateway: the runtime's response cache (`@graphql-yoga/plugin-response-cache`,
 * what the runtime's `responseCaching` option builds on) and identical operations in flight shared.
 *
 * - **What is cached**: query answers, per tenant (the session is the layer's tenant of the caller's
 *   credential, a hash, never the token), for no longer than the shortest upstream data they hold: each
 *   field lives as long as its subgraph's data (`responseTtlSeconds` of each area's cache policy,
 *   `cachePolicyOf`; 0 = never cached, e.g. risk and invoicing read upstream every time, account
 *   answers are the operator's), and fields read upstream every time never (the policies'
 *   `neverCached`). Never cached: mutations, subscriptions, answers with errors, with stale
 *   data, with euro at risk, and estimate-only answers.
 * - **Cost on a hit**: the stored answer keeps its `extensions.cost`; the cost plugin (`cost.ts`)
 *   reports it as answered from cache (0 upstream calls, each call a cache hit, `saved` euro).
 * - **Invalidation**: a tracked request's change (a status, a company monitor check) drops its
 *   tenant's answers, heard in this process (`subgraphs/runtime/changes.ts`) and, with Redis, from
 *   every replica's bus channel; a mutation drops its caller's answers; clearing the layer's
 *   upstream cache clears this one. Callers without a credential (the layer's own token) lose theirs
 *   on any tenant's change (the gateway cannot tell the layer's token's tenant).
 * - **Bursts**: identical queries of one tenant in flight at once run once; the others get its
 *   answer, their cost saying de-duplication (`cost.ts`).
 */
import type { GatewayPlugin } from '@graphql-hive/gateway-runtime';
import { useResponseCache, type Cache } from '@graphql-yoga/plugin-response-cache';
import { createRedisCache } from '@envelop/response-cache-redis';
import { getOperationAST, parse, Kind, OperationTypeNode, type DocumentNode, type ExecutionResult, type ObjectTypeDefinitionNode, type ConstDirectiveNode } from 'graphql';
import { parseBounded } from './limits.ts';
import type { Redis } from 'ioredis';
import { LRUCache } from 'lru-cache';
import { entriesAtMost } from '../platform/lru.ts';
import type { GatewayArea } from '../subgraphs/runtime/area.ts';
import { onLayerChange, tenantOfTopic } from '../platform/changes.ts';
import { channelOf, closeRedis, connectRedis, DEFAULT_REDIS_PREFIX, unlinkMatching } from '../platform/redis.ts';
import { ANONYMOUS, isFetchRequest, keyHash, stableJson, tenantOfSession, type CallerSessionOf } from './caller-session.ts';
import { wantsEstimateOnly } from './cost.ts';
import { log } from '../platform/log.ts';

/** The areas' cache policies as the response cache reads them. */
export interface CachePolicy {
  /** Seconds a field of each subgraph may be served from a cached answer; 0 (or absent) never. */
  ttlBySubgraph: Readonly<Record<string, number>>;
  /** Fields (`Type.field`) whose upstream data is never cached: an answer holding one is never stored. */
  neverCached: readonly string[];
}

/** The cache policy of the areas given (their descriptors' `cache`, from the registry). */
export function cachePolicyOf(areas: readonly GatewayArea[]): CachePolicy {
  return {
    ttlBySubgraph: Object.fromEntries(areas.map((a) => [a.name, a.cache.responseTtlSeconds])),
    neverCached: areas.flatMap((a) => a.cache.neverCached ?? []),
  };
}

export interface ResponseCacheOptions {
  /** The supergraph SDL: which subgraph serves each field. */
  supergraph: string;
  /** The areas' cache policies (`cachePolicyOf` of the registry's areas). */
  policy: CachePolicy;
  /** Whose answer is whose: the caller's session (`callerSessions` of the areas' credential headers). */
  sessionOf: CallerSessionOf;
  /**
   * Shared cache for every replica (`REDIS_URL`): answers under `<redisPrefix>rc:`, changes heard
   * on the bus's channels under `<redisPrefix>bus:`. null: in this process's memory. @default null
   */
  redisUrl?: string | null;
  /** `REDIS_PREFIX` of the deployment. @default DEFAULT_REDIS_PREFIX */
  redisPrefix?: string;
  /** Answers kept in memory (least recently used go first). @default 10000 */
  maxEntries?: number;
  /** Characters of JSON kept in memory at most, all answers together (least recently used go first). @default 32 MiB */
  maxChars?: number;
  /**
   * Tenants whose latest change is remembered (to tell an answer read before a change), the least
   * recently changed or asked forgotten first. @default 10000
   */
  maxTenantGenerations?: number;
  /**
   * Clock of the answers' lifetimes, checked on every read besides the store's own expiry (tests
   * move the layer's time forward with it). @default Date.now
   */
  clock?: () => number;
  /**
   * The subgraphs answer every caller with the layer's service token (`OPENAPI_TOKEN` or the managed
   * token): the changes they announce name the service's tenant, never a caller's, so every change
   * drops every caller's answers. @default false
   */
  serviceToken?: boolean;
}

/** The response cache's plugins and what to close with the gateway. */
export interface LayerResponseCache {
  plugins: GatewayPlugin[];
  /** The caller's session its answers are kept under (`ResponseCacheOptions.sessionOf`). */
  sessionOf: CallerSessionOf;
  /**
   * The answer the cache holds for a query of `session` (`sessionOf`), under the key and with
   * the lifetimes the runtime's lookup uses, or null: for answering a hit before the runtime
   * (`cache-hits.ts`).
   */
  cachedAnswer(session: string, query: string, operationName: string | null | undefined, variables: Record<string, unknown> | null | undefined): Promise<ExecutionResult | null>;
  /** Drops every cached answer. */
  clear(): Promise<void>;
  /**
   * Whether the caller's answer to these parameters is in the cache now (read only: for the cost
   * plugin's estimate-only answers, `cost.ts`). False over graphql-ws (nothing is cached there).
   */
  holds(ctx: { request?: unknown; params?: YogaContext['params'] }): Promise<boolean>;
  close(): Promise<void>;
}

/** The synthetic entity tagging each answer with its tenant (for per-tenant invalidation). */
const TENANT_ENTITY = '_tenant';
/** Marks a result that is another operation's answer, shared in flight (read by `cost.ts`). */
export const SHARED_IN_FLIGHT = Symbol.for('openapi-supergraph.sharedInFlight');
/** Yoga's mark of an answer served from its response cache. */
export const SERVED_FROM_RESPONSE_CACHE = Symbol.for('servedFromResponseCache');

/** Marks an answer whose tenant changed while it was being computed: neither stored nor shared. */
const STALE = Symbol.for('openapi-supergraph.staleAnswer');

/**
 * Milliseconds each field (`Type.field`) may be cached, from the subgraphs serving it
 * (`@join__field(graph:)`, else its type's `@join__type(graph:)`): the shortest of theirs.
 */
export function ttlPerSchemaCoordinate(supergraph: string, ttlBySubgraph: Readonly<Record<string, number>>): Record<string, number> {
  const doc = parse(supergraph);
  // join__Graph enum values → subgraph names.
  const names = new Map<string, string>();
  for (const def of doc.definitions) {
    if (def.kind !== Kind.ENUM_TYPE_DEFINITION || def.name.value !== 'join__Graph') continue;
    for (const v of def.values ?? []) {
      const arg = v.directives?.find((d) => d.name.value === 'join__graph')?.arguments?.find((a) => a.name.value === 'name');
      if (arg?.value.kind === Kind.STRING) names.set(v.name.value, arg.value.value);
    }
  }
  const graphsOf = (directives: readonly ConstDirectiveNode[] | undefined, directive: string): string[] =>
    (directives ?? [])
      .filter((d) => d.name.value === directive)
      .flatMap((d) => {
        const g = d.arguments?.find((a) => a.name.value === 'graph')?.value;
        return g?.kind === Kind.ENUM ? [names.get(g.value) ?? g.value.toLowerCase()] : [];
      });
  const ttlOf = (graphs: string[]): number => Math.min(...graphs.map((g) => (ttlBySubgraph[g] ?? 0) * 1000));
  const out: Record<string, number> = {};
  for (const def of doc.definitions) {
    if (def.kind !== Kind.OBJECT_TYPE_DEFINITION && def.kind !== Kind.OBJECT_TYPE_EXTENSION) continue;
    const type = def as ObjectTypeDefinitionNode;
    const typeGraphs = graphsOf(type.directives, 'join__type');
    for (const field of type.fields ?? []) {
      const fieldGraphs = graphsOf(field.directives, 'join__field');
      const graphs = fieldGraphs.length > 0 ? fieldGraphs : typeGraphs;
      if (graphs.length > 0) out[`${type.name.value}.${field.name.value}`] = ttlOf(graphs);
    }
  }
  return out;
}

interface CostLike {
  upstreamCalls?: number;
  staleHits?: number;
  atRisk?: number;
  executed?: boolean;
}

/** Whether an executed answer may be kept: no errors, a cost that was all paid and fresh. */
export function cacheable(result: ExecutionResult): boolean {
  if (result.errors && result.errors.length > 0) return false;
  const cost = result.extensions?.cost as CostLike | undefined;
  if (typeof cost !== 'object' || cost === null || (result as { [STALE]?: boolean })[STALE]) return false;
  return cost.executed !== false && (cost.staleHits ?? 0) === 0 && (cost.atRisk ?? 0) === 0;
}

/**
 * A cache whose answers are tagged with their tenant (the key's first segment), so a tenant's go at
 * once, and whose answers expire on `clock` too (an answer read past its lifetime is a miss).
 */
function tenantTagged(inner: Cache, clock: () => number, maxEntries: number): Cache {
  const expiries = new LRUCache<string, number>(entriesAtMost(maxEntries));
  return {
    get: (key) => {
      // Kept until the next `set`: every read of an expired answer misses (yoga's and envelop's).
      const until = expiries.get(key);
      if (until !== undefined && clock() >= until) return null;
      return inner.get(key);
    },
    set: (key, result, entities, ttl) => {
      if (Number.isFinite(ttl)) expiries.set(key, clock() + ttl);
      return inner.set(key, withoutTraceId(result), [...entities, { typename: TENANT_ENTITY, id: tenantOfSession(key.slice(0, key.indexOf(':'))) }], ttl);
    },
    invalidate: (entities) => inner.invalidate(entities),
  };
}

export interface YogaContext {
  request?: Request;
  params?: { query?: string; operationName?: string | null; variables?: Record<string, unknown> | null; extensions?: Record<string, unknown> };
}

export function createResponseCache(opts: ResponseCacheOptions): LayerResponseCache {
  const prefix = opts.redisPrefix ?? DEFAULT_REDIS_PREFIX;
  const redis = opts.redisUrl ? connectRedis(opts.redisUrl, { prefix: `${prefix}rc:`, name: 'response-cache' }) : null;
  const ttls = { ...ttlPerSchemaCoordinate(opts.supergraph, opts.policy.ttlBySubgraph), ...Object.fromEntries(opts.policy.neverCached.map((f) => [f, 0])) };
  const inner: Cache = redis
    ? expiringIndex(createRedisCache({ redis: redis as never }), redis, Math.max(1, ...Object.values(ttls)))
    : boundedInMemory(opts.maxEntries ?? 10_000, opts.maxChars ?? 32 * 1024 * 1024);
  const cache = tenantTagged(inner, opts.clock ?? Date.now, opts.maxEntries ?? 10_000);
  const invalidateTenant = (tenant: string) => cache.invalidate([{ typename: TENANT_ENTITY, id: tenant }]);
  const clear = async (): Promise<void> => {
    if (redis) await unlinkMatching(redis);
    else await cache.invalidate([{ typename: TENANT_ENTITY }]);
  };
  /**
   * Generations of each tenant's answers, bumped by every change of the tenant (`everyone` by every
   * change at all): an answer whose generation moved while it was computed was read before the
   * change, so it is neither stored nor shared (`STALE`).
   */
  //
  // A tenant's generation is the number of the latest change (of any tenant) that was its own, kept
  // for the `maxTenantGenerations` tenants changed or asked most recently. Forgetting one is safe: a
  // tenant not kept reads as the highest number forgotten, so its generation only ever moves up (an
  // answer computed across the eviction is marked `STALE`, neither stored nor shared: one miss more),
  // never back to a value an answer started under before a change.
  let changes = 0;
  let forgottenUpTo = 0;
  const generations = new LRUCache<string, number>({
    ...entriesAtMost(opts.maxTenantGenerations ?? 10_000),
    dispose: (n, _tenant, reason) => {
      if (reason === 'evict') forgottenUpTo = Math.max(forgottenUpTo, n);
    },
  });
  const generationNumber = (tenant: string): number => generations.get(tenant) ?? forgottenUpTo;
  let everyone = 0;
  const generationOf = (tenant: string): string => `${everyone}.${generationNumber(tenant)}.${generationNumber(ANONYMOUS)}`;
  const inFlight = new Map<string, { tenant: string; answer: Promise<ExecutionResult | null> }>();
  /**
   * A change of `tenant` (null: unknown; every tenant with a service token): its answers and the
   * anonymous callers' go (those use the layer's own token, whose tenant the gateway cannot tell),
   * and so do its operations in flight (later callers run their own).
   */
  const forget = async (tenant: string | null): Promise<void> => {
    const all = opts.serviceToken === true;
    if (all) everyone++;
    for (const t of [tenant, ANONYMOUS]) if (t) generations.set(t, ++changes);
    for (const [key, flight] of inFlight) if (all || flight.tenant === tenant || flight.tenant === ANONYMOUS) inFlight.delete(key);
    try {
      if (all) await cache.invalidate([{ typename: TENANT_ENTITY }]);
      else await Promise.all([tenant ? invalidateTenant(tenant) : undefined, invalidateTenant(ANONYMOUS)]);
    } catch (err) {
      log.error({ area: 'response-cache', err }, 'invalidation failed');
    }
  };

  const stopListening = onLayerChange((change) => {
    if (change.kind === 'cleared') void clear().catch((err: unknown) => log.error({ area: 'response-cache', err }, 'clear failed'));
    else void forget(tenantOfTopic(change.topic));
  });
  // Other replicas' changes: every kit topic's channel on the bus (`tracking/redis-bus.ts`).
  let sub: Redis | null = null;
  if (opts.redisUrl) {
    sub = connectRedis(opts.redisUrl, { prefix, name: 'response-cache-sub', commandTimeoutMs: 0 });
    const channels = channelOf(sub, 'bus:');
    sub.on('pmessage', (_p: string, channel: string) => void forget(tenantOfTopic(channel.slice(channels.length))));
    void sub.psubscribe(`${channels}*`).catch((err: unknown) => log.error({ area: 'response-cache', err }, 'bus subscription failed'));
  }

  /**
   * Requests never served from nor stored in the cache: asking for the estimate alone (header or
   * request extension), or without a document's text (a persisted operation's hash arrives resolved to its
   * text by the runtime's persisted-documents plugin, which runs first, and is cached as that text).
   */
  const uncacheable = new WeakSet<Request>();
  const markUncacheable: GatewayPlugin = {
    onParams({ params, request }) {
      // graphql-ws messages come with no Fetch request: nothing to mark (nothing over WS is cached).
      if (!isFetchRequest(request)) return;
      if (wantsEstimateOnly({ request, params: params as { extensions?: Record<string, unknown> } }) || !params.query) uncacheable.add(request);
    },
  };

  // Synchronous SHA-256 (node:crypto), not WebCrypto's promise: one less turn per request. The
  // session comes first: the answer's tenant tag (`tenantTagged`).
  const keyOf = (sessionId: string | null | undefined, documentString: string, operationName: string | null | undefined, variableValues: unknown): string =>
    `${sessionId ?? ANONYMOUS}:${keyHash(documentString, operationName ?? '', stableJson(variableValues ?? {}))}`;
  const responseCache = useResponseCache<Record<string, unknown>>({
    cache,
    session: (request) => (isFetchRequest(request) ? opts.sessionOf(request) : null),
    // Over graphql-ws (no Fetch request) nothing is cached; nor what `markUncacheable` marks.
    enabled: (request) => isFetchRequest(request) && !uncacheable.has(request),
    buildResponseCacheKey: ({ documentString, variableValues, operationName, sessionId }) => keyOf(sessionId, documentString, operationName, variableValues),
    ttl: 0,
    ttlPerSchemaCoordinate: ttls,
    idFields: [],
    invalidateViaMutation: false,
    includeExtensionMetadata: false,
    shouldCacheResult: ({ result }) => cacheable(result),
  }) as GatewayPlugin;

  // Identical queries of one tenant in flight at once: the first runs, the others take its final
  // answer as soon as their parameters are read, before any parsing, validation, estimate or plan
  // of their own (the per-request work that made the last of a burst wait long after the call).
  const leaders = new WeakMap<Request, { key: string; settle: (r: ExecutionResult | null) => void; answer: Promise<ExecutionResult | null> }>();
  /** Each query's tenant and generation when it started (`STALE` when they moved). */
  const started = new WeakMap<Request, { tenant: string; generation: string }>();
  const operationTypes = new LRUCache<string, string>(entriesAtMost(1_000));
  /** `query`, `mutation` or `subscription` of the operation a document names ('' when it cannot tell). */
  const operationTypeOf = (query: string, operationName: string | null | undefined): string => {
    const key = keyHash(operationName ?? '', query);
    let type = operationTypes.get(key);
    if (type === undefined) {
      try {
        type = getOperationAST(parseBounded(query), operationName ?? undefined)?.operation ?? '';
      } catch {
        type = '';
      }
      operationTypes.set(key, type);
    }
    return type;
  };
  const shareInFlight: GatewayPlugin = {
    onParams({ params, request, setResult }) {
      // Subscriptions and operations over graphql-ws have no Fetch request and are never shared.
      if (!isFetchRequest(request)) return;
      if (!params.query || uncacheable.has(request) || operationTypeOf(params.query, params.operationName) !== 'query') return;
      const session = opts.sessionOf(request);
      const tenant = tenantOfSession(session);
      started.set(request, { tenant, generation: generationOf(tenant) });
      const key = `${session}|${keyHash(params.operationName ?? '', params.query, stableJson(params.variables ?? {}))}`;
      const leader = inFlight.get(key);
      if (leader) {
        return leader.answer.then((result) => {
          if (result) setResult({ ...result, [SHARED_IN_FLIGHT]: true } as ExecutionResult);
        });
      }
      let settle!: (r: ExecutionResult | null) => void;
      const answer = new Promise<ExecutionResult | null>((resolve) => (settle = resolve));
      inFlight.set(key, { tenant, answer });
      leaders.set(request, { key, settle, answer });
    },
    // The leader's final answer (its cost already added), whichever way it ended.
    // A leader whose tenant changed meanwhile shares nothing: its joiners run on their own.
    onResultProcess({ request, result }) {
      const leader = leaders.get(request);
      if (!leader) return;
      leaders.delete(request);
      if (inFlight.get(leader.key)?.answer === leader.answer) inFlight.delete(leader.key);
      const single = Array.isArray(result) || Symbol.asyncIterator in result ? null : (result as ExecutionResult);
      leader.settle(single && !(single as { [STALE]?: boolean })[STALE] ? withoutTraceId(single) : null);
    },
    onExecute({ args }) {
      const ctx = args.contextValue as YogaContext;
      if (getOperationAST(args.document as DocumentNode, args.operationName as string | null | undefined)?.operation === OperationTypeNode.MUTATION) {
        // A mutation (over HTTP or graphql-ws) drops its caller's answers, awaited: the caller's
        // next read sees its change.
        const tenant = tenantOfSession(opts.sessionOf(ctx));
        return {
          onExecuteDone: () => forget(tenant === ANONYMOUS ? null : tenant),
        };
      }
      if (!isFetchRequest(ctx.request)) return;
      const request = ctx.request;
      // Runs before the response cache's own `onExecuteDone` (envelop adds it right after its yoga
      // plugin, which comes after this one): an answer read before a change of its tenant is marked,
      // so it is not stored.
      return {
        onExecuteDone({ result }) {
          const start = started.get(request);
          if (start && start.generation !== generationOf(start.tenant) && !(Symbol.asyncIterator in result)) {
            (result as { [STALE]?: boolean })[STALE] = true;
          }
        },
      };
    },
  };

  return {
    plugins: [markUncacheable, shareInFlight, httpOnly(responseCache)],
    sessionOf: opts.sessionOf,
    async cachedAnswer(session, query, operationName, variables) {
      return (await cache.get(keyOf(session, query, operationName, variables))) ?? null;
    },
    clear,
    async holds(ctx) {
      const { request, params } = ctx;
      if (!isFetchRequest(request) || !params?.query) return false;
      const key = `${opts.sessionOf(request)}:${keyHash(params.query, params.operationName ?? '', stableJson(params.variables ?? {}))}`;
      return (await cache.get(key)) != null;
    },
    async close() {
      stopListening();
      if (sub) await closeRedis(sub);
      if (redis) await closeRedis(redis);
    },
  };
}

/**
 * envelop's Redis cache indexes answers in sets (per typename, per `typename:id` such as each
 * tenant's `_tenant:<tenant>`, and per answer) that it never expires: a tenant without changes
 * would grow its sets for ever. Each set it writes to expires `longestMs` (the longest lifetime of
 * any answer) after its latest addition, so it outlives every answer it names.
 */
function expiringIndex(inner: Cache, redis: Redis, longestMs: number): Cache {
  return {
    ...inner,
    async set(id, result, entities, ttl) {
      const list = [...entities];
      await inner.set(id, result, list, ttl);
      const keys = new Set<string>([`operations:${id}`]);
      for (const { typename, id: eid } of list) {
        keys.add(typename);
        if (eid) keys.add(`${typename}:${String(eid)}`);
      }
      const pipeline = redis.pipeline();
      for (const key of keys) pipeline.pexpire(key, longestMs);
      await pipeline.exec();
    },
  };
}

/**
 * Answers in this process's memory, bounded by their count and their JSON's length together (the
 * yoga plugin's in-memory cache counts entries only, so a few large answers could hold any amount),
 * with the entity index `invalidate` reads (typename, or typename and id).
 */
function boundedInMemory(maxEntries: number, maxChars: number): Cache {
  const byEntity = new Map<string, Set<string>>();
  const entitiesOf = new Map<string, string[]>();
  const unindex = (id: string): void => {
    for (const e of entitiesOf.get(id) ?? []) {
      const ids = byEntity.get(e);
      ids?.delete(id);
      if (ids?.size === 0) byEntity.delete(e);
    }
    entitiesOf.delete(id);
  };
  const answers = new LRUCache<string, { result: ExecutionResult; size: number }>({
    max: maxEntries,
    maxSize: maxChars,
    sizeCalculation: (v) => Math.max(1, v.size),
    dispose: (_v, id, reason) => {
      if (reason !== 'set') unindex(id);
    },
  });
  const entityKey = (typename: string, id?: number | string): string => (id === undefined ? typename : `${typename}:${String(id)}`);
  return {
    set(id, result, entities, ttl) {
      const size = JSON.stringify(result).length;
      if (size > maxChars) return;
      unindex(id);
      answers.set(id, { result, size }, Number.isFinite(ttl) ? { ttl } : {});
      const keys = new Set<string>();
      for (const { typename, id: eid } of entities) {
        keys.add(typename);
        if (eid !== undefined) keys.add(entityKey(typename, eid));
      }
      entitiesOf.set(id, [...keys]);
      for (const k of keys) {
        let ids = byEntity.get(k);
        if (!ids) byEntity.set(k, (ids = new Set()));
        ids.add(id);
      }
    },
    get: (id) => answers.get(id)?.result ?? null,
    invalidate(entities) {
      for (const { typename, id } of entities) for (const answer of [...(byEntity.get(entityKey(typename, id)) ?? [])]) answers.delete(answer);
    },
  };
}

/**
 * An answer as stored or shared: without the `extensions.traceId` of the operation that computed
 * it (each answer's own is added per request, `tracing.ts`).
 */
function withoutTraceId(result: ExecutionResult): ExecutionResult {
  if (!result.extensions || !('traceId' in result.extensions)) return result;
  const extensions = { ...result.extensions };
  delete extensions.traceId;
  return { ...result, extensions };
}

/**
 * The yoga response-cache plugin, adapted:
 * - its `onParams` keys a WeakMap by the Fetch request whatever `enabled` says; graphql-ws
 *   operations have none, so that would throw and close every subscription (4500): it runs for
 *   Fetch requests only (its other hooks ask `enabled` first);
 * - its ETag/304 answers go: its `onRequest` answered 304 to any live `If-None-Match` without
 *   checking the caller or the query, and its ETag was the cache key (showing the tenant's hash).
 *   Answers carry neither `ETag` nor `Last-Modified`, and `If-None-Match` is ignored.
 */
function httpOnly(plugin: GatewayPlugin): GatewayPlugin {
  const { onParams, ...rest } = plugin;
  delete rest.onRequest;
  return {
    ...rest,
    ...(onParams ? { onParams: (payload: Parameters<typeof onParams>[0]) => (isFetchRequest(payload.request) ? onParams(payload) : undefined) } : {}),
    onResponse({ response }) {
      response.headers.delete('etag');
      response.headers.delete('last-modified');
    },
  };
}
