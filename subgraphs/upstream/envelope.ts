/**
 * Decoding of every envelope variant of the REST suite (REFERENCE §1.2) into data or a typed
 * `UpstreamError` that keeps the HTTP status and the upstream error number.
 *
 * Variants handled:
 * - standard `{data, success, message, error}` (success and error);
 * - bodies without `data` (OAuth v1 token at the root, `DELETE` answers, PEC Massiva `POST /send`
 *   201 without `error`, SDI 201 `{uuid}`): the whole body is the data;
 * - invoice errors whose `data` is the string `"null"`;
 * - 404s that say `success: true` (the HTTP status wins);
 * - 204 No Content (nothing found);
 * - error bodies in text/plain or HTML (PDF endpoints, proxies).
 */
import type { Area } from '../../contract/areas.ts';
import { UpstreamError } from './errors.ts';
import { isObj } from '../../contract/values.ts';

export interface RawAnswer {
  status: number;
  contentType: string;
  text: string;
  retryAfter: number | null;
}

export interface Decoded {
  /** The payload: `data` of an envelope, or the whole body when there is no `data`. */
  data: unknown;
  /** The whole parsed body. */
  body: unknown;
}

function parse(text: string): unknown {
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

const normaliseNull = (v: unknown): unknown => (v === 'null' ? null : v);

function errorNumber(v: unknown): number | null {
  if (typeof v === 'number' && Number.isFinite(v)) return v;
  if (typeof v === 'string' && /^\d+$/.test(v)) return Number(v);
  return null;
}

/** Parses `Retry-After` (seconds or an HTTP date) into seconds. */
export function parseRetryAfter(value: string | string[] | undefined | null): number | null {
  const v = Array.isArray(value) ? value[0] : value;
  if (v === undefined || v === null || v === '') return null;
  if (/^\d+(\.\d+)?$/.test(v.trim())) return Math.ceil(Number(v));
  const when = Date.parse(v);
  return Number.isNaN(when) ? null : Math.max(0, Math.ceil((when - Date.now()) / 1000));
}

export function decodeEnvelope(area: Area, endpoint: string, answer: RawAnswer): Decoded {
  const { status } = answer;
  const fail = (message: string, code: number | null): never => {
    throw new UpstreamError('http', message, area, endpoint, status, code, answer.retryAfter);
  };
  if (status === 204) fail('No content: nothing matches', null);
  const body = parse(answer.text);

  if (status >= 400) {
    if (isObj(body)) {
      const message = typeof body.message === 'string' && body.message ? body.message : `HTTP ${status}`;
      fail(message, errorNumber(body.error));
    }
    fail(plainMessage(answer.text, status), null);
  }

  if (status < 200 || status >= 300) fail(`unexpected HTTP ${status}`, null);
  if (body === undefined) {
    if (answer.text.trim() === '') return { data: null, body: null };
    throw new UpstreamError('decode', `not JSON (${answer.contentType || 'no content type'})`, area, endpoint, status);
  }
  if (!isObj(body)) return { data: body, body };
  if (body.success === false) {
    fail(typeof body.message === 'string' && body.message ? body.message : 'request refused', errorNumber(body.error));
  }
  if ('data' in body) return { data: normaliseNull(body.data), body };
  return { data: body, body };
}

/** A short, safe message from a non-JSON error body (no HTML, bounded length). */
function plainMessage(text: string, status: number): string {
  const clean = text
    .replace(/<[^>]*>/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  return clean ? clean.slice(0, 200) : `HTTP ${status}`;
}
