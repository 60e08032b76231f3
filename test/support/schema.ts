/** Checks on a subgraph's schema: the one place "every part is described" is spelled out. */
import { readFileSync } from 'node:fs';
import { buildSubgraphSchema } from '@apollo/subgraph';
import { isEnumType, isInputObjectType, isInterfaceType, isObjectType, parse, type GraphQLSchema } from 'graphql';

/** The schema of `subgraphs/<area>/schema.graphql`, built as a subgraph (no resolvers). */
export function subgraphSchema(area: string): GraphQLSchema {
  return buildSubgraphSchema({ typeDefs: parse(readFileSync(new URL(`../../subgraphs/${area}/schema.graphql`, import.meta.url), 'utf8')) });
}

/**
 * What the schema leaves undescribed (`Type`, `Type.field`, `Type.field(arg)`, `Enum.VALUE`,
 * `Input.field`), federation's own types and the built-in scalars aside; `typesAside` need no
 * description of their own (their fields still do).
 */
export function undescribed(schema: GraphQLSchema, typesAside: readonly string[] = []): string[] {
  const missing: string[] = [];
  for (const type of Object.values(schema.getTypeMap())) {
    if (type.name.startsWith('_') || type.name.startsWith('link__') || type.name.startsWith('federation__')) continue;
    if (['String', 'Int', 'Float', 'Boolean', 'ID'].includes(type.name)) continue;
    if (!type.description && !typesAside.includes(type.name)) missing.push(type.name);
    if (isObjectType(type) || isInterfaceType(type)) {
      for (const f of Object.values(type.getFields())) {
        if (f.name.startsWith('_')) continue;
        if (!f.description) missing.push(`${type.name}.${f.name}`);
        for (const a of f.args) if (!a.description) missing.push(`${type.name}.${f.name}(${a.name})`);
      }
    } else if (isInputObjectType(type)) {
      for (const f of Object.values(type.getFields())) if (!f.description) missing.push(`${type.name}.${f.name}`);
    } else if (isEnumType(type)) {
      for (const v of type.getValues()) if (!v.description) missing.push(`${type.name}.${v.name}`);
    }
  }
  return missing;
}
