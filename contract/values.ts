/**
 * Reading the suite's JSON values, the same for the layer and the emulator: a record (a JSON object,
 * `Obj`) and a field as text. The layer's coercions of upstream values to schema values are in
 * `subgraphs/upstream/coerce.ts`.
 */

/** A JSON object: a vendor record, a request body. */
export type Obj = Record<string, unknown>;

/** A JSON object (not null, not a list)? */
export const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The objects of a list (anything else in it dropped); [] for anything but a list. */
export const objects = (v: unknown): Obj[] => (Array.isArray(v) ? v.filter(isObj) : []);

/**
 * A field as text, for identifiers and codes compared or shown verbatim: a string untouched, a finite
 * number as its digits (the vendor sends some codes as numbers), anything else (absent, null, an
 * object, a list) as `fallback`, never `[object Object]`.
 */
export function asText(v: unknown): string;
export function asText<F extends string | null>(v: unknown, fallback: F): string | F;
export function asText(v: unknown, fallback: string | null = ''): string | null {
  if (typeof v === 'string') return v;
  if (typeof v === 'number' && Number.isFinite(v)) return String(v);
  return fallback;
}
