/**
 * Italian municipality names and Istat codes as the postal area writes them, for the layer (its
 * postal subgraph) and the emulator (its postal area) alike.
 */

/** Lower case without accents or punctuation, for name matching (`Forlì` and `FORLI'` fold alike). */
export const fold = (s: string): string =>
  s
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, ' ')
    .trim();

/** A 6-digit Istat code from either form (`58091`, `058091`, 58091); null when it is not one. */
export function istat6(v: unknown): string | null {
  const s = typeof v === 'number' ? String(Math.trunc(v)) : typeof v === 'string' ? v.trim() : '';
  return /^\d{1,6}$/.test(s) ? s.padStart(6, '0') : null;
}

/** An Istat code as the vendor writes it: without leading zeros (`058091` → `58091`). */
export const vendorIstat = (istat: string): string => String(Number.parseInt(istat, 10));
