/**
 * Input validation of the company subgraph: every check runs before any upstream call, and a
 * failure is a `BAD_USER_INPUT` GraphQL error naming the argument. Identifiers, URLs and dates follow
 * the rules every area shares (`runtime/validate.ts`); this file keeps what only company has
 * (company codes, countries, search pages, ranges, places).
 */
import { badUserInput } from '../runtime/errors.ts';
import { echo, fiscalCode, httpUrl, isOpenapiId, isoDateTime, italianCodeShape, openapiId, pathId, vatNumber } from '../runtime/validate.ts';

export { echo, MAX_ECHO_CHARS } from '../runtime/validate.ts';

/** Most records one IT-search / FR-search returns. */
export const MAX_SEARCH_LIMIT = 1000;

/** An Italian VAT number (`IT 034.567.810.57` → `03456781057`), checksum-validated. */
export const vatCodeArg = (value: string, field = 'vatCode'): string => vatNumber(value, field);

/** An Italian tax code: 11 digits (company, VAT rules) or 16 characters (person), checksum-validated. */
export const taxCodeArg = (value: string, field = 'taxCode'): string => fiscalCode(value, field);

/** An Openapi id: 24 hexadecimal characters (lower-cased). */
export const openapiIdArg = (value: string, field = 'id'): string => openapiId(value, field);

export type CompanyCode = { vatCode: string } | { taxCode: string } | { id: string };

/** Any Italian company code: VAT number, tax code or Openapi id. */
export function companyCodeArg(value: string, field: string): CompanyCode {
  if (isOpenapiId(value)) return { id: openapiId(value, field) };
  switch (italianCodeShape(value)) {
    case 'vat':
      return { vatCode: vatNumber(value, field) };
    case 'person':
      return { taxCode: fiscalCode(value, field) };
    default:
      throw badUserInput(`${field} must be an Italian VAT number, a tax code or an Openapi id (got "${echo(value)}")`, field);
  }
}

/** An identifier of a foreign company (used as a path segment). */
export const foreignIdArg = (value: string, field = 'id'): string => pathId(value, field, 64);

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

/** Unix seconds of an ISO 8601 date or date-time (UTC without a zone), or undefined. */
export function instantArg(value: string | null | undefined, field: string): number | undefined {
  if (value === null || value === undefined) return undefined;
  return Math.floor(Date.parse(isoDateTime(value, field)) / 1000);
}

export function rangeArgs(range: { min?: number | null; max?: number | null } | null | undefined, field: string): { min: number | undefined; max: number | undefined } {
  const min = range?.min ?? undefined;
  const max = range?.max ?? undefined;
  for (const [k, v] of [
    ['min', min],
    ['max', max],
  ] as const) {
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

/** An http(s) URL without credentials, or undefined. */
export function urlArg(value: string | null | undefined, field: string): string | undefined {
  if (value === null || value === undefined) return undefined;
  return httpUrl(value, field);
}
