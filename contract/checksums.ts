/**
 * Italian identifier checksums: VAT numbers (partita IVA) and fiscal codes (codice fiscale).
 * Pure functions, shared by the GraphQL layer (input validation before any money is spent) and the
 * emulator (generated data always carries valid checksums).
 *
 * - VAT number: 11 digits; the last is a Luhn-style check digit over the first ten (digits in odd
 *   positions count as they are, digits in even positions are doubled, minus 9 when above 9;
 *   check = (10 - sum % 10) % 10).
 * - Person fiscal code: 16 characters `SSSNNNYYMDDZCCCX`: surname and name letters, two-digit
 *   year, month letter, day (+40 for women), cadastral (Belfiore) code of the birth town, check
 *   letter. Digits may be replaced by the letters `LMNPQRSTUV` (omocodia).
 * - Company fiscal code: the 11-digit numeric form, validated like a VAT number.
 */

const VAT_RE = /^\d{11}$/;

/** The check digit of a VAT number, from its first ten digits. */
export function vatCheckDigit(firstTen: string): number {
  if (!/^\d{10}$/.test(firstTen)) throw new Error('vatCheckDigit needs exactly 10 digits');
  let sum = 0;
  for (let i = 0; i < 10; i++) {
    const d = firstTen.charCodeAt(i) - 48;
    if (i % 2 === 0) sum += d;
    else sum += d * 2 > 9 ? d * 2 - 9 : d * 2;
  }
  return (10 - (sum % 10)) % 10;
}

/**
 * True for an 11-digit Italian VAT number with a correct check digit. Surrounding whitespace and an
 * `IT` prefix are tolerated; all zeros is refused.
 */
export function isValidItalianVat(vat: string): boolean {
  const v = vat.trim().replace(/^IT/i, '');
  if (!VAT_RE.test(v) || /^0+$/.test(v)) return false;
  return vatCheckDigit(v.slice(0, 10)) === v.charCodeAt(10) - 48;
}

/** Completes ten digits into a valid VAT number. */
export function makeItalianVat(firstTen: string): string {
  return firstTen + String(vatCheckDigit(firstTen));
}

/** Values of characters in odd positions (1st, 3rd, …) for the fiscal-code check letter. */
const ODD_VALUES: Record<string, number> = {
  '0': 1,
  '1': 0,
  '2': 5,
  '3': 7,
  '4': 9,
  '5': 13,
  '6': 15,
  '7': 17,
  '8': 19,
  '9': 21,
  A: 1,
  B: 0,
  C: 5,
  D: 7,
  E: 9,
  F: 13,
  G: 15,
  H: 17,
  I: 19,
  J: 21,
  K: 2,
  L: 4,
  M: 18,
  N: 20,
  O: 11,
  P: 3,
  Q: 6,
  R: 8,
  S: 12,
  T: 14,
  U: 16,
  V: 10,
  W: 22,
  X: 25,
  Y: 24,
  Z: 23,
};

/** Value of a character in an even position (2nd, 4th, …): digits as they are, A=0 … Z=25. */
function evenValue(ch: string): number {
  const c = ch.charCodeAt(0);
  return c >= 48 && c <= 57 ? c - 48 : c - 65;
}

/** The check letter of a person fiscal code, from its first fifteen characters. */
export function fiscalCodeCheckChar(firstFifteen: string): string {
  const s = firstFifteen.toUpperCase();
  if (!/^[A-Z0-9]{15}$/.test(s)) throw new Error('fiscalCodeCheckChar needs exactly 15 letters or digits');
  let sum = 0;
  for (let i = 0; i < 15; i++) {
    const ch = s[i];
    sum += i % 2 === 0 ? ODD_VALUES[ch] : evenValue(ch);
  }
  return String.fromCharCode(65 + (sum % 26));
}

/** Month letters of the fiscal code, January to December. */
export const FISCAL_MONTH_LETTERS = 'ABCDEHLMPRST';
/** Letters standing for digits 0–9 in omocodia variants. */
const OMOCODIA = 'LMNPQRSTUV';
/** Positions (0-based) that hold digits in the base form of a fiscal code. */
const DIGIT_POSITIONS = [6, 7, 9, 10, 12, 13, 14];

const PERSON_RE = /^[A-Z]{6}[0-9LMNPQRSTUV]{2}[ABCDEHLMPRST][0-9LMNPQRSTUV]{2}[A-Z][0-9LMNPQRSTUV]{3}[A-Z]$/;

/** Replaces omocodia letters by their digits. */
function baseForm(code: string): string {
  const chars = code.split('');
  for (const i of DIGIT_POSITIONS) {
    const k = OMOCODIA.indexOf(chars[i]);
    if (k >= 0) chars[i] = String(k);
  }
  return chars.join('');
}

/**
 * True for a 16-character person fiscal code with a valid structure (month letter, day 1–31 or
 * 41–71, cadastral code letter + three digits, omocodia letters allowed) and a correct check
 * letter. Case-insensitive; surrounding whitespace is tolerated.
 */
export function isValidPersonFiscalCode(code: string): boolean {
  const s = code.trim().toUpperCase();
  if (!PERSON_RE.test(s)) return false;
  const base = baseForm(s);
  const day = Number(base.slice(9, 11));
  if (!((day >= 1 && day <= 31) || (day >= 41 && day <= 71))) return false;
  return fiscalCodeCheckChar(s.slice(0, 15)) === s[15];
}

/**
 * True for a valid Italian fiscal code: a 16-character person code, or the 11-digit numeric code
 * of a company (which follows the VAT number rules). Case-insensitive; whitespace tolerated.
 */
export function isValidFiscalCode(code: string): boolean {
  const cf = code.trim();
  if (VAT_RE.test(cf)) return isValidItalianVat(cf);
  return cf.length === 16 && isValidPersonFiscalCode(cf);
}

const VOWELS = 'AEIOU';

function letters(s: string): { consonants: string; vowels: string } {
  const up = s
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .toUpperCase()
    .replace(/[^A-Z]/g, '');
  let consonants = '';
  let vowels = '';
  for (const ch of up) {
    if (VOWELS.includes(ch)) vowels += ch;
    else consonants += ch;
  }
  return { consonants, vowels };
}

/** The three surname letters of a fiscal code. */
export function surnameCode(surname: string): string {
  const { consonants, vowels } = letters(surname);
  return (consonants + vowels + 'XXX').slice(0, 3);
}

/** The three name letters of a fiscal code (1st, 3rd and 4th consonant when there are four or more). */
export function nameCode(name: string): string {
  const { consonants, vowels } = letters(name);
  if (consonants.length >= 4) return consonants[0] + consonants[2] + consonants[3];
  return (consonants + vowels + 'XXX').slice(0, 3);
}

export interface FiscalCodePerson {
  surname: string;
  name: string;
  /** `YYYY-MM-DD` */
  birthDate: string;
  gender: 'M' | 'F';
  /** Cadastral (Belfiore) code of the birth town, e.g. `H501` for Roma. */
  cadastralCode: string;
}

/** Builds the (base form) fiscal code of a person, check letter included. */
export function makeFiscalCode(p: FiscalCodePerson): string {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(p.birthDate);
  if (!m) throw new Error(`birthDate must be YYYY-MM-DD: ${p.birthDate}`);
  const month = Number(m[2]);
  const day = Number(m[3]) + (p.gender === 'F' ? 40 : 0);
  if (month < 1 || month > 12) throw new Error(`bad month in ${p.birthDate}`);
  if (!/^[A-Z]\d{3}$/.test(p.cadastralCode)) throw new Error(`bad cadastral code ${p.cadastralCode}`);
  const first15 = surnameCode(p.surname) + nameCode(p.name) + m[1].slice(2) + FISCAL_MONTH_LETTERS[month - 1] + String(day).padStart(2, '0') + p.cadastralCode;
  return first15 + fiscalCodeCheckChar(first15);
}
