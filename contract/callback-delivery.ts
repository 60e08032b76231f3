/**
 * Delivery of a callback the way the Openapi suite does it (REFERENCE §1.4): `method` "JSON" posts
 * the JSON body; "POST" posts `application/x-www-form-urlencoded` with the JSON in the form field
 * named by `field` (default `data`); the given headers are added; `retry` further attempts on
 * network errors, 429 and 5xx, with doubling back-off. The emulator delivers its callbacks with it,
 * and the layer relays deliveries to a caller's own callback with it.
 */
import { request, type Dispatcher } from 'undici';

export interface CallbackTarget {
  url: string;
  /** "JSON" (default) or "POST" (form). */
  method?: string;
  /** Form field carrying the JSON when method is "POST". @default 'data' */
  field?: string;
  headers?: Record<string, string>;
  /** Further attempts after the first (0–10). @default 0 */
  retry?: number;
}

export interface DeliveryOptions {
  /** First back-off between attempts (doubles). @default 500 */
  backoffMs?: number;
  /** Per-attempt timeout. @default 30000 (the vendor's) */
  timeoutMs?: number;
  /** Extra headers (e.g. a user agent); the target's own headers win. */
  headers?: Record<string, string>;
  /** Told about every attempt (status null: no answer). */
  onAttempt?: (attempt: number, status: number | null, error?: string) => void;
  /** Dispatcher to deliver through (e.g. one refusing private addresses). @default undici's global dispatcher */
  dispatcher?: Dispatcher;
}

/** Delivers `payload`; resolves to the final HTTP status, or null when no attempt got an answer. Never throws. */
export async function deliverCallbackPayload(target: CallbackTarget, payload: unknown, opts: DeliveryOptions = {}): Promise<number | null> {
  const json = JSON.stringify(payload);
  const headers: Record<string, string> = { ...(opts.headers ?? {}), ...(target.headers ?? {}) };
  let body: string;
  if ((target.method ?? 'JSON').toUpperCase() === 'POST') {
    headers['content-type'] = 'application/x-www-form-urlencoded';
    body = new URLSearchParams({ [target.field || 'data']: json }).toString();
  } else {
    headers['content-type'] = 'application/json';
    body = json;
  }
  const timeout = opts.timeoutMs ?? 30_000;
  const attempts = 1 + Math.max(0, Math.min(10, target.retry ?? 0));
  let last: number | null = null;
  for (let attempt = 1; attempt <= attempts; attempt++) {
    try {
      const res = await request(target.url, {
        method: 'POST',
        headers,
        body,
        headersTimeout: timeout,
        bodyTimeout: timeout,
        ...(opts.dispatcher ? { dispatcher: opts.dispatcher } : {}),
      });
      await res.body.dump();
      last = res.statusCode;
      opts.onAttempt?.(attempt, last);
      if (last < 500 && last !== 429) return last;
    } catch (err) {
      opts.onAttempt?.(attempt, null, (err as Error).message);
    }
    if (attempt < attempts) await new Promise((r) => setTimeout(r, (opts.backoffMs ?? 500) * 2 ** (attempt - 1)));
  }
  return last;
}
