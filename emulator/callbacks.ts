/**
 * The emulator's callbacks: the one reader of the `callback` object a client passes (`readCallback`,
 * used by every area), and delivery as the vendor does it (`deliverCallbackPayload`): every attempt
 * is logged for the control API, and delivery can be switched off (to test pollers).
 */
import { deliverCallbackPayload } from '../contract/callback-delivery.ts';
import { fail, hexId, type EmuResponse } from './core.ts';
import { isObj, type Obj } from '../contract/values.ts';

export interface VendorCallback {
  url: string;
  method?: string;
  field?: string;
  headers?: Record<string, string>;
  retry?: number;
  custom?: unknown;
  data?: unknown;
}

export interface DeliveryRecord {
  url: string;
  method: string;
  status: number | null;
  attempt: number;
  error?: string;
  at: string;
}

/**
 * One callback as the authorization area's `GET /callbacks/{id}` shows it (the vendor's `Callback`):
 * a delivery with every attempt it took. Times are ISO strings; `completedAt` is null while
 * `active`; `retry` counts the attempts after the first; `elapsedTime` is milliseconds from the
 * first attempt's start to completion (so far, while active).
 */
export interface CallbackRun {
  id: string;
  scope: string | null;
  domain: string | null;
  url: string;
  method: string;
  field: string;
  headers: Record<string, string>;
  /** The payload delivered. */
  data: unknown;
  custom: unknown;
  active: boolean;
  createdAt: string;
  startedAt: string;
  completedAt: string | null;
  httpResponseCode: number | null;
  elapsedTime: number;
  attempt: number;
  retry: number;
}

/** The most callbacks kept for `GET /callbacks` (oldest dropped first). */
const MAX_RUNS = 1000;

const state = { enabled: true, backoffMs: 200, log: [] as DeliveryRecord[], runs: [] as CallbackRun[], seq: 0 };

export const callbackSettings = {
  setEnabled(enabled: boolean): void {
    state.enabled = enabled;
  },
  isEnabled: (): boolean => state.enabled,
  /** Base back-off between retries (doubles each attempt). */
  setBackoffMs(ms: number): void {
    state.backoffMs = ms;
  },
  log: (): DeliveryRecord[] => state.log.slice(),
  /** Every callback delivered (or being delivered), oldest first, as snapshots. */
  runs: (): CallbackRun[] => state.runs.map((r) => ({ ...r, elapsedTime: r.active ? Math.max(0, Date.now() - Date.parse(r.startedAt)) : r.elapsedTime })),
  clearLog(): void {
    state.log.length = 0;
    state.runs.length = 0;
  },
};

/**
 * A callback as a record stores (and echoes) it: the vendor fields, defaults filled in, plus
 * whatever else the form has (`user_id`, `username`, `scope`, `domain` of the standard form).
 */
export interface StoredCallback extends VendorCallback {
  method: string;
  url: string;
  field: string;
  headers: Record<string, string>;
  data: unknown;
  [extra: string]: unknown;
}

/**
 * How an area reads callbacks:
 * - `form`: the stored shape. `standard` is the vendor's "NewCallback" (method defaults to JSON;
 *   `{method, url, user_id, username, field, headers, data, retry, scope, domain, custom}`);
 *   `legacy` is the older risk object (method defaults to POST; `{url, method, field, headers, data}`
 *   and `retry` / `custom` only when given).
 * - `username`: what the standard form records as `username` (company: the token's owner). @default ''
 * - `retry`: a retry outside 0–5 is refused with 406/740 (`refuse`, the vendor's rule), or brought
 *   into 0–5 (`clamp`: risk, whose layer asks for more; a non-integer counts as 0).
 * - `missingUrl`: the area's answer to a callback without a url (the vendor's 428/704, each area
 *   with its own text). @default 428/704 "url not set in 'callback', required"
 * - `required`: a request without a callback gets `missingUrl` too.
 */
export interface CallbackRules {
  form: 'legacy' | 'standard';
  username?: string;
  retry: 'refuse' | 'clamp';
  missingUrl?: () => EmuResponse;
  required?: boolean;
}

export type CallbackRead = { callback: StoredCallback | null } | { error: EmuResponse };

/** The vendor's most retries. */
export const MAX_CALLBACK_RETRY = 5;
const MAX_HEADER_KEY = 256;
const MAX_HEADERS_JSON = 2048;
const MAX_CUSTOM_JSON = 512;
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

const urlNotSet = (): EmuResponse => fail(428, 704, "url not set in 'callback', required");
const badHeaders = (): EmuResponse => fail(406, 708, 'Headers not valid, must be an object with key : value');

/**
 * The raw `callback` of a request body, in any of the forms a client sends it: a JSON object; a
 * JSON text (a form field `callback={…}`); or PHP-style form fields (`callback[url]=…`,
 * `callback[headers][session_id]=…`, `callback[headers][0][name]=…&callback[headers][0][value]=…`).
 * Undefined when the body has none.
 */
export function callbackValue(body: unknown): unknown {
  if (!isObj(body)) return undefined;
  let value = body.callback;
  if (typeof value === 'string' && /^\s*\{/.test(value)) {
    try {
      value = JSON.parse(value) as unknown;
    } catch {
      // Not JSON: left as text, refused by the reader as a callback without a url.
    }
  }
  return value === undefined ? bracketed(body, 'callback') : value;
}

/** `name[a][b]=v` form fields as a nested value (`[]` and numeric keys make arrays); undefined when none. */
function bracketed(body: Obj, name: string): unknown {
  let root: Obj | undefined;
  for (const [key, v] of Object.entries(body)) {
    if (!key.startsWith(`${name}[`)) continue;
    const rest = key.slice(name.length);
    if (!/^(\[[^[\]]*\])+$/.test(rest)) continue;
    const path = [...rest.matchAll(/\[([^[\]]*)\]/g)].map((m) => m[1]);
    root ??= {};
    let node: Obj = root;
    path.forEach((segment, i) => {
      const k = segment === '' ? String(Object.keys(node).length) : segment;
      if (i === path.length - 1) node[k] = v;
      else {
        if (!isObj(node[k])) node[k] = {};
        node = node[k] as Obj;
      }
    });
  }
  return root === undefined ? undefined : listsOf(root);
}

/** Objects whose keys are all indexes become arrays (in index order), recursively. */
function listsOf(value: unknown): unknown {
  if (!isObj(value)) return value;
  const keys = Object.keys(value);
  if (keys.length > 0 && keys.every((k) => /^\d+$/.test(k))) {
    return keys.sort((a, b) => Number(a) - Number(b)).map((k) => listsOf(value[k]));
  }
  return Object.fromEntries(keys.map((k) => [k, listsOf(value[k])]));
}

/** Headers given as an object or as `[{name, value}]`, validated with the vendor's errors. */
function readHeaders(value: unknown): Record<string, string> | EmuResponse {
  if (value === undefined || value === null) return {};
  const pairs: Array<[string, unknown]> = [];
  if (Array.isArray(value)) {
    for (const item of value) {
      if (!isObj(item) || typeof item.name !== 'string') return badHeaders();
      pairs.push([item.name, item.value]);
    }
  } else if (isObj(value)) pairs.push(...Object.entries(value));
  else return badHeaders();
  const headers: Record<string, string> = {};
  for (const [k, v] of pairs) {
    if (k.length > MAX_HEADER_KEY) return fail(406, 709, `Exceeded maximum length (256 chr) of the key: ${k.slice(0, 32)}…`);
    if (typeof v !== 'string') return fail(406, 710, `The value of '${k}' must be a string`);
    // Not sendable as an HTTP header (no name, or a line break inside): refused, never delivered half.
    if (!HEADER_NAME.test(k) || /[\r\n\0]/.test(v)) return badHeaders();
    headers[k] = v;
  }
  if (JSON.stringify(headers).length > MAX_HEADERS_JSON) return fail(406, 711, 'Exceeded maximum length (2kb) of the headers: ');
  return headers;
}

/** The retry count (none: 0); form fields bring it as text. */
function readRetry(value: unknown, rule: CallbackRules['retry']): number | EmuResponse {
  if (value === undefined || value === null) return 0;
  const n = typeof value === 'string' && /^\s*\d+\s*$/.test(value) ? Number(value) : value;
  const integer = typeof n === 'number' && Number.isInteger(n);
  if (rule === 'clamp') return integer ? Math.max(0, Math.min(MAX_CALLBACK_RETRY, n)) : 0;
  if (!integer || n < 0 || n > MAX_CALLBACK_RETRY) return fail(406, 740, `Invalid retry Parameter min:0 max:${MAX_CALLBACK_RETRY}`);
  return n;
}

const isAnswer = (v: unknown): v is EmuResponse => isObj(v) && typeof v.status === 'number' && 'json' in v;

/**
 * Reads and validates the callback of a request body (see `callbackValue` for the forms accepted)
 * by the vendor's rules: a url (428/704 when missing, or the area's `missingUrl`) starting with
 * http or https (406/706) and well formed (406/704); headers an object or a `[{name, value}]` list
 * (406/708), keys up to 256 characters (709), values text (710), 2 kB in all (711); `custom` up to
 * 512 bytes as JSON (730); `retry` 0–5 (740, or clamped). No callback → `{callback: null}` (or the
 * missing-url answer when `required`).
 */
export function readCallback(body: unknown, rules: CallbackRules): CallbackRead {
  const missing = rules.missingUrl ?? urlNotSet;
  const value = callbackValue(body);
  if (value === undefined || value === null) return rules.required ? { error: missing() } : { callback: null };
  if (!isObj(value) || value.url === undefined || value.url === null || (typeof value.url === 'string' && value.url.trim() === '')) {
    return { error: missing() };
  }
  const url = value.url;
  if (typeof url !== 'string' || !/^https?:\/\//i.test(url)) return { error: fail(406, 706, "'url' parameter must start with 'http' or 'https'") };
  try {
    new URL(url);
  } catch {
    return { error: fail(406, 704, "malformed 'url' parameter, must be a valid url in 'callback'") };
  }
  const headers = readHeaders(value.headers);
  if (isAnswer(headers)) return { error: headers };
  if (value.custom !== undefined && (JSON.stringify(value.custom) ?? '').length > MAX_CUSTOM_JSON) {
    return { error: fail(406, 730, "Invalid 'custom' Parameter too big max:512b") };
  }
  const retry = readRetry(value.retry, rules.retry);
  if (typeof retry !== 'number') return { error: retry };
  const method = typeof value.method === 'string' && value.method.trim() !== '' ? value.method.trim().toUpperCase() : rules.form === 'legacy' ? 'POST' : 'JSON';
  const field = typeof value.field === 'string' && value.field !== '' ? value.field : 'data';
  const data = isObj(value.data) ? value.data : {};
  if (rules.form === 'legacy') {
    const cb: StoredCallback = { url, method, field, headers, data };
    if (value.retry !== undefined) cb.retry = retry;
    if (value.custom !== undefined) cb.custom = value.custom;
    return { callback: cb };
  }
  return {
    callback: {
      method,
      url,
      user_id: '',
      username: rules.username ?? '',
      field,
      headers,
      data,
      retry,
      scope: null,
      domain: null,
      custom: value.custom ?? null,
    },
  };
}

/** True when the value looks like a vendor callback object with a URL. */
export function isCallback(value: unknown): value is VendorCallback {
  return typeof value === 'object' && value !== null && typeof (value as { url?: unknown }).url === 'string';
}

/** The request a callback belongs to, as `GET /callbacks/{id}` names it: its scope and API host. */
export interface CallbackOrigin {
  /** `METHOD:host/endpoint`, e.g. `POST:test.pec.openapi.it/pec`. */
  scope: string;
  /** The API host, e.g. `test.pec.openapi.it`. */
  domain: string;
}

/**
 * Delivers `payload` to the callback. Resolves to the final HTTP status (null when every attempt
 * failed at the network level, or delivery is off). Never throws.
 */
export async function deliverCallback(cb: VendorCallback, payload: unknown, origin?: CallbackOrigin): Promise<number | null> {
  if (!state.enabled) return null;
  const method = (cb.method ?? 'JSON').toUpperCase();
  const text = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);
  // The area says which request fired it; else the standard callback form names it (`StoredCallback`).
  const stored = cb as VendorCallback & { scope?: unknown; domain?: unknown };
  const extra = { scope: origin?.scope ?? stored.scope, domain: origin?.domain ?? stored.domain };
  const started = Date.now();
  const run: CallbackRun = {
    id: hexId(`callback:${++state.seq}:${started}:${cb.url}`),
    scope: text(extra.scope),
    domain: text(extra.domain),
    url: cb.url,
    method,
    field: cb.field || 'data',
    headers: { ...(cb.headers ?? {}) },
    data: payload,
    custom: cb.custom ?? null,
    active: true,
    createdAt: new Date(started).toISOString(),
    startedAt: new Date(started).toISOString(),
    completedAt: null,
    httpResponseCode: null,
    elapsedTime: 0,
    attempt: 0,
    retry: 0,
  };
  state.runs.push(run);
  if (state.runs.length > MAX_RUNS) state.runs.splice(0, state.runs.length - MAX_RUNS);
  const status = await deliverCallbackPayload(cb, payload, {
    backoffMs: state.backoffMs,
    onAttempt: (attempt, status, error) => {
      state.log.push({ url: cb.url, method, status, attempt, at: new Date().toISOString(), ...(error ? { error } : {}) });
      run.attempt = attempt;
      run.retry = attempt - 1;
      run.httpResponseCode = status;
    },
  });
  const done = Date.now();
  run.active = false;
  run.completedAt = new Date(done).toISOString();
  run.elapsedTime = done - started;
  return status;
}
