/**
 * The operator's key of the account API (`x-openapi-account-key`, see `subgraphs/account/access.ts`)
 * reaches the account subgraph, and no other: the subgraph checks it before any upstream call.
 */
import type { GatewayPlugin } from '@graphql-hive/gateway-runtime';
import { ACCOUNT_KEY_HEADER } from '../subgraphs/account/access.ts';

interface ContextWithHeaders {
  headers?: Record<string, unknown>;
  request?: { headers: { get(name: string): string | null } };
}

/** The header's value of an operation's context, if any. */
export function accountKeyOf(context: unknown): string | null {
  const ctx = (context ?? {}) as ContextWithHeaders;
  const fromHeaders = ctx.headers?.[ACCOUNT_KEY_HEADER];
  if (typeof fromHeaders === 'string') return fromHeaders;
  return ctx.request?.headers.get(ACCOUNT_KEY_HEADER) ?? null;
}

export function useForwardAccountKey(): GatewayPlugin {
  return {
    onSubgraphExecute({ subgraphName, executionRequest, setExecutionRequest }) {
      if (subgraphName !== 'account') return;
      const key = accountKeyOf(executionRequest.context);
      if (key === null) return;
      const extensions = executionRequest.extensions ?? {};
      const headers = (extensions.headers ?? {}) as Record<string, string>;
      setExecutionRequest({ ...executionRequest, extensions: { ...extensions, headers: { ...headers, [ACCOUNT_KEY_HEADER]: key } } });
    },
  };
}
