/**
 * The public edge: Hive Gateway runtime over the checked-in supergraph, GraphQL over HTTP, SSE and
 * graphql-ws at `/graphql`, offline GraphiQL with example operations, `/healthz`, and the extra
 * routes other areas mount (callback ingress, signed downloads). The caller's `Authorization` is
 * forwarded to the subgraphs (upstream pass-through).
 */
import { createServer, type IncomingMessage, type ServerResponse, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import { createGatewayRuntime, getGraphQLWSOptions, type GatewayRuntime } from '@graphql-hive/gateway-runtime';
import { WebSocketServer } from 'ws';
import { parse } from 'graphql';
import { useServer, type Extra } from 'graphql-ws/use/ws';
import { SUPERGRAPH_FILE } from './supergraph-file.ts';
import { normaliseAuthorization, useForwardAuthorization } from './authorization.ts';
import { useForwardedHeaders } from './forwarded-headers.ts';
import { callerSessions, credentialHeadersOf } from './caller-session.ts';
import { useCost, type CostPluginOptions } from './cost.ts';
import { useInputErrorCodes } from './input-errors.ts';
import { useDeferOnEntities } from './defer.ts';
import { useCsrfPrevention } from './csrf.ts';
import { EXAMPLES } from './examples.ts';
import { graphiqlRoute } from './graphiql.ts';
import { persistedOperations, type PersistedOperationsOptions } from './persisted.ts';
import { useCompression, type CompressionOptions } from './compression.ts';
import { createGatewayLogger, useLogContext } from './logger.ts';
import { useDocumentLimits } from './limits.ts';
import { httpCheck, ServerLife, DEFAULT_SHUTDOWN_TIMEOUT_MS, type DrainResult, type ReadinessCheck } from '../platform/health.ts';
import { useDirectQueries, useInProcessSubgraphs, type DirectSubgraph, type SubgraphFetch } from './in-process.ts';
import type { InProcessExecute } from '../subgraphs/runtime/server.ts';
import { useSubscriptionSharing, useWebSocketSharing, shareByOf } from './subscription-sharing.ts';
import { createResponseCache, type ResponseCacheOptions, cachePolicyOf } from './response-cache.ts';
import { metricsPlugins, OperationNames, sharingMetrics } from './metrics.ts';
import { tracingPlugins } from './tracing.ts';
import { hiveOpenTelemetryPlugin } from '../platform/tracing.ts';
import { cacheHitsAtTheEdge } from './cache-hits.ts';
import { requestListener } from '../platform/http.ts';
import type { GatewayArea } from '../subgraphs/runtime/area.ts';
import { guardGraphQLRequest, guardGraphQLWebSocket } from '../subgraphs/runtime/graphql-request.ts';
import { DEFAULT_JSON_LIMITS, maxTotalBytes, type JsonLimits } from '../platform/json-limits.ts';

/** An extra HTTP route of the gateway; answers true when it handled the request. */
export type GatewayRoute = (req: IncomingMessage, res: ServerResponse, path: string) => Promise<boolean>;

export interface GatewayOptions {
  /** GraphQL URL of each subgraph, by name. */
  subgraphUrls: Record<string, string>;
  /**
   * What the gateway reads of every area (`GATEWAY_AREAS` of the registry, `subgraphs/index.ts`, given
   * by the entry point): cache policies, shareable subscriptions, forwarded headers.
   */
  areas: readonly GatewayArea[];
  /** Subgraphs that serve subscriptions over graphql-ws at their GraphQL URL. */
  subscriptionSubgraphs?: string[];
  /**
   * Subgraphs running in this process, by name: their queries and mutations are handed to this
   * handler instead of going over HTTP to `subgraphUrls` (see `in-process.ts`). @default none (HTTP)
   */
  inProcess?: Record<string, SubgraphFetch>;
  /**
   * Subgraphs running in this process, by name: their queries and mutations are executed by them
   * directly, without HTTP on either side (see `in-process.ts`). @default none
   */
  inProcessExecutors?: Record<string, InProcessExecute>;
  /**
   * In-process subgraphs' own schemas: a query one of them answers whole goes to it without the
   * runtime's planning and delegation (`useDirectQueries`). @default none
   */
  directSubgraphs?: readonly DirectSubgraph[];
  /** @default 4000 */
  port?: number;
  /** @default '127.0.0.1' */
  host?: string;
  /** Supergraph SDL. @default the checked-in supergraph.graphql */
  supergraph?: string;
  routes?: GatewayRoute[];
  /**
   * Log level of the runtime (`GATEWAY_LOG_LEVEL`: trace, debug, info, warn, error, off).
   * Secrets are redacted at every level. @default 'error'
   */
  logLevel?: string;
  /** Literal secrets to redact from every log line (`OPENAPI_TOKEN`, `OPENAPI_APIKEY`, `LAYER_SECRET`). */
  logSecrets?: Array<string | undefined>;
  /** Pricing and budget of the cost estimate and ledger (see `cost.ts`). */
  cost: CostPluginOptions;
  /**
   * Browser origins allowed to call the gateway cross-origin (CORS, with credentials), exactly as
   * browsers send them in `Origin`: `scheme://host[:port]`. Any other origin gets no CORS header.
   * @default [] (no origin)
   */
  corsOrigins?: string[];
  /** Automatic persisted queries, trusted documents or neither (`persisted.ts`). @default APQ in memory */
  persisted?: PersistedOperationsOptions;
  /** Brotli/gzip of answers (`compression.ts`); false: none. @default answers of 1 KB and more */
  compression?: CompressionOptions | false;
  /**
   * Readiness conditions besides every subgraph answering its `/healthz` (e.g. Redis answering
   * PING when configured); `/readyz` answers 503 while one fails. Closed with the gateway.
   * @default []
   */
  readiness?: ReadinessCheck[];
  /**
   * Whole query answers cached per tenant and identical queries in flight shared
   * (`response-cache.ts`); false: neither. @default in memory
   */
  responseCache?: Omit<ResponseCacheOptions, 'supergraph' | 'policy' | 'sessionOf'> | false;
  /**
   * Bounds of a GraphQL request over HTTP and graphql-ws, enforced as it is read, before it is parsed
   * (`MAX_BODY_BYTES`, `MAX_UPLOAD_BYTES`, `MAX_JSON_DEPTH`, `MAX_JSON_VALUES`; see
   * `platform/json-limits.ts` and `subgraphs/runtime/graphql-request.ts`). @default DEFAULT_JSON_LIMITS
   */
  requestLimits?: JsonLimits;
}

export interface RunningGateway {
  url: string;
  graphqlUrl: string;
  wsUrl: string;
  runtime: GatewayRuntime;
  /** Stops at once: open sockets are cut. */
  close(): Promise<void>;
  /**
   * Graceful stop (SIGTERM): `/readyz` 503 at once, no new connection, in-flight requests finish,
   * WebSocket subscriptions are closed with 1001 and SSE streams ended (no `complete`: clients
   * reconnect to another replica); after `timeoutMs` what is left is cut (`clean` false). Then as
   * `close`. @default timeoutMs DEFAULT_SHUTDOWN_TIMEOUT_MS
   */
  shutdown(timeoutMs?: number): Promise<DrainResult>;
}

export async function startGateway(opts: GatewayOptions): Promise<RunningGateway> {
  const supergraph = opts.supergraph ?? readFileSync(SUPERGRAPH_FILE, 'utf8');
  const subscriptionSubgraphs = new Set(opts.subscriptionSubgraphs ?? []);
  const transportEntries = Object.fromEntries(
    Object.entries(opts.subgraphUrls).map(([name, location]) => [
      name,
      {
        location,
        options: {
          // Our upstream client de-duplicates per tenant and reports it in extensions.cost;
          // a second, silent de-duplication here would make 20 callers each report the one call.
          deduplicateInflightRequests: false,
          ...(subscriptionSubgraphs.has(name)
            ? {
                subscriptions: {
                  kind: 'ws',
                  location: new URL(location).pathname,
                  // The caller's token reaches the subgraph's graphql-ws context too (tenancy of subscriptions).
                  options: { connectionParams: { authorization: '{context.headers.authorization}' } },
                },
              }
            : {}),
        },
      },
    ]),
  );

  // Whose answer is whose: the caller's tenant and every credential the areas have forwarded (`caller-session.ts`).
  const sessionOf = callerSessions(credentialHeadersOf(opts.areas));
  const responseCache = opts.responseCache === false ? null : createResponseCache({ ...opts.responseCache, supergraph, policy: cachePolicyOf(opts.areas), sessionOf });
  // In-process subgraphs are found by the URL the transport fetches (its GraphQL URL).
  const inProcessHandlers = new Map(
    Object.entries(opts.inProcess ?? {}).flatMap(([name, handler]) => (opts.subgraphUrls[name] ? [[opts.subgraphUrls[name], handler] as const] : [])),
  );

  const persisted = persistedOperations(opts.persisted);
  const operationNames = new OperationNames();
  const runtime = createGatewayRuntime({
    // Parsed here without locations: given the text, the runtime builds its schema with a location
    // on every node (about 17,000 Token and Location objects, 2.6 MB kept for the process's life).
    supergraph: parse(supergraph, { noLocation: true }),
    transportEntries,
    graphqlEndpoint: '/graphql',
    landingPage: false,
    // CORS only for the listed origins; any other origin gets no CORS header at all (never credentials).
    cors: (request) => {
      const origin = request.headers.get('origin');
      return origin !== null && origin !== 'null' && (opts.corsOrigins ?? []).includes(origin) ? { origin: [origin], credentials: true, maxAge: 600 } : false;
    },
    logging: createGatewayLogger({ level: opts.logLevel, secrets: opts.logSecrets }),
    // GraphiQL is served by graphiqlRoute below (rendered and compressed once, not per visit).
    graphiql: false,
    persistedDocuments: persisted.persistedDocuments,
    // `@defer` and `@stream` (incremental delivery over multipart/mixed and SSE): docs/incremental-delivery.md.
    deferStream: true,
    plugins: (ctx) => [
      // CSRF: form posts, text/plain posts and GETs must carry a preflight-forcing header; the
      // refusal (403) names it (`csrf.ts`). JSON posts pass as they are.
      useCsrfPrevention(),
      useLogContext(),
      ...tracingPlugins(ctx),
      ...metricsPlugins(ctx.log, operationNames),
      useDocumentLimits(),
      useDeferOnEntities(supergraph),
      useForwardAuthorization(),
      useForwardedHeaders(opts.areas),
      useCost({ ...opts.cost, cachedAnswer: responseCache ? (c) => responseCache.holds(c) : undefined }),
      // Before the response cache: it wraps the execution this sets.
      ...(opts.directSubgraphs?.length ? [useDirectQueries({ subgraphs: opts.directSubgraphs, log: ctx.log })] : []),
      ...(responseCache?.plugins ?? []),
      useInputErrorCodes(),
      useInProcessSubgraphs({ handlers: inProcessHandlers, executors: new Map(Object.entries(opts.inProcessExecutors ?? {})), log: ctx.log }),
      useSubscriptionSharing({ shareBy: shareByOf(opts.areas), sessionOf }),
      ...persisted.plugins,
      ...(opts.compression === false ? [] : [useCompression(opts.compression)]),
    ],
  });

  // The runtime loads the supergraph lazily; graphql-ws subscriptions need it loaded first.
  await runtime.getSchema();

  const routes = [
    graphiqlRoute({
      examples: EXAMPLES,
      compress: opts.compression !== false,
      disabled: opts.persisted?.mode === 'trusted' ? 'GraphiQL is not served here: this gateway runs registered operations only (PERSISTED_OPERATIONS=trusted).\n' : undefined,
    }),
    ...(opts.routes ?? []),
  ];
  // Liveness, readiness (each subgraph's server reachable, plus the given checks) and graceful drain.
  const readinessChecks = [...Object.entries(opts.subgraphUrls).map(([name, url]) => httpCheck(`subgraph ${name}`, new URL('/healthz', url).href)), ...(opts.readiness ?? [])];
  const life = new ServerLife(readinessChecks, 'gateway');
  const requestLimits = opts.requestLimits ?? DEFAULT_JSON_LIMITS;
  // Response-cache hits answered before the runtime (`cache-hits.ts`); not when each answer names
  // its trace, nor where only registered documents run.
  const cacheHits =
    responseCache && !hiveOpenTelemetryPlugin() && opts.persisted?.mode !== 'trusted'
      ? cacheHitsAtTheEdge({ cache: responseCache, compression: opts.compression === false ? false : (opts.compression ?? {}), names: operationNames })
      : null;
  const server: Server = createServer(requestListener('gateway', life, dispatch));

  async function dispatch(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? '/').split('?')[0];
    if (await life.answer(path, res)) return;
    if (path === '/') {
      res.writeHead(302, { location: '/graphql' }).end();
      return;
    }
    for (const route of routes) if (await route(req, res, path)) return;
    // Bounded before the runtime reads or parses anything of it (it gets the body already parsed):
    // every request it is handed, whatever its path (the runtime also serves `/graphql/`, and any
    // URL ending in `/graphql`, query string included).
    if (await guardGraphQLRequest(req, res, requestLimits)) return;
    if (cacheHits && (await cacheHits(req, res))) return;
    // Typed `void` (Node's listener type); the adapter sends the answer and catches its own errors.
    runtime.requestListener(req, res);
  }

  // Browsers apply no CORS to WebSockets: a page on another site could open one and run mutations
  // with the service token. A connection that carries an Origin (every browser's does) must come
  // from the gateway's own origin (GraphiQL) or one of `corsOrigins`; other clients send none.
  const wss = new WebSocketServer({
    server,
    path: '/graphql',
    // A graphql-ws message is a document and its variables: the same bounds as a request over HTTP
    // (ws's default is 100 MiB); what is inside is scanned by guardGraphQLWebSocket below.
    maxPayload: maxTotalBytes(requestLimits),
    verifyClient: ({ origin, req }: { origin: string | undefined; req: IncomingMessage }) => websocketOriginAllowed(origin, req.headers.host, opts.corsOrigins ?? []),
  });
  // The runtime puts the subscribe payload in the context's `params` and the connection params in
  // `connectionParams` (merged into `headers`); returning `params` here would replace the payload.
  const wsOptions = getGraphQLWSOptions<Record<string, unknown>, Extra>(runtime, (ctx) => ({
    req: ctx.extra.request,
    socket: ctx.extra.socket,
  }));
  // graphql-ws subscribers of a running shared subscription get its events on their socket directly (`subscription-sharing.ts`).
  const sharing = useWebSocketSharing({ metrics: sharingMetrics(operationNames), shareBy: shareByOf(opts.areas), sessionOf });
  // Before useServer: every message is scanned within the limits before graphql-ws parses it.
  guardGraphQLWebSocket(wss, requestLimits);
  const ws = useServer(
    {
      ...wsOptions,
      subscribe: sharing.wrap(wsOptions.subscribe!),
      execute: sharing.wrap(wsOptions.execute!),
      onConnect: (ctx) => {
        if (ctx.connectionParams) normaliseAuthorization(ctx.connectionParams);
        life.wsConnected(ctx);
        return wsOptions.onConnect ? wsOptions.onConnect(ctx) : true;
      },
      onClose: (ctx) => life.wsClosed(ctx),
      // A document persisted operations refuse is answered with an `error` message (its code), not a throw (4500 closes the socket).
      onSubscribe: async (ctx, id, payload) => (await persisted.refused(payload)) ?? sharing.onSubscribe(ctx, id, payload, async () => wsOptions.onSubscribe?.(ctx, id, payload)),
    },
    wss,
  );

  await new Promise<void>((resolve) => server.listen(opts.port ?? 4000, opts.host ?? '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const host = opts.host ?? '127.0.0.1';
  const url = `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${port}`;
  async function close(): Promise<void> {
    await ws.dispose();
    for (const c of wss.clients) c.terminate();
    wss.close();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await runtime.dispose();
    await persisted.close();
    await responseCache?.close();
    await Promise.all(readinessChecks.map(async (c) => c.close?.()));
  }
  return {
    url,
    graphqlUrl: `${url}/graphql`,
    wsUrl: `${url.replace(/^http/, 'ws')}/graphql`,
    runtime,
    close,
    async shutdown(timeoutMs = DEFAULT_SHUTDOWN_TIMEOUT_MS) {
      const drained = await life.drain(server, timeoutMs);
      await close();
      return drained;
    },
  };
}

/** Whether a WebSocket handshake's `Origin` may connect (see `startGateway`). */
export function websocketOriginAllowed(origin: string | undefined, host: string | undefined, allowed: readonly string[]): boolean {
  if (origin === undefined || origin === '') return true;
  if (origin === 'null') return false;
  let parsed: URL;
  try {
    parsed = new URL(origin);
  } catch {
    return false;
  }
  if (host !== undefined && parsed.host === host) return true;
  return allowed.includes(parsed.origin);
}
