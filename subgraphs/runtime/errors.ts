/**
 * GraphQL errors with stable `extensions.code` values. Resolvers throw `badUserInput(...)` for
 * input that must be refused before money is spent, and let `UpstreamError`s through: the subgraph
 * server turns them into GraphQL errors here, keeping the upstream error number and never the token.
 */
import { GraphQLError } from 'graphql';
import { CostLimitError } from '../upstream/cost.ts';
import { UpstreamError } from '../upstream/errors.ts';

/** Bad input: refused before any upstream call. `field` names the argument or input path. */
export function badUserInput(message: string, field?: string, extra: Record<string, unknown> = {}): GraphQLError {
  return new GraphQLError(message, { extensions: { code: 'BAD_USER_INPUT', ...(field ? { field } : {}), ...extra } });
}

export function notFound(message: string): GraphQLError {
  return new GraphQLError(message, { extensions: { code: 'NOT_FOUND' } });
}

export function forbidden(message: string): GraphQLError {
  return new GraphQLError(message, { extensions: { code: 'FORBIDDEN' } });
}

/** The GraphQL form of an upstream failure. */
export function upstreamToGraphQL(err: UpstreamError, path?: ReadonlyArray<string | number>): GraphQLError {
  return new GraphQLError(upstreamMessage(err), {
    path,
    extensions: {
      code: err.graphqlCode,
      upstream: {
        area: err.area,
        endpoint: err.endpoint,
        status: err.status,
        error: err.upstreamCode,
        message: err.message,
      },
      ...(err.retryAfter !== null ? { retryAfter: err.retryAfter } : {}),
      // A paid call sent without an answer (or the same purchase, not sent again while one is): charged or not is unknown.
      ...(err.outcomeUnknown || err.markedUnknown ? { outcome: 'unknown', ...(err.atRisk > 0 ? { atRisk: err.atRisk } : {}) } : {}),
    },
  });
}

function upstreamMessage(err: UpstreamError): string {
  switch (err.graphqlCode) {
    case 'UPSTREAM_NOT_FOUND':
      return `Not found upstream (${err.endpoint}): ${err.message}`;
    case 'PAYMENT_REQUIRED':
      return 'The Openapi wallet has insufficient credit for this call';
    case 'UNAUTHENTICATED':
      return 'The Openapi token is missing, invalid, expired or lacks the scope for this call';
    case 'RATE_LIMITED':
      return `Rate limited by the Openapi service${err.retryAfter !== null ? `; retry after ${err.retryAfter}s` : ''}`;
    case 'UPSTREAM_TIMEOUT':
      return `The Openapi service did not answer in time (${err.endpoint})`;
    case 'UPSTREAM_UNAVAILABLE':
      return `The Openapi service is unavailable (${err.endpoint})`;
    case 'UPSTREAM_PENDING':
      return `The Openapi service is still preparing the data (${err.endpoint}); try again later`;
    default:
      return `The Openapi service refused the call (${err.endpoint}): ${err.message}`;
  }
}

/** Maps any error thrown in a resolver to what the client sees (used by the subgraph server). */
export function toClientError(err: unknown, path?: ReadonlyArray<string | number>): GraphQLError | undefined {
  const original = err instanceof GraphQLError ? (err.originalError ?? err) : err;
  if (original instanceof UpstreamError) return upstreamToGraphQL(original, path);
  if (original instanceof CostLimitError) {
    return new GraphQLError(original.message, {
      path,
      extensions: { code: 'COST_LIMIT_EXCEEDED', scope: original.scope, budget: original.budget, committed: original.committed, price: original.price },
    });
  }
  return undefined;
}
