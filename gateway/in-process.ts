/**
 * In-process subgraphs: when the gateway and the subgraphs run in one process (`stack.ts`,
 * `npm start`), a subgraph request is handed to the subgraph's own fetch handler (its yoga server)
 * instead of going over loopback HTTP. Nothing else changes: the HTTP transport still builds the
 * request (query plan, `extensions.headers`), every `onFetch` plugin still sets its headers
 * (authorization, account key, operation id, estimate, traceparent), and the subgraph reads the same
 * `Request` it would have read from its socket. Only the socket round trip (and its two
 * serialisations through node:http) is gone. Separate services keep HTTP: without an entry for a URL,
 * the request is left to the runtime's fetch.
 */
import type { GatewayPlugin } from '@graphql-hive/gateway-runtime';

/** Answers one GraphQL-over-HTTP request as the subgraph's HTTP server would. */
export type SubgraphFetch = (url: string, init: RequestInit) => Response | Promise<Response>;

export interface InProcessSubgraphsOptions {
  /** Each in-process subgraph's handler, by the GraphQL URL the gateway knows it under. */
  handlers: ReadonlyMap<string, SubgraphFetch>;
}

/** Routes fetches to the subgraphs' in-process handlers (see the module doc). */
export function useInProcessSubgraphs(opts: InProcessSubgraphsOptions): GatewayPlugin {
  const { handlers } = opts;
  return {
    onFetch({ url, setFetchFn }) {
      const handler = handlers.get(url);
      if (!handler) return;
      // The fetch function runs after every onFetch hook, with the options they set.
      setFetchFn((target, init) => handler(target, init ?? {}));
    },
  };
}
