/**
 * The emulator's callbacks, delivered as the vendor does (`deliverCallbackPayload`): every attempt
 * is logged for the control API, and delivery can be switched off (to test pollers).
 */
import { deliverCallbackPayload } from '../subgraphs/upstream/callback-delivery.ts';

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
  return deliverCallbackPayload(cb, payload, {
    backoffMs: state.backoffMs,
    onAttempt: (attempt, status, error) => {
      state.log.push({ url: cb.url, method, status, attempt, at: new Date().toISOString(), ...(error ? { error } : {}) });
    },
  });
}
