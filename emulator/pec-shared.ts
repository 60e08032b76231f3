/** Small helpers of the emulator's two PEC areas (`pec/`, `pecmassiva/`): body access, ids, dates, text/plain and PDF answers. */
import type { EmuRequest, EmuResponse } from './core.ts';
import { isObj, type Obj } from '../contract/values.ts';

export const bodyOf = (req: EmuRequest): Obj => (isObj(req.body) ? req.body : {});

/** A non-empty string field (numbers as text). */
export function str(v: unknown): string | undefined {
  if (typeof v === 'string') return v.trim() === '' ? undefined : v.trim();
  if (typeof v === 'number' && Number.isFinite(v)) return String(v);
  return undefined;
}

export const HEX24 = /^[0-9a-f]{24}$/i;

/** `dd/mm/yyyy` of an epoch-ms time (UTC), the vendor's date format. */
export function ddmmyyyy(ms: number): string {
  const d = new Date(ms);
  return `${String(d.getUTCDate()).padStart(2, '0')}/${String(d.getUTCMonth() + 1).padStart(2, '0')}/${d.getUTCFullYear()}`;
}

/** A `dd/mm/yyyy` text naming a real day. */
export function isDdMmYyyy(v: string): boolean {
  const m = /^(\d{2})\/(\d{2})\/(\d{4})$/.exec(v);
  if (!m) return false;
  const d = new Date(Date.UTC(Number(m[3]), Number(m[2]) - 1, Number(m[1])));
  return d.getUTCFullYear() === Number(m[3]) && d.getUTCMonth() === Number(m[2]) - 1 && d.getUTCDate() === Number(m[1]);
}

/** Adds whole years to an epoch-ms time (UTC). */
export function plusYears(ms: number, years: number): number {
  const d = new Date(ms);
  d.setUTCFullYear(d.getUTCFullYear() + years);
  return d.getTime();
}

/** A text/plain error, as the vendor answers the PDF endpoints' errors. */
export const textError = (status: number, text: string): EmuResponse => ({ status, body: text, contentType: 'text/plain; charset=utf-8' });

/** A PDF answer, named by `Content-Disposition`. */
export const pdfAnswer = (pdf: Buffer, filename: string): EmuResponse => ({
  status: 200,
  body: pdf,
  contentType: 'application/pdf',
  headers: { 'content-disposition': `attachment; filename="${filename}"` },
});

/** A short deterministic digit string from a seed (activation codes, user ids). */
export function digits(seed: string, n: number): string {
  let h = 0x811c9dc5;
  let out = '';
  for (let round = 0; out.length < n; round++) {
    for (const ch of `${seed}#${round}`) h = Math.imul(h ^ ch.charCodeAt(0), 16777619) >>> 0;
    out += String(h % 100000).padStart(5, '0');
  }
  return out.slice(0, n);
}
