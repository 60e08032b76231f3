/**
 * urql Graphcache configuration for the supergraph:
 *
 * ```ts
 * import { Client, fetchExchange } from '@urql/core';
 * import { cacheExchange } from '@urql/exchange-graphcache';
 * import { graphcacheConfig } from './client/urql.ts';
 * const client = new Client({ url, exchanges: [cacheExchange(graphcacheConfig), fetchExchange] });
 * ```
 *
 * - `schema` (the supergraph's public schema, minified, generated): fragments on interfaces and
 *   unions match exactly, without Graphcache's heuristic fragment matching and its warnings.
 *   (`possibleTypes` alone stops the heuristics, but Graphcache then still walks every inline
 *   fragment when it writes and warns about the fields of the fragments that do not apply.)
 * - `keys`: federation entities (`Company`) by their first `@key` present in the object
 *   (`Company:{"vatCode":"…"}`, the same ids as client/apollo.ts); types without an `id`
 *   (managers, shareholders, addresses …) are embedded in their parent (no "Invalid key" warning);
 *   types with an optional `id` are keyed by it when it is selected, embedded otherwise.
 */
import type { KeyingConfig, PossibleTypesConfig } from '@urql/exchange-graphcache';
import generated from './generated/possible-types.ts';
import { identity } from './generated/identity.ts';
import { schema } from './generated/graphcache-schema.ts';
import { entityKey } from './keys.ts';

export { schema };

/** Abstract type → concrete types, for `cacheExchange({ possibleTypes })` where the schema is too much to ship. */
export const possibleTypes: PossibleTypesConfig = generated.possibleTypes;

/** Key generators of every object type that needs one (see the module comment). */
export const keys: KeyingConfig = Object.fromEntries(
  Object.entries(identity).flatMap(([typename, kind]): Array<[string, KeyingConfig[string]]> => {
    switch (kind) {
      case 'entity':
        return [[typename, (data) => entityKey(typename, data)]];
      case 'embedded':
        return [[typename, () => null]];
      case 'optional-id':
        return [[typename, (data) => (typeof data.id === 'string' || typeof data.id === 'number' ? String(data.id) : null)]];
      default:
        return [];
    }
  }),
);

/** `cacheExchange(graphcacheConfig)`; spread it to add resolvers, updates or optimistic results. */
export const graphcacheConfig = { keys, schema } as const;
