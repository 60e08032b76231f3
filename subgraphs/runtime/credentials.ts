/**
 * Where a graphql-ws client puts its credentials: `{authorization}`, `{Authorization}` or
 * `{headers: {authorization}}`. One reader for the gateway (which normalises them before
 * forwarding) and the subgraph server (which builds the upstream auth from them).
 */
export function authorizationOfParams(params: Record<string, unknown> | null | undefined): string | null {
  if (!params) return null;
  const headers = typeof params.headers === 'object' && params.headers !== null ? (params.headers as Record<string, unknown>) : {};
  for (const v of [params.authorization, params.Authorization, headers.authorization, headers.Authorization]) {
    if (typeof v === 'string' && v) return v;
  }
  return null;
}
