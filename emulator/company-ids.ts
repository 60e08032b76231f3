/**
 * Identifiers of emulated Italian companies.
 *
 * - Every valid VAT number maps to a "core" number (a bijection over the first ten digits, a
 *   small Feistel network), so the generator can give structure to the space of VAT numbers
 *   (ownership trees, see `company/ownership.ts`) while the numbers themselves look unrelated.
 * - The 24-hex company id is reversible: 14 hex of a hash of the VAT, then the VAT number masked
 *   by that hash. An id decodes back to its VAT without any registry, and a forged id is refused.
 */
import { hexId } from './core.ts';
import { isValidItalianVat, makeItalianVat } from '../contract/checksums.ts';
import { hash32 } from './random.ts';

const HALF = 100_000;
const ROUNDS = 4;

const round = (value: number, r: number): number => hash32(`feistel:${r}:${value}`) % HALF;

/** Scrambles a number in [0, 10^10) (bijective). */
export function scramble(core: number): number {
  let left = Math.floor(core / HALF);
  let right = core % HALF;
  for (let r = 0; r < ROUNDS; r++) [left, right] = [right, (left + round(right, r)) % HALF];
  return left * HALF + right;
}

/** Inverse of `scramble`. */
export function unscramble(value: number): number {
  let left = Math.floor(value / HALF);
  let right = value % HALF;
  for (let r = ROUNDS - 1; r >= 0; r--) [left, right] = [(right - round(left, r) + HALF) % HALF, left];
  return left * HALF + right;
}

/** The VAT number of a core number. */
export const vatOfCore = (core: number): string => makeItalianVat(String(scramble(core)).padStart(10, '0'));

/** The core number of a VAT number (its check digit ignored). */
export const coreOfVat = (vat: string): number => unscramble(Number(vat.slice(0, 10)));

/** Ids that the vendor's examples give to real companies, kept so the examples work as they are. */
const FIXED_IDS: Record<string, string> = {
  '12485671007': '60b4a85585e34e615c569ef5',
};
const FIXED_ALIASES: Record<string, string> = {
  '60b4a85585e34e615c569ef5': '12485671007',
  '60d1bfc731177b0a092cdfc1': '12485671007',
};

const MASK_SPACE = 16n ** 10n;

function maskOf(tag: string): bigint {
  return BigInt(`0x${hexId(`mask:${tag}`).slice(0, 10)}`) % MASK_SPACE;
}

/** The company id of a VAT number (24 hex, stable, reversible). */
export function companyIdOfVat(vat: string): string {
  const fixed = FIXED_IDS[vat];
  if (fixed) return fixed;
  const tag = hexId(`company:${vat}`).slice(0, 14);
  const encoded = BigInt(vat) ^ maskOf(tag);
  return tag + encoded.toString(16).padStart(10, '0');
}

/** The VAT number of a company id, or null when the id was not issued by `companyIdOfVat`. */
export function vatOfCompanyId(id: string): string | null {
  const lower = id.toLowerCase();
  const alias = FIXED_ALIASES[lower];
  if (alias) return alias;
  if (!/^[0-9a-f]{24}$/.test(lower)) return null;
  const tag = lower.slice(0, 14);
  const value = BigInt(`0x${lower.slice(14)}`) ^ maskOf(tag);
  if (value >= 100_000_000_000n) return null;
  const vat = value.toString().padStart(11, '0');
  if (!isValidItalianVat(vat)) return null;
  return companyIdOfVat(vat) === lower ? vat : null;
}
