/**
 * PDF uploads (identity documents, signed delegations, signed contracts): a base64 PDF checked for
 * its magic bytes and a size limit before any upstream call. `<AREA>_MAX_PDF_BYTES` sets an area's
 * limit (e.g. `RISK_MAX_PDF_BYTES`); 5 MB by default.
 */
import { badUserInput } from '../errors.ts';
import { areaSetting, SETTINGS_SCHEMA, settingsOf, type SettingsSource } from '../../../platform/settings.ts';

/** The default size limit of an uploaded PDF (decoded bytes). */
export const DEFAULT_MAX_PDF_BYTES: number = SETTINGS_SCHEMA.RISK_MAX_PDF_BYTES.default;

/** An area's PDF size limit: `<AREA>_MAX_PDF_BYTES` of `env`, else 5 MB. */
export function maxPdfBytes(env: SettingsSource, area: string): number {
  return areaSetting(settingsOf(env), area, 'MAX_PDF_BYTES');
}

const B64 = /^[A-Za-z0-9+/]*={0,2}$/;

/**
 * A base64 PDF: optional `data:application/pdf;base64,` prefix and whitespace are dropped; the
 * decoded bytes must start with `%PDF-` and be at most `maxBytes`. Returns the clean base64.
 */
export function base64Pdf(value: string, field: string, maxBytes = DEFAULT_MAX_PDF_BYTES): string {
  let v = (value ?? '').trim();
  if (v === '') throw badUserInput(`${field} is required: a PDF file, base64-encoded`, field);
  const dataUrl = /^data:([^;,]*)(;[^,]*)?,/i.exec(v);
  if (dataUrl) {
    if (dataUrl[1] && dataUrl[1].toLowerCase() !== 'application/pdf') throw badUserInput(`${field} must be a PDF (got ${dataUrl[1]})`, field);
    if (!/;base64/i.test(dataUrl[2] ?? '')) throw badUserInput(`${field} must be base64-encoded`, field);
    v = v.slice(dataUrl[0].length);
  }
  v = v.replace(/\s+/g, '').replace(/-/g, '+').replace(/_/g, '/');
  if (v.length % 4 === 1 || !B64.test(v)) throw badUserInput(`${field} is not valid base64`, field);
  // Size before decoding, so an oversized value is refused without allocating it.
  const decodedSize = Math.floor((v.length * 3) / 4) - (v.endsWith('==') ? 2 : v.endsWith('=') ? 1 : 0);
  if (decodedSize > maxBytes) throw badUserInput(`${field} is larger than ${Math.floor(maxBytes / 1024)} KiB`, field, { maxBytes });
  const bytes = Buffer.from(v, 'base64');
  if (bytes.length < 8 || bytes.subarray(0, 5).toString('latin1') !== '%PDF-') throw badUserInput(`${field} is not a PDF file (it must start with %PDF-)`, field);
  return bytes.toString('base64');
}
