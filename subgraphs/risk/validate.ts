/**
 * Input validation for the risk area, before any (paid) call: every check throws `BAD_USER_INPUT`
 * naming the argument path. Builders turn validated GraphQL inputs into the upstream bodies (without
 * the callback: the layer sets its own).
 */
import { isValidFiscalCode, isValidItalianVat, isValidPersonFiscalCode } from '../upstream/checksums.ts';
import { badUserInput } from '../runtime/errors.ts';
import type {
  RiskCallbackInput,
  CompanySubjectInput,
  CreditScoreMonitorInput,
  KycCheckInput,
  KycMonitorInput,
  KycQueryInput,
  NegativeRecordsInput,
  ReportCoverInput,
  PersonBureauInput,
  PersonSubjectInput,
} from './__generated__/resolvers-types.ts';
import type { RelayTarget } from './store.ts';
import { privateLiteralHost } from './relay-guard.ts';

/** Largest PDF accepted (decoded bytes). `RISK_MAX_PDF_BYTES` overrides. @default 5 MB */
export const MAX_PDF_BYTES = Number(process.env.RISK_MAX_PDF_BYTES) > 0 ? Number(process.env.RISK_MAX_PDF_BYTES) : 5 * 1024 * 1024;

const MAX_TEXT = 500;

/** A non-empty trimmed string of reasonable length. */
export function requiredText(value: string | null | undefined, field: string, max = MAX_TEXT): string {
  const v = (value ?? '').trim();
  if (v === '') throw badUserInput(`${field} is required and must not be empty`, field);
  if (v.length > max) throw badUserInput(`${field} is longer than ${max} characters`, field);
  if (/[\u0000-\u0008\u000b\u000c\u000e-\u001f]/.test(v)) throw badUserInput(`${field} contains control characters`, field);
  return v;
}

/** An optional string: null when absent or blank, otherwise checked like `requiredText`. */
export function optionalText(value: string | null | undefined, field: string, max = MAX_TEXT): string | null {
  if (value === null || value === undefined || value.trim() === '') return null;
  return requiredText(value, field, max);
}

export function email(value: string, field: string): string {
  const v = requiredText(value, field, 254);
  if (!/^[^\s@"(),:;<>[\\\]]+@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)+$/.test(v)) {
    throw badUserInput(`${field} is not a valid e-mail address`, field);
  }
  return v;
}

/** A real calendar day, `YYYY-MM-DD`. */
export function isoDate(value: string, field: string): string {
  const v = requiredText(value, field, 10);
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(v);
  const d = m ? new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]))) : null;
  if (!m || !d || d.getUTCFullYear() !== Number(m[1]) || d.getUTCMonth() !== Number(m[2]) - 1 || d.getUTCDate() !== Number(m[3])) {
    throw badUserInput(`${field} must be a date as YYYY-MM-DD`, field);
  }
  return v;
}

const today = (): string => new Date().toISOString().slice(0, 10);

/** A date not after today (and not before 1900). */
export function pastDate(value: string, field: string): string {
  const v = isoDate(value, field);
  if (v > today()) throw badUserInput(`${field} must not be in the future`, field);
  if (v < '1900-01-01') throw badUserInput(`${field} is before 1900`, field);
  return v;
}

/** A person's fiscal code: 16 characters with a valid check character; returned upper case. */
export function personFiscalCode(value: string, field: string): string {
  const v = requiredText(value, field, 32).replace(/\s+/g, '').toUpperCase();
  if (!/^[A-Z0-9]{16}$/.test(v)) throw badUserInput(`${field} must be a person's fiscal code of 16 letters and digits`, field);
  if (!isValidPersonFiscalCode(v)) throw badUserInput(`${field} is not a valid fiscal code (check character or date part wrong)`, field);
  return v;
}

/** An Italian VAT number: 11 digits with a valid check digit (an `IT` prefix and spaces are dropped). */
export function vatNumber(value: string, field: string): string {
  const v = requiredText(value, field, 32).replace(/\s+/g, '').toUpperCase().replace(/^IT/, '');
  if (!/^\d{11}$/.test(v)) throw badUserInput(`${field} must be an Italian VAT number of 11 digits`, field);
  if (!isValidItalianVat(v)) throw badUserInput(`${field} is not a valid VAT number (check digit wrong)`, field);
  return v;
}

/** A fiscal code of a person (16) or a company (11 digits). */
export function anyFiscalCode(value: string, field: string): string {
  const v = requiredText(value, field, 32).replace(/\s+/g, '').toUpperCase();
  if (!/^(\d{11}|[A-Z0-9]{16})$/.test(v)) throw badUserInput(`${field} must be a fiscal code (16 characters) or a company's 11-digit code`, field);
  if (!isValidFiscalCode(v)) throw badUserInput(`${field} is not a valid fiscal code (checksum wrong)`, field);
  return v;
}

/** An absolute http(s) URL. */
export function httpUrl(value: string, field: string): string {
  const v = requiredText(value, field, 2048);
  let u: URL;
  try {
    u = new URL(v);
  } catch {
    throw badUserInput(`${field} must be an absolute URL`, field);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw badUserInput(`${field} must be an http or https URL`, field);
  if (u.username || u.password) throw badUserInput(`${field} must not carry credentials`, field);
  return u.toString();
}

const B64 = /^[A-Za-z0-9+/]*={0,2}$/;

/**
 * A base64 PDF: optional `data:application/pdf;base64,` prefix and whitespace are dropped; the
 * decoded bytes must start with `%PDF-` and be at most `maxBytes`. Returns the clean base64.
 */
export function base64Pdf(value: string, field: string, maxBytes = MAX_PDF_BYTES): string {
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

const HEADER_NAME = /^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,100}$/;
const RESERVED_HEADERS = new Set(['host', 'content-length', 'content-type', 'transfer-encoding', 'connection', 'upgrade', 'expect', 'te', 'trailer', 'keep-alive']);

export interface RelayTargetOptions {
  /**
   * Allow loopback, private, link-local and unique-local addresses (`RISK_RELAY_ALLOW_PRIVATE=1`).
   * @default false
   */
  allowPrivate?: boolean;
}

/**
 * The caller's own callback; null when none. A URL whose host is a private IP literal (loopback,
 * RFC 1918, link-local, unique-local …) is refused unless `allowPrivate`; host names are checked
 * when relaying (`relay-guard.ts`).
 */
export function relayTarget(input: RiskCallbackInput | null | undefined, field: string, opts: RelayTargetOptions = {}): RelayTarget | null {
  if (!input) return null;
  const url = httpUrl(input.url, `${field}.url`);
  const literal = opts.allowPrivate ? null : privateLiteralHost(url);
  if (literal !== null) throw badUserInput(`${field}.url must not point to a loopback, private or link-local address (${literal})`, `${field}.url`);
  const method = input.method ?? 'JSON';
  const fieldName = (input.field ?? 'data').trim() || 'data';
  if (!/^[A-Za-z0-9_.[\]-]{1,100}$/.test(fieldName)) throw badUserInput(`${field}.field must be a form field name`, `${field}.field`);
  const headers: Record<string, string> = {};
  for (const [i, h] of (input.headers ?? []).entries()) {
    const at = `${field}.headers[${i}]`;
    if (!HEADER_NAME.test(h.name)) throw badUserInput(`${at}.name is not a valid header name`, `${at}.name`);
    if (RESERVED_HEADERS.has(h.name.toLowerCase())) throw badUserInput(`${at}.name: ${h.name} cannot be set`, `${at}.name`);
    if (/[\r\n\u0000]/.test(h.value) || h.value.length > 4096) throw badUserInput(`${at}.value is not a valid header value`, `${at}.value`);
    headers[h.name] = h.value;
  }
  const retry = input.retry ?? 0;
  if (!Number.isInteger(retry) || retry < 0 || retry > 5) throw badUserInput(`${field}.retry must be between 0 and 5`, `${field}.retry`);
  return { url, method, field: fieldName, headers, retry };
}

type Body = Record<string, unknown>;

function pdfOptions(pdf: ReportCoverInput | null | undefined, field: string, style: 'camel' | 'snake'): Body {
  if (!pdf) return {};
  const out: Body = {};
  const title = optionalText(pdf.title, `${field}.title`, 200);
  const txt = optionalText(pdf.text, `${field}.text`, 2000);
  const logo = pdf.logoUrl ? httpUrl(pdf.logoUrl, `${field}.logoUrl`) : null;
  if (title !== null) out[style === 'camel' ? 'titlePdf' : 'title_pdf'] = title;
  if (txt !== null) out[style === 'camel' ? 'textPdf' : 'text_pdf'] = txt;
  if (logo !== null) out[style === 'camel' ? 'logoPdf' : 'logo_pdf'] = logo;
  return out;
}

/** Body of a patrimonial, report or heirs request on a person. */
export function personSubjectBody(input: PersonSubjectInput, field = 'input'): Body {
  const body: Body = {
    name: requiredText(input.name, `${field}.name`, 100),
    surname: requiredText(input.surname, `${field}.surname`, 100),
    taxCode: personFiscalCode(input.taxCode, `${field}.taxCode`),
    ...pdfOptions(input.pdf, `${field}.pdf`, 'camel'),
  };
  const note = optionalText(input.note, `${field}.note`, 2000);
  if (note !== null) body.note = note;
  return body;
}

/** Body of a company report request. */
export function companySubjectBody(input: CompanySubjectInput, field = 'input'): Body {
  const body: Body = {
    companyName: requiredText(input.companyName, `${field}.companyName`, 200),
    taxCode: anyFiscalCode(input.taxCode, `${field}.taxCode`),
    ...pdfOptions(input.pdf, `${field}.pdf`, 'camel'),
  };
  if (input.vatCode !== null && input.vatCode !== undefined && input.vatCode.trim() !== '') body.vatCode = vatNumber(input.vatCode, `${field}.vatCode`);
  return body;
}

const ITALY = new Set(['italia', 'italy', 'it', 'ita']);
const isItaly = (country: string): boolean => ITALY.has(country.trim().toLowerCase());

function province(value: string, field: string, country: string): string {
  const v = requiredText(value, field, 50);
  if (isItaly(country) && !/^[A-Za-z]{2}$/.test(v)) throw badUserInput(`${field} must be a two-letter province code (sigla)`, field);
  return v;
}

/** Body of a person bureau request. */
export function personBureauBody(input: PersonBureauInput, field = 'input'): Body {
  const f = (name: string): string => `${field}.${name}`;
  const birthCountry = requiredText(input.birthPlace.country, f('birthPlace.country'), 100);
  const residenceCountry = requiredText(input.residence.country, f('residence.country'), 100);
  const postalCode = requiredText(input.residence.postalCode, f('residence.postalCode'), 20);
  if (isItaly(residenceCountry) && !/^\d{5}$/.test(postalCode)) throw badUserInput(`${f('residence.postalCode')} must be an Italian postal code of 5 digits`, f('residence.postalCode'));
  const doc = input.document;
  const releaseDate = pastDate(doc.releaseDate, f('document.releaseDate'));
  const expirationDate = isoDate(doc.expirationDate, f('document.expirationDate'));
  if (expirationDate <= releaseDate) throw badUserInput(`${f('document.expirationDate')} must be after the release date`, f('document.expirationDate'));
  if (expirationDate < today()) throw badUserInput(`${f('document.expirationDate')}: the document has expired`, f('document.expirationDate'));
  const birthDate = pastDate(input.birthDate, f('birthDate'));
  if (releaseDate < birthDate) throw badUserInput(`${f('document.releaseDate')} is before the birth date`, f('document.releaseDate'));
  return {
    first_name: requiredText(input.firstName, f('firstName'), 100),
    last_name: requiredText(input.lastName, f('lastName'), 100),
    email: email(input.email, f('email')),
    birth_date: birthDate,
    gender: input.gender === 'FEMALE' ? 'F' : 'M',
    fiscal_code: personFiscalCode(input.taxCode, f('taxCode')),
    birth_city: requiredText(input.birthPlace.city, f('birthPlace.city'), 100),
    birth_province: province(input.birthPlace.province, f('birthPlace.province'), birthCountry),
    birth_country: birthCountry,
    residence_address: requiredText(input.residence.address, f('residence.address'), 200),
    residence_street_number: requiredText(input.residence.streetNumber, f('residence.streetNumber'), 20),
    residence_city: requiredText(input.residence.city, f('residence.city'), 100),
    residence_postal_code: postalCode,
    residence_province: province(input.residence.province, f('residence.province'), residenceCountry),
    residence_country: residenceCountry,
    document_type: doc.type,
    document_number: requiredText(doc.number, f('document.number'), 50),
    release_date: releaseDate,
    expiration_date: expirationDate,
    release_city: requiredText(doc.releasePlace.city, f('document.releasePlace.city'), 100),
    release_province: requiredText(doc.releasePlace.province, f('document.releasePlace.province'), 50),
    public_authority: requiredText(doc.authority, f('document.authority'), 100),
    document_file: base64Pdf(doc.file, f('document.file')),
    health_insurance_card_file: base64Pdf(input.healthInsuranceCardFile, f('healthInsuranceCardFile')),
  };
}

/** Body of an adverse records check. */
export function negativeRecordsBody(input: NegativeRecordsInput, field = 'input'): Body {
  const raw = requiredText(input.taxCodeOrVat, `${field}.taxCodeOrVat`, 32).replace(/\s+/g, '').toUpperCase().replace(/^IT(?=\d{11}$)/, '');
  const code = /^\d{11}$/.test(raw) ? vatNumber(raw, `${field}.taxCodeOrVat`) : personFiscalCode(raw, `${field}.taxCodeOrVat`);
  return { cf_piva: code, ...pdfOptions(input.pdf, `${field}.pdf`, 'snake') };
}

/** A KYC search. */
export function kycQuery(q: KycQueryInput, field: string): Body {
  const name = optionalText(q.name, `${field}.name`, 200);
  const firstName = optionalText(q.firstName, `${field}.firstName`, 100);
  const lastName = optionalText(q.lastName, `${field}.lastName`, 100);
  if (name === null && (firstName === null || lastName === null)) {
    throw badUserInput(`${field} needs a name, or both firstName and lastName`, field);
  }
  const out: Body = {};
  if (name !== null) out.name = name;
  if (firstName !== null) out.firstName = firstName;
  if (lastName !== null) out.lastName = lastName;
  if (q.birthDate !== null && q.birthDate !== undefined && q.birthDate.trim() !== '') {
    // YYYY-MM-DD, or an ISO date-time as the vendor's examples send it.
    const b = q.birthDate.trim();
    const isDateTime = /^\d{4}-\d{2}-\d{2}T/.test(b);
    pastDate(isDateTime ? b.slice(0, 10) : b, `${field}.birthDate`);
    if (isDateTime && Number.isNaN(Date.parse(b))) throw badUserInput(`${field}.birthDate must be a date as YYYY-MM-DD`, `${field}.birthDate`);
    out.birthDate = b;
  }
  if (q.entityType) out.entityType = q.entityType;
  if (q.removeDeceased !== null && q.removeDeceased !== undefined) out.removeDeceased = q.removeDeceased;
  return out;
}

export function kycCheckBody(input: KycCheckInput, field = 'input'): Body {
  return { query: kycQuery(input.query, `${field}.query`) };
}

export function kycMonitorBody(input: KycMonitorInput, field = 'input'): Body {
  return { name: requiredText(input.name, `${field}.name`, 200), query: kycQuery(input.query, `${field}.query`), autorenew: input.autorenew ?? true };
}

export function creditScoreMonitorBody(input: CreditScoreMonitorInput, field = 'input'): Body {
  const body: Body = { code: vatNumber(input.vatCode, `${field}.vatCode`), autorenew: input.autorenew ?? true };
  const name = optionalText(input.name, `${field}.name`, 200);
  if (name !== null) body.name = name;
  return body;
}

/** A request id: 24 hexadecimal characters (refused before any call otherwise). */
export function requestId(value: string, field = 'id'): string {
  const v = (value ?? '').trim().toLowerCase();
  if (!/^[0-9a-f]{24}$/.test(v)) throw badUserInput(`${field} must be a request id of 24 hexadecimal characters`, field);
  return v;
}
