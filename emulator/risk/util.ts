/**
 * Small helpers shared by the risk area's families: body access, how the area reads callbacks,
 * deterministic pseudo-random numbers, dates and the PDF answer.
 */
import type { EmuRequest, EmuResponse } from '../core.ts';
import { fail } from '../core.ts';
import { readCallback, type CallbackRead, type CallbackRules } from '../callbacks.ts';
import { isObj, type Obj } from '../../contract/values.ts';

export type { StoredCallback } from '../callbacks.ts';

/** 24-hex Mongo-style ids, as every risk record uses. */
export const HEX24 = /^[0-9a-f]{24}$/i;

/** The parsed body when it is a JSON object (or form fields); an empty object otherwise. */
export const bodyOf = (req: EmuRequest): Obj => (isObj(req.body) ? req.body : {});

/** A string field; numbers are accepted and turned into text (the vendor's examples send some as numbers). */
export function str(v: unknown): string | undefined {
  if (typeof v === 'string') return v.trim() === '' ? undefined : v;
  if (typeof v === 'number' && Number.isFinite(v)) return String(v);
  return undefined;
}

/** `YYYY-MM-DD` naming a real calendar day. */
export function isIsoDate(v: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(v);
  if (!m) return false;
  const d = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])));
  return d.getUTCFullYear() === Number(m[1]) && d.getUTCMonth() === Number(m[2]) - 1 && d.getUTCDate() === Number(m[3]);
}

export const isEmail = (v: string): boolean => /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(v);

/** The vendor's answer when a callback has no url (REFERENCE §1.3: 428 error 704). */
export const callbackUrlMissing = (): EmuResponse => fail(428, 704, 'callback url required');

/**
 * Reads the `callback` of a request body with the shared reader (`../callbacks.ts`), as the risk
 * area does: `legacy` is the older risk object (method defaults to POST, stored as `{url, method,
 * field, headers, data}`), `standard` the vendor's "NewCallback" (method JSON, with `user_id`,
 * `username` '', `retry`, `scope`, `domain`, `custom`, as the IT-negativita examples show); a retry
 * above 5 is lowered to 5 (the layer asks for more); no url → `missingUrl` (428/704 by default).
 */
export function readRiskCallback(body: Obj, form: CallbackRules['form'], missingUrl: () => EmuResponse = callbackUrlMissing): CallbackRead {
  return readCallback(body, { form, retry: 'clamp', missingUrl });
}

/** A later timestamp than `prev` (`now` in seconds): state changes always move `last_update_timestamp` forward. */
export const bump = (prev: number, now: number): number => Math.max(now, prev + 1);

/** `YYYY-MM-DD HH:mm:ss` (UTC), the format of IT-negativita dates. */
export const sqlDate = (d: Date): string => d.toISOString().replace('T', ' ').slice(0, 19);

/** 32-hex name of a stored upload, as the vendor names files (`f962…a490.pdf`). */
export function storedFileName(): string {
  let s = '';
  for (let i = 0; i < 32; i++) s += Math.floor(Math.random() * 16).toString(16);
  return `${s}.pdf`;
}

/** 32-bit FNV-1a hash of a string. */
export function hash32(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 16777619) >>> 0;
  return h;
}

/** A deterministic random generator (mulberry32) seeded by a string: same seed, same sequence. */
export function rng(seed: string): () => number {
  let a = hash32(seed);
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export const pick = <T>(r: () => number, items: readonly T[]): T => items[Math.floor(r() * items.length)];

/** A PDF answer, named by `Content-Disposition`. */
export const pdfResponse = (pdf: Buffer, filename: string): EmuResponse => ({
  status: 200,
  body: pdf,
  contentType: 'application/pdf',
  headers: { 'content-disposition': `attachment; filename="${filename}"` },
});

/** The list endpoints' empty answer (`no requests linked to this username: …`). */
export const noRequests = (owner: string, error = 300): EmuResponse => fail(404, error, `no requests linked to this username: ${owner}`);
