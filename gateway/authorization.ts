/**
 * The caller's `Authorization` reaches every subgraph call, whichever way the operation came in:
 * over HTTP (the request header) or over graphql-ws (the connection params, which the runtime merges
 * into `context.headers`). The subgraphs pass it upstream (or use the service token).
 *
 * Malformed credentials are refused with `UNAUTHENTICATED`, never replaced by another account:
 * - graphql-ws connection params carrying a credential in an unknown shape (`{token}`,
 *   `{authorization: 42}`, …) are refused here, for every operation of the connection, before any
 *   subgraph call: they are a client bug whatever the gateway's configuration;
 * - a malformed `Authorization` value (`Basic …`, a bare token, an empty `Bearer`) is refused by the
 *   subgraph, which alone knows whether the caller's credential is used at all (with a service token
 *   it is ignored). Queries and mutations reach it over HTTP, where its error comes back as is; a
 *   subscription goes over graphql-ws, where it could only close the socket, so the subgraph is
 *   asked first over HTTP with a free `{ __typename }` and its error is returned instead.
 */
import type { GatewayPlugin } from '@graphql-hive/gateway-runtime';
import { GraphQLError, getOperationAST, OperationTypeNode, type ExecutionResult } from 'graphql';
import { request } from 'undici';
import { credentialOfParams, malformedCredentialError, parseAuthorization } from '../subgraphs/runtime/credentials.ts';

/**
 * graphql-ws clients send credentials in several shapes: `{authorization}`, `{Authorization}`,
 * `{headers: {authorization}}`, `{headers: {Authorization}}`. They are copied into `authorization`,
 * so a caller's token never silently falls back to another account. Params in an unknown shape are
 * left as they are: `useForwardAuthorization` refuses their operations.
 */
export function normaliseAuthorization(params: Record<string, unknown>): void {
  const c = credentialOfParams(params);
  if (c.kind === 'present') params.authorization = c.authorization;
}

/** The error for graphql-ws connection params that carry a credential in an unknown shape, if so. */
export function connectionParamsError(params: unknown): GraphQLError | null {
  if (typeof params !== 'object' || params === null || Array.isArray(params)) return null;
  const c = credentialOfParams(params as Record<string, unknown>);
  return c.kind === 'malformed' ? malformedCredentialError('connection params', c.what, 'ws') : null;
}

interface ContextWithHeaders {
  headers?: Record<string, unknown>;
  request?: { headers: { get(name: string): string | null } };
  connectionParams?: unknown;
}

/** The caller's `Authorization` of an operation's context, if any (an empty one included). */
export function authorizationOf(context: unknown): string | null {
  const ctx = (context ?? {}) as ContextWithHeaders;
  const fromHeaders = ctx.headers?.authorization;
  if (typeof fromHeaders === 'string') return fromHeaders;
  return ctx.request?.headers.get('authorization') ?? null;
}

/**
 * Asks a subgraph over HTTP whether it refuses this `Authorization` (a free `{ __typename }`: the
 * subgraph decides while building its context, before any resolver). Returns its errors, or null
 * when it accepts the credential.
 */
async function refusalOf(location: string, authorization: string): Promise<readonly GraphQLError[] | null> {
  const res = await request(location, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json', authorization },
    body: JSON.stringify({ query: '{ __typename }' }),
    signal: AbortSignal.timeout(10_000),
  });
  const body = (await res.body.json().catch(() => null)) as ExecutionResult | null;
  const errors = (body?.errors ?? []).filter((e) => e.extensions?.code === 'UNAUTHENTICATED');
  return errors.length ? errors.map((e) => new GraphQLError(e.message, { extensions: e.extensions })) : null;
}

/**
 * Sets the caller's `Authorization` on every subgraph request (HTTP and graphql-ws alike), and
 * refuses operations whose credential is malformed (see the module comment).
 */
export function useForwardAuthorization(): GatewayPlugin {
  const refuseParams = (context: unknown): ExecutionResult | null => {
    const error = connectionParamsError((context as ContextWithHeaders | undefined)?.connectionParams);
    return error ? { errors: [error] } : null;
  };
  return {
    onExecute({ args, setResultAndStopExecution }) {
      const refused = refuseParams(args.contextValue);
      if (refused) setResultAndStopExecution(refused);
    },
    onSubscribe({ args, setResultAndStopExecution }) {
      const refused = refuseParams(args.contextValue);
      if (refused) setResultAndStopExecution(refused);
    },
    onSubgraphExecute({ executionRequest, setExecutionRequest, transportEntry, executor, setExecutor }) {
      const authorization = authorizationOf(executionRequest.context);
      if (authorization === null) return;
      const extensions = executionRequest.extensions ?? {};
      const headers = (extensions.headers ?? {}) as Record<string, string>;
      setExecutionRequest({ ...executionRequest, extensions: { ...extensions, headers: { ...headers, authorization } } });
      const location = transportEntry?.location;
      const operation = getOperationAST(executionRequest.document, executionRequest.operationName)?.operation;
      if (operation !== OperationTypeNode.SUBSCRIPTION || !location || parseAuthorization(authorization).kind !== 'malformed') return;
      setExecutor(async (req) => {
        const errors = await refusalOf(location, authorization);
        return errors ? { errors } : executor(req);
      });
    },
  };
}
