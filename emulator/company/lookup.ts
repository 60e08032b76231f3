/**
 * Resolves the path parameter of an Italian company endpoint (VAT number, fiscal code or company
 * id, as the parameter's name allows) to a company, or says why not: missing, not valid (bad
 * checksum or format), or no company.
 */
import { isValidItalianVat, isValidPersonFiscalCode } from '../../contract/checksums.ts';
import { vatOfCompanyId } from '../company-ids.ts';
import type { CompanyProfile } from './model.ts';
import { isRegistered } from './ownership.ts';
import { profileOf } from './profile.ts';
import { pinnedByOwnerTaxCode } from './sandbox.ts';

export type Lookup = { kind: 'found'; profile: CompanyProfile } | { kind: 'missing' } | { kind: 'invalid' } | { kind: 'notFound'; value: string };

export interface Accepts {
  /** 11-digit VAT numbers (companies' fiscal codes are the same number). */
  vat?: boolean;
  /** 16-character person fiscal codes (sole proprietorships). */
  personTaxCode?: boolean;
  /** 24-hex company ids. */
  id?: boolean;
}

export const ANY: Accepts = { vat: true, personTaxCode: true, id: true };
export const NO_ID: Accepts = { vat: true, personTaxCode: true, id: false };

export function lookupCompany(raw: string | undefined, accepts: Accepts = ANY): Lookup {
  const value = (raw ?? '').trim();
  if (value === '') return { kind: 'missing' };
  const upper = value.toUpperCase();
  const vatLike = upper.replace(/^IT(?=\d{11}$)/, '');
  if (/^\d{11}$/.test(vatLike)) {
    if (!accepts.vat || !isValidItalianVat(vatLike)) return { kind: 'invalid' };
    return isRegistered(vatLike) ? { kind: 'found', profile: profileOf(vatLike) } : { kind: 'notFound', value };
  }
  if (/^[0-9A-F]{24}$/.test(upper)) {
    if (!accepts.id) return { kind: 'invalid' };
    const vat = vatOfCompanyId(upper);
    return vat && isRegistered(vat) ? { kind: 'found', profile: profileOf(vat) } : { kind: 'notFound', value };
  }
  if (upper.length === 16) {
    if (!accepts.personTaxCode || !isValidPersonFiscalCode(upper)) return { kind: 'invalid' };
    const pinned = pinnedByOwnerTaxCode(upper);
    return pinned ? { kind: 'found', profile: profileOf(pinned.vat) } : { kind: 'notFound', value };
  }
  return { kind: 'invalid' };
}
