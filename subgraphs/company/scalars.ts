/**
 * The company subgraph's own scalar: `JSON`. `DateTime` is the shared one (`runtime/scalars.ts`).
 */
import { GraphQLScalarType, valueFromASTUntyped } from 'graphql';

export const JSONScalar = new GraphQLScalarType<unknown, unknown>({
  name: 'JSON',
  description: 'Any JSON value.',
  serialize: (value) => value,
  parseValue: (value) => value,
  parseLiteral: (ast, variables) => valueFromASTUntyped(ast, variables ?? undefined),
});
