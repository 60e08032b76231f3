/**
 * Input checks of the PEC area, all before any paid call (`BAD_USER_INPUT` with the field named):
 * address form, box type (either spelling), fiscal codes, dates, sizes, PDFs (base64, `%PDF-`, size).
 */
import { badUserInput } from '../runtime/errors.ts';
import { email, isoDate, personFiscalCode, requiredText, vatOrFiscalCode } from '../runtime/validate.ts';
import { base64Pdf } from '../runtime/tracking/uploads.ts';
import type {
  EnlargeMailboxInput,
  MailboxBoxType,
  NotifyCompanyRegisterInput,
  PecIdentityDocumentInput,
  PecIdentityDocumentType,
  RegisterMailboxInput,
} from './__generated__/resolvers-types.ts';
import { isStandardFamily, vendorDay } from './model.ts';
import { pecBoxFamily, type PecProviderDomains } from '../../contract/pec-domains.ts';
import { boxTypeWord, providerDomains, type BoxType } from './upstream.ts';
import type { SettingsSource } from '../../platform/settings.ts';

/** A full PEC address `<box>@<domain>`: 3–64 letters, digits, `.`, `_`, `-` before the `@`, a dotted domain. */
const ADDRESS = /^[a-z0-9][a-z0-9._-]{1,62}[a-z0-9]@[a-z0-9-]+(\.[a-z0-9-]+)+$/;

export function pecAddress(value: string | null | undefined, field = 'address'): string {
  const v = (value ?? '').trim().toLowerCase();
  if (!ADDRESS.test(v) || v.length > 254) throw badUserInput(`${field} must be a certified address <box>@<provider domain> (e.g. mario.rossi@legalmail.it)`, field);
  return v;
}

export function domainName(value: string | null | undefined, field = 'domain'): string {
  const v = (value ?? '').trim().toLowerCase().replace(/^.*@/, '');
  if (!/^[a-z0-9-]+(\.[a-z0-9-]+)+$/.test(v) || v.length > 253) throw badUserInput(`${field} must be a domain (e.g. legalmail.it) or an address`, field);
  return v;
}

/** The schema's box type (either spelling) in the contract's word. */
export function boxType(value: MailboxBoxType): BoxType {
  if (value === 'DOMICILIODIGITALE') return 'DIGITALDOMICILE';
  if (value === 'PECMASSIVA') return 'PECBULK';
  return value;
}

export const MAILBOX_ID = /^[0-9a-f]{24}$/;

export function pecId(value: string, field = 'id'): string {
  const v = (value ?? '').trim().toLowerCase();
  if (!MAILBOX_ID.test(v)) throw badUserInput(`${field} must be 24 hexadecimal characters`, field);
  return v;
}

const code2 = (value: string | null | undefined, field: string): string => {
  const v = (value ?? '').trim().toUpperCase();
  if (!/^[A-Z]{2}$/.test(v)) throw badUserInput(`${field} must be a two-letter code`, field);
  return v;
};

const phone = (value: string, field: string): string => {
  const v = value.trim();
  if (!/^\+?[0-9][0-9 ]{5,19}$/.test(v)) throw badUserInput(`${field} must be a phone number (digits, spaces, a leading +)`, field);
  return v.replace(/\s+/g, '');
};

/**
 * An address whose domain serves its box type (standard family in the standard provider domain,
 * DIGITALDOMICILE and PECBULK in their own): else `BAD_USER_INPUT` on `input.address`, with
 * `extensions.boxType` and `extensions.allowedDomains`, before any call (the availability check
 * cannot tell it, and the registration would be refused after it).
 */
export function domainServesBoxType(address: string, type: BoxType, domains: PecProviderDomains): void {
  const family = pecBoxFamily(type);
  if (family === null) return;
  const allowed = domains[family];
  const domain = address.slice(address.lastIndexOf('@') + 1);
  if (allowed.includes(domain)) return;
  throw badUserInput(`input.address: a ${type} mailbox is registered in ${allowed.join(' or ')}, not in ${domain}`, 'input.address', {
    boxType: type,
    allowedDomains: [...allowed],
  });
}

/** The vendor body of `POST /pec` (the callback is the kit's). */
export function registerBody(
  input: RegisterMailboxInput,
  env: SettingsSource,
  domains: PecProviderDomains = providerDomains(env),
  /** Today, `YYYY-MM-DD`, for the identity document's dates. @default the current UTC day */
  today: string = new Date().toISOString().slice(0, 10),
): { body: Record<string, unknown>; address: string; type: BoxType } {
  const address = pecAddress(input.address, 'input.address');
  const type = boxType(input.boxType);
  domainServesBoxType(address, type, domains);
  const a = input.applicant;
  const h = input.holder;
  const birth = isoDate(a.birthDate, 'input.applicant.birthDate');
  const postal = (h.postalCode ?? '').trim();
  if (!/^\d{5}$/.test(postal)) throw badUserInput('input.holder.postalCode must be 5 digits', 'input.holder.postalCode');
  const holderCode =
    h.taxCodeOrVat === null || h.taxCodeOrVat === undefined || h.taxCodeOrVat.trim() === '' ? '' : vatOrFiscalCode(h.taxCodeOrVat, 'input.holder.taxCodeOrVat').code;
  const body: Record<string, unknown> = {
    casella_pec: address,
    tipo_casella: boxTypeWord(env, type),
    tipo_cliente: input.customerType,
    nome_richiedente: requiredText(a.firstName, 'input.applicant.firstName', 100),
    cognome_richiedente: requiredText(a.lastName, 'input.applicant.lastName', 100),
    email: email(a.email, 'input.applicant.email'),
    telefono: phone(a.phone, 'input.applicant.phone'),
    codice_fiscale_richiedente: personFiscalCode(a.taxCode, 'input.applicant.taxCode'),
    data_nascita_richiedente: vendorDay(birth),
    sesso_richiedente: a.gender,
    nazione_nascita_richiedente: code2(a.birthCountry, 'input.applicant.birthCountry'),
    provincia_nascita_richiedente: a.birthProvince ? code2(a.birthProvince, 'input.applicant.birthProvince') : '',
    denominazione_titolare: h.companyName ? requiredText(h.companyName, 'input.holder.companyName', 200) : '',
    cf_piva_titolare: holderCode,
    indirizzo_titolare: requiredText(h.address, 'input.holder.address', 200),
    comune_titolare: requiredText(h.city, 'input.holder.city', 100),
    cap_titolare: postal,
    nazione_titolare: code2(h.country, 'input.holder.country'),
    provincia_titolare: code2(h.province, 'input.holder.province'),
    autorinnovo: input.autoRenew === true,
    ...customerSubtype(input),
    ...(a.birthCity ? { comune_nascita_richiedente: requiredText(a.birthCity, 'input.applicant.birthCity', 100) } : {}),
    ...(a.mobile ? { cellulare: phone(a.mobile, 'input.applicant.mobile') } : {}),
    ...identityDocument(a.identityDocument, today),
  };
  return { body, address, type };
}

/** The vendor's words for the identity document kinds. */
const DOCUMENT_WORDS: Readonly<Record<PecIdentityDocumentType, string>> = { IDENTITY_CARD: 'CARTA_D_IDENTITA', DRIVING_LICENSE: 'PATENTE', PASSPORT: 'PASSAPORTO' };

/** `sottotipo_cliente` (and `sottotipo_cliente_altro`, only for `X`, other). */
function customerSubtype(input: RegisterMailboxInput): Record<string, string> {
  const other = input.customerSubtypeOther?.trim() ?? '';
  if (other !== '' && input.customerSubtype !== 'X') {
    throw badUserInput('input.customerSubtypeOther is only for customerSubtype X (other)', 'input.customerSubtypeOther');
  }
  if (!input.customerSubtype) return {};
  if (input.customerSubtype === 'X' && other === '') throw badUserInput('input.customerSubtypeOther: say what the subtype is (customerSubtype X)', 'input.customerSubtypeOther');
  return {
    sottotipo_cliente: input.customerSubtype,
    ...(other !== '' ? { sottotipo_cliente_altro: requiredText(other, 'input.customerSubtypeOther', 100) } : {}),
  };
}

/**
 * The identity document's vendor fields (`tipo_documento`, `numero_documento`, `documento_rilasciato_da`,
 * `data_rilascio_documento`, `data_scadenza_documento`, dates as dd/mm/yyyy): issued by `today` at the
 * latest, expiring after its issue and not before `today` (`YYYY-MM-DD`).
 */
function identityDocument(d: PecIdentityDocumentInput | null | undefined, today: string): Record<string, string> {
  if (!d) return {};
  const f = 'input.applicant.identityDocument';
  const number = requiredText(d.number, `${f}.number`, 30).toUpperCase();
  if (!/^[A-Z0-9][A-Z0-9 -]{2,28}[A-Z0-9]$/.test(number)) throw badUserInput(`${f}.number must be 4–30 letters, digits, spaces or -`, `${f}.number`);
  const issued = d.issueDate ? isoDate(d.issueDate, `${f}.issueDate`) : null;
  const expires = d.expiryDate ? isoDate(d.expiryDate, `${f}.expiryDate`) : null;
  if (issued !== null && issued > today) throw badUserInput(`${f}.issueDate is in the future`, `${f}.issueDate`);
  if (expires !== null && expires < today) throw badUserInput(`${f}.expiryDate is past: the document has expired`, `${f}.expiryDate`);
  if (issued !== null && expires !== null && expires <= issued) throw badUserInput(`${f}.expiryDate must be after issueDate`, `${f}.expiryDate`);
  return {
    tipo_documento: DOCUMENT_WORDS[d.type],
    numero_documento: number,
    ...(d.issuedBy ? { documento_rilasciato_da: requiredText(d.issuedBy, `${f}.issuedBy`, 100) } : {}),
    ...(issued !== null ? { data_rilascio_documento: vendorDay(issued) } : {}),
    ...(expires !== null ? { data_scadenza_documento: vendorDay(expires) } : {}),
  };
}

/** Activation documents: each a PDF; two for the standard family, one for the others (when the type is known). */
export function activationDocuments(documents: readonly string[], type: BoxType | null, maxBytes: number): string[] {
  const docs = documents.map((d, i) => base64Pdf(d, `documents[${i}]`, maxBytes));
  if (type !== null) {
    const want = isStandardFamily(type) ? 2 : 1;
    if (docs.length !== want) {
      throw badUserInput(
        want === 2
          ? `documents: a ${type} mailbox takes two PDFs, the signed activation form and the identity document`
          : `documents: a ${type} mailbox takes one PDF holding the signed activation form and the identity document`,
        'documents',
      );
    }
  } else if (docs.length < 1 || docs.length > 2) throw badUserInput('documents: one or two PDFs', 'documents');
  return docs;
}

export function years(value: number): number {
  if (!Number.isInteger(value) || value < 1 || value > 5) throw badUserInput('years must be 1 to 5', 'years');
  return value;
}

/** `modifica` body: sizes in MB, multiples of 1024, `+N` when added. */
export function enlargeBody(input: EnlargeMailboxInput): Record<string, string> {
  const out: Record<string, string> = {};
  const pairs: Array<[keyof EnlargeMailboxInput, string]> = [
    ['diskSpaceMb', 'spazio_disco'],
    ['archiveSpaceMb', 'spazio_storico'],
    ['preservationSpaceMb', 'spazio_conservazione'],
  ];
  for (const [k, vendor] of pairs) {
    const v = input[k];
    if (v === null || v === undefined) continue;
    if (typeof v !== 'number' || !Number.isInteger(v) || v <= 0 || v % 1024 !== 0 || v > 1024 * 1024)
      throw badUserInput(`input.${k} must be a positive multiple of 1024 (MB)`, `input.${k}`);
    out[vendor] = input.add ? `+${v}` : String(v);
  }
  if (Object.keys(out).length === 0) throw badUserInput('input: give at least one size', 'input');
  return out;
}

export function preservationSpace(value: number): number {
  if (!Number.isInteger(value) || value <= 0 || (value !== 512 && value % 1024 !== 0)) throw badUserInput('spaceMb must be 512 or a multiple of 1024', 'spaceMb');
  return value;
}

/** The vendor body of `POST /comunica_pec`. */
export function notifyBody(input: NotifyCompanyRegisterInput): Record<string, unknown> {
  return {
    casella_pec: pecAddress(input.address, 'input.address'),
    cf: personFiscalCode(input.taxCode, 'input.taxCode'),
    nome: requiredText(input.firstName, 'input.firstName', 100),
    cognome: requiredText(input.lastName, 'input.lastName', 100),
    qualifica: input.role,
    email: email(input.email, 'input.email'),
    cellulare: phone(input.mobile, 'input.mobile'),
    ragione_sociale: requiredText(input.companyName, 'input.companyName', 200),
    cf_piva: vatOrFiscalCode(input.taxCodeOrVat, 'input.taxCodeOrVat').code,
    comune: requiredText(input.city, 'input.city', 100),
    provincia: code2(input.province, 'input.province'),
    pec_amministratore: input.administratorPec === true,
  };
}

/** A signed delegation: base64 of a PDF or a CAdES (`.p7m`, DER: starts with 0x30) file, within the size limit. */
export function signedDocument(value: string, field: string, maxBytes: number): string {
  const v = (value ?? '')
    .trim()
    .replace(/^data:[^,]*;base64,/i, '')
    .replace(/\s+/g, '');
  if (v === '' || v.length % 4 === 1 || !/^[A-Za-z0-9+/]*={0,2}$/.test(v)) throw badUserInput(`${field} must be a base64 file (a signed .p7m or a PDF)`, field);
  if (Math.floor((v.length * 3) / 4) > maxBytes) throw badUserInput(`${field} is larger than ${Math.floor(maxBytes / 1024)} KiB`, field, { maxBytes });
  const bytes = Buffer.from(v, 'base64');
  const pdf = bytes.subarray(0, 5).toString('latin1') === '%PDF-';
  if (!pdf && bytes[0] !== 0x30) throw badUserInput(`${field} must be a signed .p7m (CAdES) or a PDF`, field);
  return bytes.toString('base64');
}
