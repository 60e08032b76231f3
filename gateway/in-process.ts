/**
 * In-process subgraphs: when the gateway and the subgraphs run in one process (`stack.ts`,
 * `npm start`), a subgraph's queries and mutations are executed by the subgraph itself
 * (`RunningSubgraphs.execute`): the plan's document and the headers every plugin set on the execution
 * request (authorization, account key, operation id, estimate, scopes) go straight to its schema,
 * with the context and plugins its GraphQL server would use (cost extension, masked errors, log
 * context). No request body is written or read, no Fetch request or response built, no JSON either
 * way: per subgraph request, the transport's and the subgraph server's HTTP pipelines are gone.
 *
 * Where a subgraph request must stay an HTTP request, the subgraph's own fetch handler (its yoga
 * server) answers it instead of loopback HTTP: with traces on (the transport's fetch carries
 * `traceparent`), at log level `debug` or `trace` (the fetch's debug lines show each request), and
 * for a gateway given handlers only. Subscriptions keep graphql-ws. Separate services keep HTTP:
 * without an entry for a subgraph, the request is left to the runtime's transport.
 */
import type { GatewayPlugin } from '@graphql-hive/gateway-runtime';
import { getOperationAST, OperationTypeNode, type ExecutionResult } from 'graphql';
import type { InProcessExecute } from '../subgraphs/runtime/server.ts';
import { tracingEnabled } from '../platform/tracing.ts';

/** Answers one GraphQL-over-HTTP request as the subgraph's HTTP server would. */
export type SubgraphFetch = (url: string, init: RequestInit) => Response | Promise<Response>;

export interface InProcessSubgraphsOptions {
  /** Each in-process subgraph's handler, by the GraphQL URL the gateway knows it under. */
  handlers: ReadonlyMap<string, SubgraphFetch>;
  /**
   * Each in-process subgraph's executor, by subgraph name: its queries and mutations skip the HTTP
   * transport and the subgraph's HTTP pipeline altogether (see `executors` below). @default none
   */
  executors?: ReadonlyMap<string, InProcessExecute>;
  /**
   * The runtime's logger: at `debug` or `trace` requests keep going through the transport's fetch,
   * whose debug lines show each subgraph request (headers redacted).
   */
  log?: { readonly level: string | false };
}

/** Routes fetches to the subgraphs' in-process handlers (see the module doc). */
export function useInProcessSubgraphs(opts: InProcessSubgraphsOptions): GatewayPlugin {
  const { handlers } = opts;
  // With traces on, the transport's fetch carries the trace to the subgraph (`traceparent`): the
  // request keeps going through it.
  const executors = tracingEnabled() ? new Map<string, InProcessExecute>() : (opts.executors ?? new Map<string, InProcessExecute>());
  return {
    // Queries and mutations of an in-process subgraph are executed by it directly, with the headers
    // every plugin set on the execution request (authorization, account key, operation id,
    // estimate, scopes): no request body, no Fetch request or response, no JSON either way.
    onSubgraphExecute({ subgraphName, executionRequest, setExecutor }) {
      const execute = executors.get(subgraphName);
      const level = opts.log?.level;
      if (
        !execute ||
        level === 'debug' ||
        level === 'trace' ||
        getOperationAST(executionRequest.document, executionRequest.operationName)?.operation === OperationTypeNode.SUBSCRIPTION
      )
        return;
      setExecutor(
        async (req) =>
          execute({
            document: req.document,
            variables: req.variables,
            operationName: req.operationName,
            headers: (req.extensions as { headers?: Record<string, string> } | undefined)?.headers ?? {},
          }) as Promise<ExecutionResult<never>>,
      );
    },
    onFetch({ url, setFetchFn }) {
      const handler = handlers.get(url);
      if (!handler) return;
      // The fetch function runs after every onFetch hook, with the options they set.
      setFetchFn((target, init) => handler(target, init ?? {}));
    },
  };
}
