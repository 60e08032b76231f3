/**
 * Reads and validates the `callback` object of company requests (POST IT-full|aml|marketing|
 * stakeholders, POST /monitor) with the vendor's error numbers, and gives it the stored form the
 * vendor echoes back (`{method,url,user_id,username,field,headers,data,retry,scope,domain,custom}`).
 */
import { fail, type EmuResponse } from '../core.ts';
import type { VendorCallback } from '../callbacks.ts';

export interface StoredCallback extends VendorCallback {
  method: string;
  url: string;
  user_id: string;
  username: string;
  field: string;
  headers: Record<string, string>;
  data: unknown;
  retry: number;
  scope: null;
  domain: null;
  custom: unknown;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The stored callback, or the error answer. `value` undefined → `{ callback: null }`. */
export function readCallback(value: unknown, owner: string): { callback: StoredCallback | null } | { error: EmuResponse } {
  if (value === undefined || value === null) return { callback: null };
  if (!isObject(value) || value.url === undefined || value.url === null || value.url === '') {
    return { error: fail(428, 704, "url not set in 'callback', required") };
  }
  const url = value.url;
  if (typeof url !== 'string' || !/^https?:\/\//i.test(url)) return { error: fail(406, 706, "'url' parameter must start with 'http' or 'https'") };
  try {
    new URL(url);
  } catch {
    return { error: fail(406, 704, "malformed 'url' parameter, must be a valid url in 'callback'") };
  }
  const headers: Record<string, string> = {};
  if (value.headers !== undefined && value.headers !== null) {
    if (!isObject(value.headers)) return { error: fail(406, 708, 'Headers not valid, must be an object with key : value') };
    for (const [k, v] of Object.entries(value.headers)) {
      if (k.length > 256) return { error: fail(406, 709, `Exceeded maximum length (256 chr) of the key: ${k.slice(0, 32)}…`) };
      if (typeof v !== 'string') return { error: fail(406, 710, `The value of '${k}' must be a string`) };
      headers[k] = v;
    }
    if (JSON.stringify(headers).length > 2048) return { error: fail(406, 711, 'Exceeded maximum length (2kb) of the headers: ') };
  }
  if (value.custom !== undefined && JSON.stringify(value.custom).length > 512) return { error: fail(406, 730, "Invalid 'custom' Parameter too big max:512b") };
  let retry = 0;
  if (value.retry !== undefined) {
    if (typeof value.retry !== 'number' || !Number.isInteger(value.retry) || value.retry < 0 || value.retry > 5) {
      return { error: fail(406, 740, 'Invalid retry Parameter min:0 max:5') };
    }
    retry = value.retry;
  }
  return {
    callback: {
      method: typeof value.method === 'string' && value.method !== '' ? value.method.toUpperCase() : 'JSON',
      url,
      user_id: '',
      username: owner,
      field: typeof value.field === 'string' && value.field !== '' ? value.field : 'data',
      headers,
      data: isObject(value.data) ? value.data : {},
      retry,
      scope: null,
      domain: null,
      custom: value.custom ?? null,
    },
  };
}
