/**
 * Apollo Client's (4) `InMemoryCache` configuration for the supergraph:
 *
 * ```ts
 * import { ApolloClient, HttpLink, InMemoryCache } from '@apollo/client';
 * import { apolloCacheConfig } from './client/apollo.ts';
 * const client = new ApolloClient({ cache: new InMemoryCache(apolloCacheConfig), link: new HttpLink({ uri }) });
 * ```
 *
 * - `possibleTypes` (generated from the supergraph): fragments on `Manager`, `Shareholder` and
 *   every other interface or union match their implementations; without it Apollo Client drops
 *   the fields of such fragments from the cache.
 * - Federation entities (`Company`) are normalized by their first `@key` present in the object:
 *   `Company:{"vatCode":"…"}`, else `Company:{"taxCode":"…"}`; the optional Openapi `id` is not
 *   needed. Select `vatCode` wherever you select a company, so every query names the same object.
 * - Objects without identity (managers, shareholders, addresses, dates … every type without an
 *   `id`) stay inside their parent: a person's roles and shares are facts of one company, not of
 *   the person. They and the entities merge field by field, so a second query with other fields of
 *   the same company (or of a company fetched without its keys) adds to what the cache holds.
 * - `Query.company(vatCode:)` reads the cached company of that VAT number, however it got into the
 *   cache (e.g. as the company of a manager or shareholder): no request when its fields are cached.
 */
import type { InMemoryCacheConfig, TypePolicies, TypePolicy } from '@apollo/client/cache';
import generated from './generated/possible-types.ts';
import { identity } from './generated/identity.ts';
import { entityKeyFields, normaliseVatCode } from './keys.ts';

/** Supertype → concrete types, for `InMemoryCache({ possibleTypes })`. */
export const possibleTypes: Record<string, string[]> = generated.possibleTypes;

function policyOf(typename: string): TypePolicy | undefined {
  switch (identity[typename]) {
    case 'entity':
      return { keyFields: (object) => entityKeyFields(typename, object) ?? false, merge: true };
    case 'embedded':
      return { keyFields: false, merge: true };
    case 'optional-id':
      // Normalized by `id` when it is selected; merged inside its parent when it is not.
      return { merge: true };
    default:
      // A non-null `id`: Apollo Client's default `Type:id` normalization.
      return undefined;
  }
}

/** Type policies of every object type of the supergraph (see the module comment). */
export const typePolicies: TypePolicies = {
  ...Object.fromEntries(
    Object.keys(identity).flatMap((typename) => {
      const policy = policyOf(typename);
      return policy ? [[typename, policy]] : [];
    }),
  ),
  Query: {
    fields: {
      company: {
        read(existing: unknown, { args, toReference }) {
          if (existing !== undefined || typeof args?.vatCode !== 'string') return existing;
          return toReference({ __typename: 'Company', vatCode: normaliseVatCode(args.vatCode) });
        },
      },
    },
  },
};

/** `new InMemoryCache(apolloCacheConfig)`; spread it to add your own options. */
export const apolloCacheConfig: InMemoryCacheConfig = { possibleTypes, typePolicies };
