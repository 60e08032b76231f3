/**
 * The company subgraph's scalars: `DateTime` (ISO 8601, always returned in UTC) and `JSON`.
 */
import { GraphQLError, GraphQLScalarType, Kind, valueFromASTUntyped } from 'graphql';
import { isoDateTime } from './normalize.ts';
import { echo } from './validate.ts';

function toDateTime(value: unknown, where: string): string {
  const iso = value instanceof Date ? (Number.isNaN(value.getTime()) ? null : value.toISOString()) : isoDateTime(value);
  if (iso === null) {
    throw new GraphQLError(`DateTime ${where} must be an ISO 8601 date or date-time (got ${echo(typeof value === 'string' ? JSON.stringify(value) : String(value))})`, { extensions: { code: 'BAD_USER_INPUT' } });
  }
  return iso;
}

export const DateTimeScalar = new GraphQLScalarType<string, string>({
  name: 'DateTime',
  description: 'An ISO 8601 date-time in UTC, e.g. `2021-12-31T00:00:00.000Z`.',
  serialize: (value) => toDateTime(value, 'output'),
  parseValue: (value) => {
    if (typeof value !== 'string') throw new GraphQLError('DateTime input must be a string', { extensions: { code: 'BAD_USER_INPUT' } });
    return toDateTime(value, 'input');
  },
  parseLiteral: (ast) => {
    if (ast.kind !== Kind.STRING) throw new GraphQLError('DateTime input must be a string', { extensions: { code: 'BAD_USER_INPUT' } });
    return toDateTime(ast.value, 'input');
  },
});

export const JSONScalar = new GraphQLScalarType<unknown, unknown>({
  name: 'JSON',
  description: 'Any JSON value.',
  serialize: (value) => value,
  parseValue: (value) => value,
  parseLiteral: (ast, variables) => valueFromASTUntyped(ast, variables ?? undefined),
});
