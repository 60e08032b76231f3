/**
 * How a normalized cache identifies an object of the supergraph, shared by the Apollo Client and
 * urql configurations (so both caches use the same entity ids, e.g. `Company:{"vatCode":"…"}`).
 */
import { entityKeys } from './generated/identity.ts';

/**
 * The fields of the first `@key` of the entity `typename` whose fields are all present (not null)
 * in `object`, in the supergraph's order (`Company`: `vatCode`, then `taxCode`); undefined when the
 * object carries none of its keys (the caches then keep it inside its parent, merged field by field).
 */
export function entityKeyFields(typename: string, object: Readonly<Record<string, unknown>>): readonly string[] | undefined {
  return entityKeys[typename]?.find((key) => key.every((field) => object[field] !== undefined && object[field] !== null));
}

/** The entity id of `object` (`{"vatCode":"01234567890"}`), or null when it carries none of its keys. */
export function entityKey(typename: string, object: Readonly<Record<string, unknown>>): string | null {
  const fields = entityKeyFields(typename, object);
  return fields ? JSON.stringify(Object.fromEntries(fields.map((field) => [field, object[field]]))) : null;
}

/** A VAT number as `Query.company(vatCode:)` accepts it (`IT` prefix, spaces) in the form companies carry it. */
export function normaliseVatCode(vatCode: string): string {
  return vatCode.replace(/\s+/g, '').replace(/^IT/i, '');
}
