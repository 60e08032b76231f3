/**
 * Credentials besides `Authorization` that reach one area and no other: each area's descriptor lists
 * the request headers the gateway forwards to it (`forwardedHeaders`, read from the registry by the
 * entry point), e.g. the operator's key of the account API (`x-openapi-account-key`), which the
 * account subgraph checks before any upstream call. Each such header is part of the caller's
 * session (`caller-session.ts`), so answers are never shared across different values.
 */
import type { GatewayPlugin } from '@graphql-hive/gateway-runtime';
import { ACCOUNT_KEY_HEADER } from '../subgraphs/runtime/credentials.ts';
import type { GatewayArea } from '../subgraphs/runtime/area.ts';

interface ContextWithHeaders {
  headers?: Record<string, unknown>;
  request?: { headers: { get(name: string): string | null } };
}

/** Headers the caller's session counts (`callerSessionOf`): only these may be forwarded. */
const SESSION_HEADERS: readonly string[] = [ACCOUNT_KEY_HEADER];

/** A header's value of an operation's context, if any. */
function headerOf(context: unknown, name: string): string | null {
  const ctx = (context ?? {}) as ContextWithHeaders;
  const fromHeaders = ctx.headers?.[name];
  if (typeof fromHeaders === 'string') return fromHeaders;
  return ctx.request?.headers.get(name) ?? null;
}

/** The operator's key of an operation's context, if any. */
export const accountKeyOf = (context: unknown): string | null => headerOf(context, ACCOUNT_KEY_HEADER);

/** Forwards each area's `forwardedHeaders` to its subgraph, and to no other. */
export function useForwardedHeaders(areas: readonly GatewayArea[]): GatewayPlugin {
  const bySubgraph = new Map(areas.flatMap((a) => (a.forwardedHeaders?.length ? [[a.name, a.forwardedHeaders] as const] : [])));
  for (const [name, headers] of bySubgraph) {
    const unknown = headers.filter((h) => !SESSION_HEADERS.includes(h));
    // A forwarded credential the session does not count would let callers share each other's answers.
    if (unknown.length > 0)
      throw new Error(`area ${name} forwards ${unknown.join(', ')}: the gateway forwards only credentials the caller's session counts (${SESSION_HEADERS.join(', ')})`);
  }
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
