/** Every resolver of the risk subgraph, typed by the generated `Resolvers`. */
import { GraphQLScalarType, Kind } from 'graphql';
import type { Resolvers } from '../__generated__/resolvers-types.ts';
import { toDateTime } from '../model.ts';
import type { RiskService } from '../service.ts';
import { requestResolvers } from './requests.ts';
import { rootResolvers } from './root.ts';

/** ISO 8601 date-times out; ISO strings (or Unix seconds) in, normalised to ISO. */
const DateTime = new GraphQLScalarType<string | null, string>({
  name: 'DateTime',
  serialize: (v) => {
    const iso = toDateTime(v);
    if (iso === null) throw new TypeError('DateTime cannot represent this value');
    return iso;
  },
  parseValue: (v) => toDateTime(v),
  parseLiteral: (ast) => (ast.kind === Kind.STRING || ast.kind === Kind.INT ? toDateTime(ast.kind === Kind.INT ? Number(ast.value) : ast.value) : null),
});

export function createResolvers(service: RiskService): Resolvers {
  return {
    DateTime,
    ...rootResolvers(service),
    ...requestResolvers(service),
  };
}
