/**
 * The caller's `Authorization` reaches every subgraph call, whichever way the operation came in:
 * over HTTP (the request header) or over graphql-ws (the connection params, which the runtime merges
 * into `context.headers`). The subgraphs pass it upstream (or use the service token).
 */
import type { GatewayPlugin } from '@graphql-hive/gateway-runtime';
import { authorizationOfParams } from '../subgraphs/runtime/credentials.ts';

/**
 * graphql-ws clients send credentials in several shapes: `{authorization}`, `{Authorization}`,
 * `{headers: {authorization}}`. They are copied into `authorization`, so a caller's token never
 * silently falls back to another account.
 */
export function normaliseAuthorization(params: Record<string, unknown>): void {
  const authorization = authorizationOfParams(params);
  if (authorization) params.authorization = authorization;
}

interface ContextWithHeaders {
  headers?: Record<string, unknown>;
  request?: { headers: { get(name: string): string | null } };
}

/** The caller's `Authorization` of an operation's context, if any. */
export function authorizationOf(context: unknown): string | null {
  const ctx = (context ?? {}) as ContextWithHeaders;
  const fromHeaders = ctx.headers?.authorization;
  if (typeof fromHeaders === 'string' && fromHeaders) return fromHeaders;
  return ctx.request?.headers.get('authorization') ?? null;
}

/** Sets the caller's `Authorization` on every subgraph request (HTTP and graphql-ws alike). */
export function useForwardAuthorization(): GatewayPlugin {
  return {
    onSubgraphExecute({ executionRequest, setExecutionRequest }) {
      const authorization = authorizationOf(executionRequest.context);
      if (!authorization) return;
      const extensions = executionRequest.extensions ?? {};
      const headers = (extensions.headers ?? {}) as Record<string, string>;
      setExecutionRequest({ ...executionRequest, extensions: { ...extensions, headers: { ...headers, authorization } } });
    },
  };
}
