/**
 * Credentials besides `Authorization` that reach one area and no other: each area's descriptor lists
 * the request headers the gateway forwards to it (`forwardedHeaders`, read from the registry by the
 * entry point), e.g. the operator's key of the account API, which the account subgraph checks before
 * any upstream call. The caller's session counts the forwarded headers of the same areas
 * (`callerSessions(credentialHeadersOf(areas))` in `index.ts`, `caller-session.ts`), so answers are
 * never shared across different values.
 */
import type { GatewayPlugin } from '@graphql-hive/gateway-runtime';
import type { GatewayArea } from '../subgraphs/runtime/area.ts';

interface ContextWithHeaders {
  headers?: Record<string, unknown>;
  request?: { headers: { get(name: string): string | null } };
}

/** A header's value of an operation's context, if any. */
export function headerOf(context: unknown, name: string): string | null {
  const ctx = (context ?? {}) as ContextWithHeaders;
  const fromHeaders = ctx.headers?.[name];
  if (typeof fromHeaders === 'string') return fromHeaders;
  return ctx.request?.headers.get(name) ?? null;
}

/** Forwards each area's `forwardedHeaders` to its subgraph, and to no other. */
export function useForwardedHeaders(areas: readonly GatewayArea[]): GatewayPlugin {
  const bySubgraph = new Map(areas.flatMap((a) => (a.forwardedHeaders?.length ? [[a.name, a.forwardedHeaders] as const] : [])));
  return {
    onSubgraphExecute({ subgraphName, executionRequest, setExecutionRequest }) {
      const names = bySubgraph.get(subgraphName);
      if (!names) return;
      const forwarded = names.flatMap((n) => {
        const value = headerOf(executionRequest.context, n);
        return value === null ? [] : [[n, value] as const];
      });
      if (forwarded.length === 0) return;
      const extensions = executionRequest.extensions ?? {};
      const headers = (extensions.headers ?? {}) as Record<string, string>;
      setExecutionRequest({ ...executionRequest, extensions: { ...extensions, headers: { ...headers, ...Object.fromEntries(forwarded) } } });
    },
  };
}
