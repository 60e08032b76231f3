/**
 * The input rules every subgraph shares: Italian VAT numbers and fiscal codes (checksums from
 * `contract/checksums.ts`), Openapi ids and other upstream ids, http(s) URLs, e-mail addresses,
 * ISO 8601 dates and date-times, free text. Each takes the value and the field path (named in the
 * message and in `extensions.field`) and returns the normalised value, or throws a `BAD_USER_INPUT`
 * GraphQL error (`errors.ts`) before any upstream call is made. A bad value is quoted in the
 * message, cut by `echo()`.
 *
 * Areas keep only their own checks (search pages, relay targets, request bodies) and build them
 * from these, so that a VAT number means the same thing in every area.
 */
import { isValidItalianVat, isValidPersonFiscalCode } from '../../contract/checksums.ts';
import { badUserInput } from './errors.ts';

/** Most characters of a bad value repeated in an error message. */
export const MAX_ECHO_CHARS = 40;

/** A bad value as an error message repeats it: at most `MAX_ECHO_CHARS` characters, then `…`. */
export function echo(value: string): string {
  // Code points, not UTF-16 units, so a surrogate pair is not cut; 2n + 1 units hold more than n.
  const head = [...value.slice(0, 2 * MAX_ECHO_CHARS + 1)];
  return head.length > MAX_ECHO_CHARS ? `${head.slice(0, MAX_ECHO_CHARS).join('')}…` : value;
}

/** ` (got "<value>")`, the value cut by `echo()`. */
const got = (value: string): string => ` (got "${echo(value)}")`;

// ---------------------------------------------------------------------------------------------
// Text

/** Control characters other than tab, line feed and carriage return. */
// eslint-disable-next-line no-control-regex -- matching control characters is this pattern's purpose (they are refused).
const CONTROL_CHARS = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/;

/** Longest free text accepted when the caller names no limit. */
export const MAX_TEXT = 500;

/** A non-empty trimmed string of at most `max` characters, without control characters. */
export function requiredText(value: string | null | undefined, field: string, max = MAX_TEXT): string {
  const v = (value ?? '').trim();
  if (v === '') throw badUserInput(`${field} is required and must not be empty`, field);
  if (v.length > max) throw badUserInput(`${field} is longer than ${max} characters`, field);
  if (CONTROL_CHARS.test(v)) throw badUserInput(`${field} contains control characters`, field);
  return v;
}

/** An optional string: null when absent or blank, otherwise checked like `requiredText`. */
export function optionalText(value: string | null | undefined, field: string, max = MAX_TEXT): string | null {
  if (value === null || value === undefined || value.trim() === '') return null;
  return requiredText(value, field, max);
}

/** Throws "<field> is required …" for an absent or blank value; returns it otherwise. */
function present(value: string | null | undefined, field: string, what: string): string {
  if (value === null || value === undefined || value.trim() === '') throw badUserInput(`${field} is required: ${what}`, field);
  return value;
}

// ---------------------------------------------------------------------------------------------
// Italian identifiers

/**
 * The one way a VAT number typed by a person is read: spaces, dots and an `IT` prefix (any case)
 * removed, so `IT 034.567.810.57` is `03456781057`. Not validated: see `vatNumber`.
 */
export const compactVat = (value: string): string => value.replace(/[\s.]/g, '').replace(/^IT/i, '');

/** A fiscal code as typed: whitespace removed, upper case. Not validated: see `fiscalCode`. */
export const compactFiscalCode = (value: string): string => value.replace(/\s/g, '').toUpperCase();

/**
 * An Italian VAT number (partita IVA): read by `compactVat`, then 11 digits with a valid check
 * digit (all zeros refused). Returns the 11 digits.
 */
export function vatNumber(value: string | null | undefined, field = 'vatCode'): string {
  const raw = present(value, field, 'an Italian VAT number of 11 digits');
  const v = compactVat(raw);
  if (!/^\d{11}$/.test(v)) throw badUserInput(`${field} must be an Italian VAT number of 11 digits${got(raw)}`, field);
  if (!isValidItalianVat(v)) throw badUserInput(`${field} "${echo(raw)}" has a wrong check digit: not a valid Italian VAT number`, field);
  return v;
}

/** A person's fiscal code: 16 letters and digits, valid structure and check letter. Returns it upper case. */
export function personFiscalCode(value: string | null | undefined, field = 'taxCode'): string {
  const raw = present(value, field, "a person's fiscal code of 16 characters");
  const v = compactFiscalCode(raw);
  if (!/^[A-Z0-9]{16}$/.test(v)) throw badUserInput(`${field} must be a person's fiscal code of 16 letters and digits${got(raw)}`, field);
  if (!isValidPersonFiscalCode(v)) throw badUserInput(`${field} "${echo(raw)}" is not a valid fiscal code (structure, date part or check letter wrong)`, field);
  return v;
}

/** A company's fiscal code: 11 digits with the VAT number's check digit. */
export function companyFiscalCode(value: string | null | undefined, field = 'taxCode'): string {
  const raw = present(value, field, "a company's fiscal code of 11 digits");
  const v = compactFiscalCode(raw);
  if (!/^\d{11}$/.test(v)) throw badUserInput(`${field} must be a company's fiscal code of 11 digits${got(raw)}`, field);
  if (!isValidItalianVat(v)) throw badUserInput(`${field} "${echo(raw)}" has a wrong check digit: not a valid company fiscal code`, field);
  return v;
}

/** A fiscal code of either form: a company's 11 digits or a person's 16 characters. */
export function fiscalCode(value: string | null | undefined, field = 'taxCode'): string {
  const raw = present(value, field, 'a fiscal code of 11 digits (company) or 16 characters (person)');
  const v = compactFiscalCode(raw);
  if (/^\d{11}$/.test(v)) return companyFiscalCode(v, field);
  if (/^[A-Z0-9]{16}$/.test(v)) return personFiscalCode(v, field);
  throw badUserInput(`${field} must be a fiscal code of 11 digits (company) or 16 characters (person)${got(raw)}`, field);
}

export type ItalianCode = { kind: 'vat'; code: string } | { kind: 'person'; code: string };

/**
 * What shape an Italian code has, unvalidated: `vat` when `compactVat` leaves 11 digits (a VAT
 * number, or a company's fiscal code, which is the same number), `person` for 16 letters and
 * digits, else null.
 */
export function italianCodeShape(value: string): ItalianCode['kind'] | null {
  if (/^\d{11}$/.test(compactVat(value))) return 'vat';
  if (/^[A-Z0-9]{16}$/.test(compactFiscalCode(value))) return 'person';
  return null;
}

/** A VAT number (or a company's fiscal code) or a person's fiscal code, told apart by shape and validated. */
export function vatOrFiscalCode(value: string | null | undefined, field: string): ItalianCode {
  const raw = present(value, field, "a VAT number (11 digits) or a person's fiscal code (16 characters)");
  switch (italianCodeShape(raw)) {
    case 'vat':
      return { kind: 'vat', code: vatNumber(raw, field) };
    case 'person':
      return { kind: 'person', code: personFiscalCode(raw, field) };
    default:
      throw badUserInput(`${field} must be a VAT number of 11 digits or a person's fiscal code of 16 characters${got(raw)}`, field);
  }
}

// ---------------------------------------------------------------------------------------------
// Upstream ids

const OPENAPI_ID = /^[0-9a-fA-F]{24}$/;

/** True for an Openapi id (24 hexadecimal characters), surrounding whitespace allowed. */
export const isOpenapiId = (value: string): boolean => OPENAPI_ID.test(value.trim());

/**
 * An Openapi id (companies, monitors, asynchronous requests): 24 hexadecimal characters, returned
 * lower case. `what` names it in the message (`a request id`).
 */
export function openapiId(value: string | null | undefined, field = 'id', what = 'an Openapi id'): string {
  const raw = value ?? '';
  const v = raw.trim();
  if (!OPENAPI_ID.test(v)) throw badUserInput(`${field} must be ${what} of 24 hexadecimal characters${got(raw)}`, field);
  return v.toLowerCase();
}

/**
 * An upstream identifier that becomes a path segment (foreign company ids, registry numbers): 1 to
 * `max` letters, digits, spaces, dots, dashes and underscores, trimmed. Never `.` or `..`.
 */
export function pathId(value: string | null | undefined, field = 'id', max = 64): string {
  const raw = value ?? '';
  const v = raw.trim();
  if (v === '' || v.length > max) throw badUserInput(`${field} must be 1 to ${max} characters`, field);
  if (!/^[\p{L}\p{N} .\-_]+$/u.test(v) || /^\.+$/.test(v)) {
    throw badUserInput(`${field} may hold only letters, digits, spaces, dots, dashes and underscores${got(raw)}`, field);
  }
  return v;
}

// ---------------------------------------------------------------------------------------------
// URLs, e-mail

/** Longest URL accepted. */
export const MAX_URL = 2048;

/** An absolute http or https URL without credentials (`user:password@`), in its normalised form. */
export function httpUrl(value: string | null | undefined, field: string): string {
  const v = requiredText(value, field, MAX_URL);
  const u = URL.canParse(v) ? new URL(v) : null;
  if (!u) throw badUserInput(`${field} must be an absolute http or https URL${got(v)}`, field);
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw badUserInput(`${field} must be an http or https URL${got(v)}`, field);
  if (u.username || u.password) throw badUserInput(`${field} must not carry credentials (user:password@)`, field);
  return u.toString();
}

const EMAIL = /^[^\s@"(),:;<>[\\\]]+@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)+$/;

/** An e-mail address: a local part without spaces or specials, `@`, a host name with a dot. */
export function email(value: string | null | undefined, field: string): string {
  const v = requiredText(value, field, 254);
  if (!EMAIL.test(v)) throw badUserInput(`${field} is not a valid e-mail address${got(v)}`, field);
  return v;
}

// ---------------------------------------------------------------------------------------------
// Dates

/** A real calendar day, `YYYY-MM-DD` (29 February only in leap years). */
export function isoDate(value: string | null | undefined, field: string): string {
  const raw = present(value, field, 'a date as YYYY-MM-DD');
  const v = raw.trim();
  if (!isCalendarDay(v)) throw badUserInput(`${field} must be a date as YYYY-MM-DD${got(raw)}`, field);
  return v;
}

/** True for `YYYY-MM-DD` naming a day that exists. */
export function isCalendarDay(v: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(v);
  if (!m) return false;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const date = new Date(Date.UTC(y, mo - 1, d));
  return date.getUTCFullYear() === y && date.getUTCMonth() === mo - 1 && date.getUTCDate() === d;
}

const DATE_TIME = /^(\d{4}-\d{2}-\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?$/;

/**
 * An ISO 8601 date or date-time (`2024-05-01`, `2024-05-01T10:00`, `2024-05-01T10:00:00.5+02:00`,
 * `+0200`); without a zone it is UTC. Returns the instant as an ISO string in UTC.
 */
export function isoDateTime(value: string | null | undefined, field: string): string {
  const raw = present(value, field, 'an ISO 8601 date or date-time');
  const v = raw.trim();
  const m = DATE_TIME.exec(v);
  const ok = m !== null && isCalendarDay(m[1]) && (m[2] === undefined || (Number(m[2]) < 24 && Number(m[3]) < 60 && Number(m[4] ?? 0) < 60));
  const zone = m?.[5] === undefined ? 'Z' : m[5] === 'Z' ? 'Z' : `${m[5].slice(0, 3)}:${m[5].slice(-2)}`;
  const t = ok ? Date.parse(m[2] === undefined ? `${m[1]}T00:00:00Z` : `${v.slice(0, v.length - (m[5]?.length ?? 0))}${zone}`) : Number.NaN;
  if (Number.isNaN(t)) throw badUserInput(`${field} must be an ISO 8601 date or date-time such as 2024-05-01 or 2024-05-01T10:00:00Z${got(raw)}`, field);
  return new Date(t).toISOString();
}
