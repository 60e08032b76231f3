/**
 * Callback delivery as the vendor describes it (REFERENCE §1.4): `method` "JSON" posts the JSON
 * body; "POST" posts `application/x-www-form-urlencoded` with the JSON in the form field named by
 * `field` (default `data`). The given `headers` are added; `retry` (default 0) retries temporary
 * and network failures with growing back-off. Every delivery is logged for the control API, and
 * delivery can be switched off (to test pollers).
 */
import { request } from 'undici';

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

const state = { enabled: true, backoffMs: 200, log: [] as DeliveryRecord[] };

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
  clearLog(): void {
    state.log.length = 0;
  },
};

/** True when the value looks like a vendor callback object with a URL. */
export function isCallback(value: unknown): value is VendorCallback {
  return typeof value === 'object' && value !== null && typeof (value as { url?: unknown }).url === 'string';
}

/**
 * Delivers `payload` to the callback. Resolves to the final HTTP status (null when every attempt
 * failed at the network level, or delivery is off). Never throws.
 */
export async function deliverCallback(cb: VendorCallback, payload: unknown): Promise<number | null> {
  if (!state.enabled) return null;
  const method = (cb.method ?? 'JSON').toUpperCase();
  const json = JSON.stringify(payload);
  const headers: Record<string, string> = { ...(cb.headers ?? {}) };
  let body: string;
  if (method === 'POST') {
    headers['content-type'] = 'application/x-www-form-urlencoded';
    body = new URLSearchParams({ [cb.field || 'data']: json }).toString();
  } else {
    headers['content-type'] = 'application/json';
    body = json;
  }
  const attempts = 1 + Math.max(0, Math.min(10, cb.retry ?? 0));
  let last: number | null = null;
  for (let attempt = 1; attempt <= attempts; attempt++) {
    const at = new Date().toISOString();
    try {
      const res = await request(cb.url, { method: 'POST', headers, body, headersTimeout: 30_000, bodyTimeout: 30_000 });
      await res.body.dump();
      last = res.statusCode;
      state.log.push({ url: cb.url, method, status: res.statusCode, attempt, at });
      if (res.statusCode < 500 && res.statusCode !== 429) return res.statusCode;
    } catch (err) {
      state.log.push({ url: cb.url, method, status: null, attempt, at, error: (err as Error).message });
    }
    if (attempt < attempts) await new Promise((r) => setTimeout(r, state.backoffMs * 2 ** (attempt - 1)));
  }
  return last;
}
