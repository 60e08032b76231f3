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
import { GraphQLError, type DocumentNode, type GraphQLSchema } from 'graphql';
import { createYoga, type Plugin } from 'graphql-yoga';
import { WebSocketServer } from 'ws';
import { useServer } from 'graphql-ws/use/ws';
import { CostMeter } from '../upstream/cost.ts';
import type { UpstreamClient } from '../upstream/client.ts';
import { tenantOf } from '../upstream/tenant.ts';
import type { SubgraphContext, UpstreamAuth } from './context.ts';
import { authorizationOfParams } from './credentials.ts';
import { toClientError } from './errors.ts';

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
  upstream: UpstreamClient;
  /** The gateway's public URL (for callback and download URLs), known once the gateway listens. */
  publicUrl: () => string;
}

export interface SubgraphServerOptions {
  subgraphs: Subgraph[];
  upstream: UpstreamClient;
  /** How the upstream token of a request is chosen. */
  auth: AuthPolicy;
  /** @see SubgraphDeps.publicUrl */
  publicUrl: () => string;
  port?: number;
  host?: string;
}

export interface RunningSubgraphs {
  url: string;
  /** GraphQL URL of one subgraph. */
  graphqlUrl(name: string): string;
  schemas: Map<string, GraphQLSchema>;
  close(): Promise<void>;
}

const BEARER = /^\s*Bearer\s+(\S+)\s*$/i;

/**
 * Which token pays upstream. With a service token (`OPENAPI_TOKEN`) every call uses it, whatever
 * the caller sends (its `Authorization` may be meant for the gateway). Without one, the caller's
 * `Authorization: Bearer` is passed through; a caller that sends none gets `fallbackToken` (the
 * embedded emulator's account), or no token and so `UNAUTHENTICATED`.
 */
export interface AuthPolicy {
  serviceToken: string | null;
  fallbackToken?: string | null;
}

export function resolveAuth(authorization: string | null | undefined, policy: AuthPolicy): UpstreamAuth {
  const m = authorization ? BEARER.exec(authorization) : null;
  const token = policy.serviceToken ?? m?.[1] ?? policy.fallbackToken ?? '';
  return { token, tenant: token ? tenantOf(token) : 'anonymous' };
}

export function createContext(auth: UpstreamAuth, upstream: UpstreamClient): SubgraphContext {
  const memo = new Map<string, unknown>();
  return {
    auth,
    meter: new CostMeter(upstream.config.maxEuroPerOperation),
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
        setResult({ ...result, extensions: { ...(result.extensions ?? {}), cost: ctx.meter.summary() } });
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
    console.error('[subgraph] unexpected error', error.originalError);
    return new GraphQLError(message, { path: error.path, extensions: { code: 'INTERNAL_SERVER_ERROR' } });
  }
  const mapped = toClientError(error);
  if (mapped) return mapped;
  console.error('[subgraph] unexpected error', error);
  return new GraphQLError(message, { extensions: { code: 'INTERNAL_SERVER_ERROR' } });
}

function authorizationOf(params: Record<string, unknown> | undefined, req: IncomingMessage): string | null {
  return authorizationOfParams(params) ?? req.headers.authorization ?? null;
}

export async function startSubgraphServer(opts: SubgraphServerOptions): Promise<RunningSubgraphs> {
  const { upstream, auth } = opts;
  const schemas = new Map<string, GraphQLSchema>();
  const yogas = new Map<string, ReturnType<typeof createYoga<Record<string, unknown>, SubgraphContext>>>();
  const sockets = new Map<string, WebSocketServer>();
  const disposers: Array<() => unknown> = [];

  for (const sg of opts.subgraphs) {
    const schema = buildSubgraphSchema({ typeDefs: sg.typeDefs, resolvers: sg.resolvers as GraphQLResolverMap<unknown> });
    schemas.set(sg.name, schema);
    yogas.set(
      sg.name,
      createYoga<Record<string, unknown>, SubgraphContext>({
        schema,
        graphqlEndpoint: `/${sg.name}/graphql`,
        graphiql: false,
        landingPage: false,
        logging: false,
        maskedErrors: { maskError },
        context: ({ request }) => createContext(resolveAuth(request.headers.get('authorization'), auth), upstream),
        plugins: [useCostExtension()],
      }),
    );
    const wss = new WebSocketServer({ noServer: true });
    sockets.set(`/${sg.name}/graphql`, wss);
    const ws = useServer<Record<string, unknown>>(
      {
        schema,
        context: (ctx) => createContext(resolveAuth(authorizationOf(ctx.connectionParams, ctx.extra.request), auth), upstream),
        onError: (_ctx, _id, _payload, errors) => {
          for (const e of errors) console.error('[subgraph ws]', e.message);
        },
      },
      wss,
    );
    disposers.push(() => ws.dispose());
  }

  const server: Server = createServer((req, res) => {
    void handle(req, res).catch((err: unknown) => {
      console.error('[subgraph] request failed', err);
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
      res.end('{"error":"internal"}');
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = req.url ?? '/';
    const [, name = '', ...rest] = url.split('?')[0]!.split('/');
    const sg = opts.subgraphs.find((s) => s.name === name);
    if (url === '/healthz') {
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
      return;
    }
    if (!sg) {
      res.writeHead(404).end();
      return;
    }
    const sub = `/${rest.join('/')}`;
    if (sub !== '/graphql' && sg.http && (await sg.http(req, res, sub))) return;
    await yogas.get(name)!.handle(req, res);
  }

  server.on('upgrade', (req, socket, head) => {
    const wss = sockets.get((req.url ?? '').split('?')[0]!);
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
    const stop = await sg.start?.({ upstream, publicUrl: opts.publicUrl });
    if (stop) disposers.push(stop);
  }

  return {
    url,
    graphqlUrl: (name) => `${url}/${name}/graphql`,
    schemas,
    async close() {
      for (const d of disposers.reverse()) await d();
      for (const wss of sockets.values()) {
        for (const c of wss.clients) c.terminate();
        wss.close();
      }
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
