/**
 * Arguments every area with paid asynchronous work takes, checked before any call (each check
 * throws `BAD_USER_INPUT` naming the argument): idempotency keys of paid orders and the caller's
 * own callback (the relay target).
 */
import { badUserInput } from '../errors.ts';
import { httpUrl } from '../validate.ts';
import { privateLiteralHost } from './relay-guard.ts';
import type { RelayTarget } from './store.ts';

/** An idempotency key: 8 to 128 characters of letters, digits, `.`, `_`, `:` and `-`; null when none. */
export function idempotencyKey(value: string | null | undefined, field = 'idempotencyKey'): string | null {
  if (value === null || value === undefined) return null;
  if (!/^[A-Za-z0-9._:-]{8,128}$/.test(value)) {
    throw badUserInput(`${field} must be 8 to 128 characters of letters, digits, '.', '_', ':' and '-'`, field);
  }
  return value;
}

const HEADER_NAME = /^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,100}$/;
const RESERVED_HEADERS = new Set(['host', 'content-length', 'content-type', 'transfer-encoding', 'connection', 'upgrade', 'expect', 'te', 'trailer', 'keep-alive']);

/** A caller's callback as a GraphQL input gives it (every area's callback input has this shape). */
export interface CallbackInputShape {
  url: string;
  method?: 'JSON' | 'POST' | null;
  field?: string | null;
  headers?: ReadonlyArray<{ name: string; value: string }> | null;
  retry?: number | null;
}

export interface RelayTargetOptions {
  /**
   * Allow loopback, private, link-local and unique-local addresses (`<AREA>_RELAY_ALLOW_PRIVATE=1`).
   * @default false
   */
  allowPrivate?: boolean;
  /**
   * The argument paths named in errors, for inputs that are not a `CallbackInputShape` object
   * (e.g. flat `callbackUrl`/`callbackRetry` fields). @default `<field>.url`, `<field>.retry`
   */
  paths?: { url?: string; retry?: string };
}

/**
 * The caller's own callback; null when none. A URL whose host is a private IP literal (loopback,
 * RFC 1918, link-local, unique-local …) is refused unless `allowPrivate`; host names are checked
 * when relaying (`relay-guard.ts`).
 */
export function relayTarget(input: CallbackInputShape | null | undefined, field: string, opts: RelayTargetOptions = {}): RelayTarget | null {
  if (!input) return null;
  const urlPath = opts.paths?.url ?? `${field}.url`;
  const retryPath = opts.paths?.retry ?? `${field}.retry`;
  const url = httpUrl(input.url, urlPath);
  const literal = opts.allowPrivate ? null : privateLiteralHost(url);
  if (literal !== null) throw badUserInput(`${urlPath} must not point to a loopback, private or link-local address (${literal})`, urlPath);
  const method = input.method ?? 'JSON';
  const fieldName = (input.field ?? 'data').trim() || 'data';
  if (!/^[A-Za-z0-9_.[\]-]{1,100}$/.test(fieldName)) throw badUserInput(`${field}.field must be a form field name`, `${field}.field`);
  const headers: Record<string, string> = {};
  for (const [i, h] of (input.headers ?? []).entries()) {
    const at = `${field}.headers[${i}]`;
    if (!HEADER_NAME.test(h.name)) throw badUserInput(`${at}.name is not a valid header name`, `${at}.name`);
    if (RESERVED_HEADERS.has(h.name.toLowerCase())) throw badUserInput(`${at}.name: ${h.name} cannot be set`, `${at}.name`);
    // eslint-disable-next-line no-control-regex -- CR, LF and NUL are what a header value must not carry.
    if (/[\r\n\u0000]/.test(h.value) || h.value.length > 4096) throw badUserInput(`${at}.value is not a valid header value`, `${at}.value`);
    headers[h.name] = h.value;
  }
  const retry = input.retry ?? 0;
  if (!Number.isInteger(retry) || retry < 0 || retry > 5) throw badUserInput(`${retryPath} must be between 0 and 5`, retryPath);
  return { url, method, field: fieldName, headers, retry };
}
