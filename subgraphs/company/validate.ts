/**
 * Input validation of the company subgraph: every check runs before any upstream call, and a
 * failure is a `BAD_USER_INPUT` GraphQL error naming the argument.
 */
import { badUserInput } from '../runtime/errors.ts';
import { isValidFiscalCode, isValidItalianVat } from '../upstream/checksums.ts';

/** Most records one IT-search / FR-search returns. */
export const MAX_SEARCH_LIMIT = 1000;

/** Most characters of a bad value repeated in an error message. */
export const MAX_ECHO_CHARS = 40;

/** A bad value as an error message repeats it: at most `MAX_ECHO_CHARS` characters, then `…`. */
export function echo(value: string): string {
  // Code points, not UTF-16 units, so a surrogate pair is not cut; 2n + 1 units hold more than n.
  const head = [...value.slice(0, 2 * MAX_ECHO_CHARS + 1)];
  return head.length > MAX_ECHO_CHARS ? `${head.slice(0, MAX_ECHO_CHARS).join('')}…` : value;
}

/** An Italian VAT number: spaces, dots and an `IT` prefix removed; 11 digits with a valid check digit. */
export function vatCodeArg(value: string, field = 'vatCode'): string {
  const v = value.replace(/[\s.]/g, '').replace(/^IT/i, '');
  if (!/^\d{11}$/.test(v)) throw badUserInput(`${field} must be an Italian VAT number of 11 digits (got "${echo(value)}")`, field);
  if (!isValidItalianVat(v)) throw badUserInput(`${field} "${echo(value)}" has a wrong check digit: not a valid Italian VAT number`, field);
  return v;
}

/** An Italian tax code: 11 digits (company, VAT rules) or 16 characters (person), checksum-validated. */
export function taxCodeArg(value: string, field = 'taxCode'): string {
  const v = value.replace(/\s/g, '').toUpperCase();
  if (/^\d{11}$/.test(v)) {
    if (!isValidItalianVat(v)) throw badUserInput(`${field} "${echo(value)}" has a wrong check digit: not a valid company tax code`, field);
    return v;
  }
  if (!/^[A-Z0-9]{16}$/.test(v)) throw badUserInput(`${field} must be a tax code of 11 digits (company) or 16 characters (person) (got "${echo(value)}")`, field);
  if (!isValidFiscalCode(v)) throw badUserInput(`${field} "${echo(value)}" is not a valid fiscal code (structure or check letter)`, field);
  return v;
}

/** An Openapi id: 24 hexadecimal characters (lower-cased). */
export function openapiIdArg(value: string, field = 'id'): string {
  const v = value.trim();
  if (!/^[0-9a-fA-F]{24}$/.test(v)) throw badUserInput(`${field} must be an Openapi id of 24 hexadecimal characters (got "${echo(value)}")`, field);
  return v.toLowerCase();
}

export type CompanyCode = { vatCode: string } | { taxCode: string } | { id: string };

/** Any Italian company code: VAT number, tax code or Openapi id. */
export function companyCodeArg(value: string, field: string): CompanyCode {
  const v = value.trim();
  if (/^[0-9a-fA-F]{24}$/.test(v)) return { id: v.toLowerCase() };
  const compact = v.replace(/[\s.]/g, '').replace(/^IT(?=\d{11}$)/i, '');
  if (/^\d{11}$/.test(compact)) return { vatCode: vatCodeArg(compact, field) };
  if (/^[A-Za-z0-9]{16}$/.test(compact)) return { taxCode: taxCodeArg(compact, field) };
  throw badUserInput(`${field} must be an Italian VAT number, a tax code or an Openapi id (got "${echo(value)}")`, field);
}

/** An identifier of a foreign company (used as a path segment). */
export function foreignIdArg(value: string, field = 'id'): string {
  const v = value.trim();
  if (v === '' || v.length > 64) throw badUserInput(`${field} must be 1 to 64 characters`, field);
  if (!/^[\p{L}\p{N} .\-_]+$/u.test(v)) throw badUserInput(`${field} may hold only letters, digits, spaces, dots, dashes and underscores`, field);
  return v;
}

/** An ISO 3166-1 alpha-2 country code (upper-cased). */
export function countryArg(value: string, field = 'country'): string {
  const v = value.trim().toUpperCase();
  if (!/^[A-Z]{2}$/.test(v)) throw badUserInput(`${field} must be an ISO 3166-1 alpha-2 country code such as FR or DE (got "${echo(value)}")`, field);
  return v;
}

export function pageArgs(skip: number | null | undefined, limit: number | null | undefined): { skip: number; limit: number } {
  const s = skip ?? 0;
  const l = limit ?? 100;
  if (!Number.isInteger(s) || s < 0) throw badUserInput('skip must be 0 or more', 'skip');
  if (!Number.isInteger(l) || l < 1 || l > MAX_SEARCH_LIMIT) throw badUserInput(`limit must be between 1 and ${MAX_SEARCH_LIMIT}`, 'limit');
  return { skip: s, limit: l };
}

/** A non-empty trimmed string of at most `max` characters, or undefined when not given. */
export function textArg(value: string | null | undefined, field: string, min = 1, max = 200): string | undefined {
  if (value === null || value === undefined) return undefined;
  const v = value.trim();
  if (v.length < min || v.length > max) throw badUserInput(`${field} must be ${min} to ${max} characters`, field);
  return v;
}

/** A pattern-checked code (upper-cased), or undefined when not given. */
export function codeArg(value: string | null | undefined, field: string, re: RegExp, what: string): string | undefined {
  if (value === null || value === undefined) return undefined;
  const v = value.trim().toUpperCase();
  if (!re.test(v)) throw badUserInput(`${field} must be ${what} (got "${echo(value)}")`, field);
  return v;
}

/** Unix seconds of an ISO 8601 instant, or undefined. */
export function instantArg(value: string | null | undefined, field: string): number | undefined {
  if (value === null || value === undefined) return undefined;
  const t = Date.parse(value);
  if (Number.isNaN(t)) throw badUserInput(`${field} must be an ISO 8601 date-time`, field);
  return Math.floor(t / 1000);
}

export function rangeArgs(
  range: { min?: number | null; max?: number | null } | null | undefined,
  field: string,
): { min: number | undefined; max: number | undefined } {
  const min = range?.min ?? undefined;
  const max = range?.max ?? undefined;
  for (const [k, v] of [['min', min], ['max', max]] as const) {
    if (v !== undefined && (!Number.isFinite(v) || v < 0)) throw badUserInput(`${field}.${k} must be 0 or more`, `${field}.${k}`);
  }
  if (min !== undefined && max !== undefined && min > max) throw badUserInput(`${field}.min must not exceed ${field}.max`, field);
  return { min: min === undefined ? undefined : Math.floor(min), max: max === undefined ? undefined : Math.ceil(max) };
}

export function geoArgs(
  near: { latitude: number; longitude: number; radiusMeters: number } | null | undefined,
  field = 'filter.near',
): { lat: number; long: number; radius: number } | undefined {
  if (!near) return undefined;
  if (!(near.latitude >= -90 && near.latitude <= 90)) throw badUserInput(`${field}.latitude must be between -90 and 90`, `${field}.latitude`);
  if (!(near.longitude >= -180 && near.longitude <= 180)) throw badUserInput(`${field}.longitude must be between -180 and 180`, `${field}.longitude`);
  if (!(near.radiusMeters > 0)) throw badUserInput(`${field}.radiusMeters must be greater than 0`, `${field}.radiusMeters`);
  return { lat: near.latitude, long: near.longitude, radius: near.radiusMeters };
}

/** An http(s) URL, or undefined. */
export function urlArg(value: string | null | undefined, field: string): string | undefined {
  if (value === null || value === undefined) return undefined;
  let u: URL;
  try {
    u = new URL(value);
  } catch {
    throw badUserInput(`${field} must be an absolute http or https URL`, field);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw badUserInput(`${field} must start with http or https`, field);
  return u.toString();
}
