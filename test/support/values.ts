/**
 * Reading vendor records (`Record<string, unknown>`) in tests: the one place a field becomes text for
 * an expected value, so an object never turns into '[object Object]' by accident.
 */

/** The field as text when it is a string or a number (codes the vendor sends as numbers keep their digits), '' otherwise. */
export function textOf(v: unknown): string {
  return typeof v === 'string' ? v : typeof v === 'number' ? String(v) : '';
}
