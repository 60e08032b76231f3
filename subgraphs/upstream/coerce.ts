/**
 * The one way upstream values become schema values, for every area. The REST suite is loose about
 * types (numbers sent as strings and the other way round, `1`/`0` for booleans, `"NULL"` for
 * nothing, dates as Unix seconds, milliseconds, ISO strings with or without a zone, or
 * `YYYY-MM-DD HH:mm:ss`); these functions read every such spelling and return null for anything
 * they cannot read, never a guess.
 *
 * Integers: an integer field given a fraction (`12.7` employees, the yearly average the register
 * reports) is rounded to the nearest integer (`13`, halves up), not dropped: null would say "the
 * upstream does not know", which is false, and a GraphQL `Int` cannot carry the fraction. An area
 * that must show the exact figure exposes it as a `Float` (or keeps the upstream record) beside it.
 */

import { isObj, type Obj } from '../../contract/values.ts';

/**
 * Text: a string trimmed, or a finite number as text (the vendor sends some codes as numbers);
 * null for blanks, the vendor's `"NULL"` placeholder and anything else.
 */
export function str(v: unknown): string | null {
  if (typeof v === 'number') return Number.isFinite(v) ? String(v) : null;
  if (typeof v !== 'string') return null;
  const t = v.trim();
  return t === '' || t === 'NULL' ? null : t;
}

/** A finite number, from a number or a numeric string (`"12.5"`, `" 3 "`); null otherwise. */
export function float(v: unknown): number | null {
  if (typeof v === 'number') return Number.isFinite(v) ? v : null;
  if (typeof v === 'string' && v.trim() !== '') {
    const n = Number(v);
    return Number.isFinite(n) ? n : null;
  }
  return null;
}

/**
 * An integer, read like `float` and rounded to the nearest integer when it has a fraction (see the
 * module comment); null when not a number. GraphQL still refuses values outside 32 bits for an
 * `Int` field, with an error on that field rather than a wrong number.
 */
export function int(v: unknown): number | null {
  const n = float(v);
  if (n === null) return null;
  const r = Math.round(n);
  return Object.is(r, -0) ? 0 : r;
}

/** A boolean from `true`/`false` (any case), `1`/`0` as numbers or strings; null otherwise. */
export function bool(v: unknown): boolean | null {
  if (typeof v === 'boolean') return v;
  if (v === 1 || v === 0) return v === 1;
  if (typeof v !== 'string') return null;
  const s = v.trim().toLowerCase();
  if (s === 'true' || s === '1') return true;
  if (s === 'false' || s === '0') return false;
  return null;
}

/** Unix timestamps above this are milliseconds (1e11 seconds is the year 5138). */
const MS_THRESHOLD = 1e11;

const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2}))?(\.\d+)?)?\s*(Z|[+-]\d{2}:?\d{2})?$/i;

/**
 * An instant as an ISO 8601 date-time in UTC (`2021-05-31T09:11:46.000Z`), from:
 * - a Unix timestamp, number or numeric string: seconds, or milliseconds when above 1e11; zero and
 *   negative values are the vendor's "no date" and give null;
 * - `YYYY-MM-DD`, `YYYY-MM-DDTHH:mm[:ss[.fraction]][zone]` or the same with a space for `T`
 *   (`2025-05-16 18:10:10`); without a zone it is UTC; fractions beyond milliseconds are cut.
 * Impossible days (`2023-02-30`) and anything else give null.
 */
export function dateTime(v: unknown): string | null {
  const n = float(v);
  if (n !== null) return n > 0 ? new Date(n > MS_THRESHOLD ? n : n * 1000).toISOString() : null;
  const s = str(v);
  if (s === null) return null;
  const m = DATE_TIME.exec(s);
  if (!m) return null;
  const [, y, mo, d, hh, mm, ss, frac, zone] = m;
  const day = new Date(Date.UTC(Number(y), Number(mo) - 1, Number(d)));
  if (day.getUTCFullYear() !== Number(y) || day.getUTCMonth() !== Number(mo) - 1 || day.getUTCDate() !== Number(d)) return null;
  const ms = frac ? `.${frac.slice(1, 4).padEnd(3, '0')}` : '';
  const z = zone === undefined || zone.toUpperCase() === 'Z' ? 'Z' : `${zone.slice(0, 3)}:${zone.slice(-2)}`;
  const t = Date.parse(`${y}-${mo}-${d}T${hh ?? '00'}:${mm ?? '00'}:${ss ?? '00'}${ms}${z}`);
  return Number.isNaN(t) ? null : new Date(t).toISOString();
}

/** Unix seconds of the instants `dateTime` reads; null otherwise. */
export function unixSeconds(v: unknown): number | null {
  const iso = dateTime(v);
  return iso === null ? null : Math.floor(Date.parse(iso) / 1000);
}

/** An array, or an empty one. */
export const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

/** An object, or an empty one. */
export const obj = (v: unknown): Obj => (isObj(v) ? v : {});
