/**
 * Input validation for the risk area, before any (paid) call: every check throws `BAD_USER_INPUT`
 * naming the argument path. Identifiers, URLs, e-mails, dates and text follow the rules every area
 * shares (`runtime/validate.ts`, re-exported here under the names risk uses); this file keeps what
 * only risk has (past dates, provinces, PDFs, relay targets, idempotency keys, request bodies).
 * Builders turn validated GraphQL inputs into the upstream bodies (without the callback: the layer
 * sets its own).
 */
import { badUserInput } from '../runtime/errors.ts';
import { email, fiscalCode, httpUrl, isoDate, openapiId, optionalText, personFiscalCode, requiredText, vatNumber, vatOrFiscalCode } from '../runtime/validate.ts';
import type {
  CompanyBureauInput,
  CompanySubjectInput,
  CreditScoreMonitorInput,
  KycCheckInput,
  KycMonitorInput,
  KycQueryInput,
  LegalRepresentativeInput,
  NegativeRecordsInput,
  ReportCoverInput,
  PersonBureauInput,
  PersonResidenceInput,
  PersonSubjectInput,
} from './__generated__/resolvers-types.ts';
import { base64Pdf as kitBase64Pdf, DEFAULT_MAX_PDF_BYTES } from '../runtime/tracking/uploads.ts';

export { email, httpUrl, isoDate, optionalText, personFiscalCode, requiredText, vatNumber };

/** A fiscal code of a person (16) or a company (11 digits). */
export const anyFiscalCode = (value: string, field: string): string => fiscalCode(value, field);

const today = (): string => new Date().toISOString().slice(0, 10);

/** A date not after today (and not before 1900). */
export function pastDate(value: string, field: string): string {
  const v = isoDate(value, field);
  if (v > today()) throw badUserInput(`${field} must not be in the future`, field);
  if (v < '1900-01-01') throw badUserInput(`${field} is before 1900`, field);
  return v;
}

/**
 * A base64 PDF (the kit's upload check, `runtime/tracking/uploads.ts`): optional
 * `data:application/pdf;base64,` prefix and whitespace are dropped; the decoded bytes must start
 * with `%PDF-` and be at most `maxBytes` (the service's `maxPdfBytes`, `RISK_MAX_PDF_BYTES`).
 * Returns the clean base64.
 */
export const base64Pdf = (value: string, field: string, maxBytes = DEFAULT_MAX_PDF_BYTES): string => kitBase64Pdf(value, field, maxBytes);

// The caller's callback and idempotency keys are the kit's (`runtime/tracking/args.ts`), shared by every area.
export { idempotencyKey, relayTarget, type RelayTargetOptions } from '../runtime/tracking/args.ts';

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

/** A residence or registered office: the six address fields, under `<prefix>_…` upstream. */
function addressFields(a: PersonResidenceInput, f: (name: string) => string, prefix: string): Body {
  const country = requiredText(a.country, f('country'), 100);
  const postalCode = requiredText(a.postalCode, f('postalCode'), 20);
  if (isItaly(country) && !/^\d{5}$/.test(postalCode)) throw badUserInput(`${f('postalCode')} must be an Italian postal code of 5 digits`, f('postalCode'));
  return {
    [`${prefix}_address`]: requiredText(a.address, f('address'), 200),
    [`${prefix}_street_number`]: requiredText(a.streetNumber, f('streetNumber'), 20),
    [`${prefix}_city`]: requiredText(a.city, f('city'), 100),
    [`${prefix}_postal_code`]: postalCode,
    [`${prefix}_province`]: province(a.province, f('province'), country),
    [`${prefix}_country`]: country,
  };
}

/** The person of a bureau request (the person, or a company's legal representative), without e-mail. */
type BureauPerson = Omit<PersonBureauInput, 'email' | 'callback'> | LegalRepresentativeInput;

function bureauPersonFields(input: BureauPerson, f: (name: string) => string, maxPdfBytes: number): Body {
  const birthCountry = requiredText(input.birthPlace.country, f('birthPlace.country'), 100);
  const doc = input.document;
  const releaseDate = pastDate(doc.releaseDate, f('document.releaseDate'));
  const expirationDate = isoDate(doc.expirationDate, f('document.expirationDate'));
  if (expirationDate <= releaseDate) throw badUserInput(`${f('document.expirationDate')} must be after the release date`, f('document.expirationDate'));
  if (expirationDate < today()) throw badUserInput(`${f('document.expirationDate')}: the document has expired`, f('document.expirationDate'));
  const birthDate = pastDate(input.birthDate, f('birthDate'));
  if (releaseDate < birthDate) throw badUserInput(`${f('document.releaseDate')} is before the birth date`, f('document.releaseDate'));
  const residence = addressFields(input.residence, (n) => f(`residence.${n}`), 'residence');
  return {
    first_name: requiredText(input.firstName, f('firstName'), 100),
    last_name: requiredText(input.lastName, f('lastName'), 100),
    birth_date: birthDate,
    gender: input.gender === 'FEMALE' ? 'F' : 'M',
    fiscal_code: personFiscalCode(input.taxCode, f('taxCode')),
    birth_city: requiredText(input.birthPlace.city, f('birthPlace.city'), 100),
    birth_province: province(input.birthPlace.province, f('birthPlace.province'), birthCountry),
    birth_country: birthCountry,
    ...residence,
    document_type: doc.type,
    document_number: requiredText(doc.number, f('document.number'), 50),
    release_date: releaseDate,
    expiration_date: expirationDate,
    release_city: requiredText(doc.releasePlace.city, f('document.releasePlace.city'), 100),
    release_province: requiredText(doc.releasePlace.province, f('document.releasePlace.province'), 50),
    public_authority: requiredText(doc.authority, f('document.authority'), 100),
    document_file: base64Pdf(doc.file, f('document.file'), maxPdfBytes),
    health_insurance_card_file: base64Pdf(input.healthInsuranceCardFile, f('healthInsuranceCardFile'), maxPdfBytes),
  };
}

/** Body of a person bureau request; its PDFs at most `maxPdfBytes` each. */
export function personBureauBody(input: PersonBureauInput, field = 'input', maxPdfBytes = DEFAULT_MAX_PDF_BYTES): Body {
  const f = (name: string): string => `${field}.${name}`;
  const { first_name, last_name, ...rest } = bureauPersonFields(input, f, maxPdfBytes);
  return { first_name, last_name, email: email(input.email, f('email')), ...rest };
}

/** An SDI recipient code: 7 letters or digits (upper-cased). */
function sdiCode(value: string, field: string): string {
  const v = value.trim().toUpperCase();
  if (!/^[A-Z0-9]{7}$/.test(v)) throw badUserInput(`${field} must be an SDI recipient code of 7 letters or digits`, field);
  return v;
}

const given = (v: string | null | undefined): v is string => v !== null && v !== undefined && v.trim() !== '';

/**
 * Body of a company bureau (CRIF) request: the company, its registered office, its legal
 * representative and the three PDFs (each at most `maxPdfBytes`). A certified e-mail address or an
 * SDI code is required (the service's 428 error 201), checked here before the paid call.
 */
export function companyBureauBody(input: CompanyBureauInput, field = 'input', maxPdfBytes = DEFAULT_MAX_PDF_BYTES): Body {
  const f = (name: string): string => `${field}.${name}`;
  if (!given(input.certifiedEmail) && !given(input.sdiCode)) throw badUserInput(`${field} needs a certifiedEmail or an sdiCode`, f('certifiedEmail'));
  const body: Body = {
    company_name: requiredText(input.companyName, f('companyName'), 200),
    company_legal_form: requiredText(input.legalForm, f('legalForm'), 100),
    company_tax_code: anyFiscalCode(input.taxCode, f('taxCode')),
    company_vat_number: vatNumber(input.vatCode, f('vatCode')),
  };
  if (given(input.certifiedEmail)) body.company_certified_email = email(input.certifiedEmail, f('certifiedEmail'));
  if (given(input.sdiCode)) body.company_sdi = sdiCode(input.sdiCode, f('sdiCode'));
  return {
    ...body,
    ...addressFields(input.registeredOffice, (n) => f(`registeredOffice.${n}`), 'company'),
    ...bureauPersonFields(input.legalRepresentative, (n) => f(`legalRepresentative.${n}`), maxPdfBytes),
    company_registration_report_file: base64Pdf(input.companyRegistrationReportFile, f('companyRegistrationReportFile'), maxPdfBytes),
  };
}

/** Body of an adverse records check. */
export function negativeRecordsBody(input: NegativeRecordsInput, field = 'input'): Body {
  const { code } = vatOrFiscalCode(input.taxCodeOrVat, `${field}.taxCodeOrVat`);
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

/** A request id: 24 hexadecimal characters, lower-cased (refused before any call otherwise). */
export const requestId = (value: string, field = 'id'): string => openapiId(value, field, 'a request id');
