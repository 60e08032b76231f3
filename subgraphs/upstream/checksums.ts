/**
 * Checksums of Italian identifiers, as pure functions: the layer rejects bad input before spending
 * money, and the emulator answers "not valid" the way the REST suite does.
 */

/**
 * Italian VAT number (partita IVA): 11 digits whose last digit is a Luhn-style check digit
 * (digits in even 1-based positions are doubled, 9 subtracted when above 9). All zeros is refused.
 * Surrounding whitespace and an `IT` prefix are tolerated.
 */
export function isValidItalianVat(vat: string): boolean {
  const v = vat.trim().replace(/^IT/i, '');
  if (!/^\d{11}$/.test(v) || /^0+$/.test(v)) return false;
  let sum = 0;
  for (let i = 0; i < 10; i++) {
    let d = v.charCodeAt(i) - 48;
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return (10 - (sum % 10)) % 10 === v.charCodeAt(10) - 48;
}

/** Values of characters in odd (1-based) positions of a fiscal code; digits map like A…J. */
const ODD = [1, 0, 5, 7, 9, 13, 15, 17, 19, 21, 2, 4, 18, 20, 11, 3, 6, 8, 12, 14, 16, 10, 22, 25, 24, 23];
/** Omocodia replaces digits with these letters (0→L … 9→V). */
const OMOCODE = 'LMNPQRSTUV';
const PERSON_CF = /^[A-Z]{6}[0-9LMNPQRSTUV]{2}[ABCDEHLMPRST][0-9LMNPQRSTUV]{2}[A-Z][0-9LMNPQRSTUV]{3}[A-Z]$/;

/**
 * Italian fiscal code (codice fiscale): a person's 16-character code (structure, month letter,
 * omocodia substitutions and the final check letter are verified; case-insensitive), or a
 * company's 11-digit code (same algorithm as the VAT number).
 */
export function isValidFiscalCode(code: string): boolean {
  const cf = code.trim().toUpperCase();
  if (/^\d{11}$/.test(cf)) return isValidItalianVat(cf);
  if (!PERSON_CF.test(cf)) return false;
  // Day of birth (+40 for women) must be 1–31 or 41–71 once omocodia letters are turned back into digits.
  const digit = (ch: string): string => (OMOCODE.includes(ch) ? String(OMOCODE.indexOf(ch)) : ch);
  const day = Number(digit(cf[9] ?? '') + digit(cf[10] ?? ''));
  if (!((day >= 1 && day <= 31) || (day >= 41 && day <= 71))) return false;
  let sum = 0;
  for (let i = 0; i < 15; i++) {
    const c = cf.charCodeAt(i);
    const idx = c >= 48 && c <= 57 ? c - 48 : c - 65;
    sum += i % 2 === 0 ? (ODD[idx] ?? 0) : idx;
  }
  return String.fromCharCode(65 + (sum % 26)) === cf[15];
}
