/**
 * Serves subgraphs: one HTTP server, each subgraph at `/<name>/graphql` (GraphQL over HTTP and
 * graphql-ws), plus the subgraph's own HTTP routes under `/<name>/…` (e.g. callback ingress).
 * Builds the request context (upstream auth, cost meter, per-request memo) and puts the operation's
 * cost in `extensions.cost`.
 */
import { createServer, type IncomingMessage, type ServerResponse, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { buildSubgraphSchema } from '@apollo/subgraph';
import type { GraphQLResolverMap } from '@apollo/subgraph/dist/schema-helper/resolverMap.js';
import { GraphQLError, print, type DocumentNode, type ExecutionResult, type GraphQLSchema } from 'graphql';
import { LRUCache } from 'lru-cache';
import { createYoga, type Plugin } from 'graphql-yoga';
import { WebSocketServer } from 'ws';
import { useServer } from 'graphql-ws/use/ws';
import { randomUUID } from 'node:crypto';
import { CostMeter } from '../upstream/cost.ts';
import { MemoryCostLedger, type CostLedger } from '../upstream/ledger.ts';
import { ESTIMATE_HEADER, OPERATION_HEADER, OPERATION_ID, SCOPES_HEADER, scopesFromHeader } from './operation.ts';
import type { Upstream } from '../upstream/upstream.ts';
import { tenantOf } from '../upstream/tenant.ts';
import { workTokensOf, type WorkTokens } from '../upstream/work-tokens.ts';
import type { SubgraphContext, UpstreamAuth } from './context.ts';
import { authorizationOfParams, malformedCredentialError, parseAuthorization } from './credentials.ts';
import { toClientError } from './errors.ts';
import { ServerLife, DEFAULT_SHUTDOWN_TIMEOUT_MS, type DrainResult, type ReadinessCheck } from '../../platform/health.ts';
import { METRICS_PATH, metricsText } from '../../platform/metrics.ts';
import { useIncomingTrace } from '../../platform/tracing.ts';
import { log, useRequestLogContext, withOperationLogContext } from '../../platform/log.ts';
import { requestListener } from '../../platform/http.ts';
import { guardGraphQLRequest, guardGraphQLWebSocket } from './graphql-request.ts';
import { DEFAULT_JSON_LIMITS, maxTotalBytes, type JsonLimits } from '../../platform/json-limits.ts';

/** What a subgraph module exports. */
export interface Subgraph {
  name: string;
  typeDefs: DocumentNode;
  resolvers: object;
  /**
   * Extra HTTP routes under `/<name>/`; answers true when it handled the request.
   * `path` is the part after `/<name>`.
   */
  http?: (req: IncomingMessage, res: ServerResponse, path: string) => Promise<boolean>;
  /** Called once the server listens; returns a stopper. */
  start?: (deps: SubgraphDeps) => Promise<(() => Promise<void>) | void>;
}

/** What a subgraph's `start` receives. */
export interface SubgraphDeps {
  upstream: Upstream;
  /** The gateway's public URL (for callback and download URLs), known once the gateway listens. */
  publicUrl: () => string;
  /** The shared ledger, for paid work a subgraph carries out on its own (e.g. a queue resumed after a restart). */
  ledger?: CostLedger;
  /**
   * The token background work keeps and later calls with (pollers, callback re-reads, bulk
   * sendings): the layer's own token as a marker resolved at call time. @default pass-through (kept as is)
   */
  tokens?: WorkTokens;
}

export interface SubgraphServerOptions {
  subgraphs: Subgraph[];
  upstream: Upstream;
  /** Where every operation's and tenant's spending is committed. @default a new in-memory ledger */
  ledger?: CostLedger;
  /** How the upstream token of a request is chosen. */
  auth: AuthPolicy;
  /** @see SubgraphDeps.publicUrl */
  publicUrl: () => string;
  /** @see SubgraphDeps.tokens @default the policy's fixed service token as the layer's, else pass-through */
  tokens?: WorkTokens;
  port?: number;
  host?: string;
  /** What `/readyz` checks (e.g. Redis answering PING when configured); closed with the server. @default [] */
  readiness?: ReadinessCheck[];
  /**
   * Bounds of a GraphQL request over HTTP and graphql-ws, enforced as it is read (see
   * `graphql-request.ts`). @default subgraphRequestLimits(DEFAULT_JSON_LIMITS)
   */
  requestLimits?: JsonLimits;
}

/**
 * A subgraph's bounds from the gateway's: the gateway's own requests carry what a client sent plus
 * the representations of entity fetches (a list's keys), so they may hold more values, and sit one
 * level deeper (`representations` in the variables).
 */
export const subgraphRequestLimits = (gateway: JsonLimits): JsonLimits => ({
  ...gateway,
  maxBytes: gateway.maxBytes * 4,
  maxValues: gateway.maxValues * 10,
  maxDepth: gateway.maxDepth + 2,
});

export interface RunningSubgraphs {
  url: string;
  /** GraphQL URL of one subgraph. */
  graphqlUrl(name: string): string;
  /**
   * Answers a GraphQL request to one subgraph in this process, as its HTTP server would at
   * `graphqlUrl(name)` (the gateway of the one-process stack calls it instead of loopback HTTP).
   */
  fetch(name: string): (url: string, init: RequestInit) => Response | Promise<Response>;
  /**
   * Executes a query or mutation of one subgraph in this process as its GraphQL server would answer
   * it (the same context from the same headers, the same plugins: cost extension, masked errors, log
   * context), without a Fetch request, JSON bodies or the server's HTTP pipeline: the gateway of the
   * one-process stack hands its query plan's documents here (`gateway/in-process.ts`).
   */
  execute(name: string): InProcessExecute;
  schemas: Map<string, GraphQLSchema>;
  close(): Promise<void>;
  /**
   * Graceful stop (SIGTERM): `/readyz` 503 at once, no new connection, in-flight requests finish,
   * WebSocket subscriptions are closed with 1001 and SSE streams ended, without `complete` (the
   * gateway reconnects and resubscribes), bounded by `timeoutMs` (`clean` false when cut short),
   * then as `close`. @default timeoutMs DEFAULT_SHUTDOWN_TIMEOUT_MS
   */
  shutdown(timeoutMs?: number): Promise<DrainResult>;
}

/** A subgraph request handed over in process: a document of the gateway's plan and the headers it would have sent. */
export interface InProcessRequest {
  document: DocumentNode;
  variables?: Record<string, unknown>;
  operationName?: string;
  headers: Record<string, string>;
}
export type InProcessExecute = (request: InProcessRequest) => Promise<ExecutionResult>;

/** What `InProcessExecute` uses of a yoga server's enveloped functions (its plugins applied). */
interface Enveloped {
  schema: GraphQLSchema;
  validate(schema: GraphQLSchema, document: DocumentNode): readonly GraphQLError[] | undefined;
  contextFactory(): Promise<Record<string, unknown>>;
  execute(args: {
    schema: GraphQLSchema;
    document: DocumentNode;
    variableValues?: Record<string, unknown>;
    operationName?: string;
    contextValue: Record<string, unknown>;
  }): Promise<ExecutionResult>;
}

/**
 * Which token pays upstream. With a service token (`OPENAPI_TOKEN`) every call uses it, whatever
 * the caller sends (its `Authorization` may be meant for the gateway). Without one, the caller's
 * `Authorization: Bearer <token>` is passed through; a caller that sends none gets `fallbackToken`
 * (the embedded emulator's account), or no token and so `UNAUTHENTICATED`. A credential that is
 * present but malformed (`Basic …`, a bare token, an empty `Bearer`, …) is refused with
 * `UNAUTHENTICATED`: it never falls back to another account.
 */
export interface AuthPolicy {
  /** A fixed service token, or the current one of a managed token (`upstream/service-token.ts`). */
  serviceToken: string | null | (() => string);
  /** The tenant of a managed token (stable across its renewals); a fixed token's is derived from it. */
  serviceTenant?: string;
  fallbackToken?: string | null;
}

/**
 * The upstream auth of a request. `authorization` is the caller's `Authorization` value, or a
 * function reading it (not called with a service token, so nothing the caller sends is checked).
 * Throws the `UNAUTHENTICATED` GraphQL error when the credential is malformed.
 */
export function resolveAuth(authorization: string | null | undefined | (() => string | null | undefined), policy: AuthPolicy): UpstreamAuth {
  if (policy.serviceToken) {
    const token = typeof policy.serviceToken === 'function' ? policy.serviceToken() : policy.serviceToken;
    return { token, tenant: policy.serviceTenant ?? tenantOf(token), shared: true };
  }
  const credential = parseAuthorization(typeof authorization === 'function' ? authorization() : authorization);
  if (credential.kind === 'malformed') throw malformedCredentialError('Authorization', credential.what);
  const token = credential.kind === 'bearer' ? credential.token : (policy.fallbackToken ?? '');
  return { token, tenant: token ? tenantOf(token) : 'anonymous', shared: credential.kind !== 'bearer' };
}

/**
 * The request context. `operationId` is the client operation the gateway runs this request for
 * (`x-openapi-operation`): every subgraph request of one operation charges the same entry of the
 * shared `ledger`, so one budget holds across the query plan. Without one (a direct call, a
 * subscription event) the request is its own operation.
 */
export function createContext(
  auth: UpstreamAuth,
  upstream: Upstream,
  ledger: CostLedger,
  operationId: string | null = null,
  estimate: string | null = null,
  scopes: string | null = null,
): SubgraphContext {
  const euro = estimate === null ? NaN : Number(estimate);
  const memo = new Map<string, unknown>();
  const { maxEuroPerOperation, maxEuroPerDay } = upstream.config;
  return {
    auth,
    meter: new CostMeter({
      ledger,
      account: { operationId: operationId && OPERATION_ID.test(operationId) ? operationId : randomUUID(), tenant: auth.tenant },
      limits: { operation: maxEuroPerOperation, day: maxEuroPerDay },
      estimate: Number.isFinite(euro) && euro >= 0 ? euro : null,
      scopes: scopesFromHeader(scopes),
    }),
    upstream,
    once<T>(key: string, make: () => T): T {
      if (!memo.has(key)) memo.set(key, make());
      return memo.get(key) as T;
    },
  };
}

/** Puts the operation's cost into `extensions.cost` (single results; streams carry none). */
const useCostExtension = (): Plugin<SubgraphContext> => ({
  onExecute({ args }) {
    const ctx = args.contextValue as SubgraphContext;
    return {
      onExecuteDone({ result, setResult }) {
        if (Symbol.asyncIterator in result) return;
        return ctx.meter.report().then((cost) => setResult({ ...result, extensions: { ...(result.extensions ?? {}), cost } }));
      },
    };
  },
});

/** Upstream failures become typed errors; our own coded errors pass; anything else is masked. */
function maskError(error: unknown, message: string): Error {
  if (error instanceof GraphQLError) {
    const mapped = toClientError(error, error.path);
    if (mapped) return mapped;
    if (!error.originalError || error.originalError instanceof GraphQLError) return error;
    if (error.extensions?.code) return error;
    log.error({ err: error.originalError }, '[subgraph] unexpected error');
    return new GraphQLError(message, { path: error.path, extensions: { code: 'INTERNAL_SERVER_ERROR' } });
  }
  const mapped = toClientError(error);
  if (mapped) return mapped;
  log.error({ err: error }, '[subgraph] unexpected error');
  return new GraphQLError(message, { extensions: { code: 'INTERNAL_SERVER_ERROR' } });
}

function authorizationOf(params: Record<string, unknown> | undefined, req: IncomingMessage): string | null {
  return authorizationOfParams(params) ?? req.headers.authorization ?? null;
}

export async function startSubgraphServer(opts: SubgraphServerOptions): Promise<RunningSubgraphs> {
  const { upstream, auth } = opts;
  const ledger = opts.ledger ?? new MemoryCostLedger();
  const tokens = opts.tokens ?? workTokensOf(null, auth.serviceToken);
  const schemas = new Map<string, GraphQLSchema>();
  const yogas = new Map<string, ReturnType<typeof createYoga<Record<string, unknown>, SubgraphContext>>>();
  const sockets = new Map<string, WebSocketServer>();
  const disposers: Array<() => unknown> = [];
  // Liveness, readiness and graceful drain (see health.ts).
  const life = new ServerLife(opts.readiness, 'subgraph');
  const requestLimits = opts.requestLimits ?? subgraphRequestLimits(DEFAULT_JSON_LIMITS);

  for (const sg of opts.subgraphs) {
    const schema = buildSubgraphSchema({ typeDefs: sg.typeDefs, resolvers: sg.resolvers as GraphQLResolverMap<unknown> });
    schemas.set(sg.name, schema);
    yogas.set(
      sg.name,
      createYoga<Record<string, unknown>, SubgraphContext>({
        schema,
        graphqlEndpoint: `/${sg.name}/graphql`,
        // GraphQL multipart uploads are not used (files travel as base64 in variables, bounded by the request guard); yoga would JSON.parse a multipart `operations` field unbounded.
        multipart: false,
        graphiql: false,
        landingPage: false,
        logging: false,
        maskedErrors: { maskError },
        context: ({ request }) => ({
          ...createContext(
            resolveAuth(request.headers.get('authorization'), auth),
            upstream,
            ledger,
            request.headers.get(OPERATION_HEADER),
            request.headers.get(ESTIMATE_HEADER),
            request.headers.get(SCOPES_HEADER),
          ),
          headers: request.headers,
        }),
        plugins: [useIncomingTrace<Record<string, unknown>>(sg.name), useRequestLogContext<Record<string, unknown>>(OPERATION_HEADER), useCostExtension()],
      }),
    );
    const wss = new WebSocketServer({ noServer: true, maxPayload: maxTotalBytes(requestLimits) });
    // Before useServer: every message is scanned within the limits before graphql-ws parses it.
    guardGraphQLWebSocket(wss, requestLimits);
    sockets.set(`/${sg.name}/graphql`, wss);
    const ws = useServer<Record<string, unknown>>(
      {
        schema,
        context: (ctx) =>
          createContext(
            resolveAuth(() => authorizationOf(ctx.connectionParams, ctx.extra.request), auth),
            upstream,
            ledger,
          ),
        onConnect: (ctx) => {
          life.wsConnected(ctx);
        },
        onClose: (ctx) => life.wsClosed(ctx),
        onError: (_ctx, _id, _payload, errors) => {
          for (const e of errors) log.error({ err: e.message }, '[subgraph ws]');
        },
      },
      wss,
    );
    disposers.push(() => ws.dispose());
  }

  const server: Server = createServer(requestListener('subgraph', life, handle));

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = req.url ?? '/';
    const [, name = '', ...rest] = url.split('?')[0].split('/');
    const sg = opts.subgraphs.find((s) => s.name === name);
    if (await life.answer(url.split('?')[0], res)) return;
    if (url === METRICS_PATH) {
      const metrics = await metricsText();
      res.writeHead(200, { 'content-type': metrics.contentType }).end(metrics.body);
      return;
    }
    if (!sg) {
      res.writeHead(404).end();
      return;
    }
    const sub = `/${rest.join('/')}`;
    if (sub !== '/graphql' && sg.http && (await sg.http(req, res, sub))) return;
    // Every request yoga is handed is bounded first, whatever its path (yoga serves any URL ending in `/graphql`).
    if (await guardGraphQLRequest(req, res, requestLimits)) return;
    await yogas.get(name)!.handle(req, res);
  }

  server.on('upgrade', (req, socket, head) => {
    const wss = sockets.get((req.url ?? '').split('?')[0]);
    if (!wss) {
      socket.destroy();
      return;
    }
    wss.handleUpgrade(req, socket, head, (client) => wss.emit('connection', client, req));
  });

  await new Promise<void>((resolve) => server.listen(opts.port ?? 0, opts.host ?? '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const url = `http://${opts.host ?? '127.0.0.1'}:${port}`;

  for (const sg of opts.subgraphs) {
    const stop = await sg.start?.({ upstream, publicUrl: opts.publicUrl, ledger, tokens });
    if (stop) disposers.push(stop);
  }

  async function close(): Promise<void> {
    for (const d of disposers.reverse()) await d();
    for (const wss of sockets.values()) {
      for (const c of wss.clients) c.terminate();
      wss.close();
    }
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await Promise.all((opts.readiness ?? []).map(async (c) => c.close?.()));
  }

  return {
    url,
    graphqlUrl: (name) => `${url}/${name}/graphql`,
    fetch(name) {
      const yoga = yogas.get(name);
      if (!yoga) throw new Error(`no subgraph "${name}" in this server`);
      return (target, init) => yoga.fetch(target, init);
    },
    execute(name) {
      const yoga = yogas.get(name);
      if (!yoga) throw new Error(`no subgraph "${name}" in this server`);
      // The plan's documents are few but built anew per request: each text is validated once. A
      // query handed over whole (`useDirectQueries`) is the gateway's parsed document itself, the
      // same object each time: known by it, without printing it.
      const validated = new LRUCache<string, readonly GraphQLError[]>({ max: 1_000 });
      const validatedDocuments = new WeakMap<DocumentNode, readonly GraphQLError[]>();
      return (req) =>
        withOperationLogContext(req.headers[OPERATION_HEADER] ?? null, async (): Promise<ExecutionResult> => {
          // What the context and the plugins read of a request: its headers.
          const request = { headers: new Headers(req.headers) } as unknown as Request;
          const { schema, validate, contextFactory, execute } = yoga.getEnveloped({ request, params: { query: undefined } }) as unknown as Enveloped;
          let errors = validatedDocuments.get(req.document);
          if (errors === undefined) {
            const text = print(req.document);
            errors = validated.get(text) ?? validate(schema, req.document) ?? [];
            validated.set(text, errors);
            validatedDocuments.set(req.document, errors);
          }
          if (errors.length > 0) return { errors: [...errors] };
          let contextValue: Record<string, unknown>;
          try {
            contextValue = await contextFactory();
          } catch (err) {
            return { errors: [maskError(err, 'Unexpected error.') as GraphQLError] };
          }
          return execute({ schema, document: req.document, variableValues: req.variables, operationName: req.operationName, contextValue });
        });
    },
    schemas,
    close,
    async shutdown(timeoutMs = DEFAULT_SHUTDOWN_TIMEOUT_MS) {
      const drained = await life.drain(server, timeoutMs);
      await close();
      return drained;
    },
  };
}
