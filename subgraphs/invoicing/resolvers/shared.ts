/** What the invoicing subgraph's resolvers share: raw-value readers, id and input checks, known states. */
import { cursorOffset } from '../../runtime/cursor.ts';
import { badUserInput, toClientError } from '../../runtime/errors.ts';
import { fiscalCode, requiredText, vatOrFiscalCode } from '../../runtime/validate.ts';
import { companyOf, type FatturaSummary } from '../../../contract/fatturapa.ts';
import { branchVatId } from '../fatturapa.ts';
import { secondsOf } from '../policy.ts';
import type { InvoiceIdentity, SignatureCredentials, TrackedInvoice } from '../service.ts';
import type { Obj } from '../../../contract/values.ts';

export const INVOICE_STATES: readonly string[] = ['NEW', 'SENT', 'RECEIVED', 'DONE', 'ERROR'];
export const SDI_STATUSES: readonly string[] = ['BOOKED', 'SENT', 'DELIVERED', 'NOT_DELIVERED', 'RECEIVED', 'ACCEPTED', 'REJECTED', 'TERMS_EXPIRED', 'ERROR'];
export const RECEIPT_STATUSES: readonly string[] = ['NEW', 'RETRY', 'SUBMITTED', 'READY', 'FAILED', 'VOIDED'];
export const RECEIPT_TYPES: readonly string[] = ['SALE', 'RETURN', 'VOID'];
export const INVOICE_ID = /^[0-9a-f]{24}$/;

export const str = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : typeof v === 'number' ? String(v) : null);
export const iso = (v: unknown): string | null => {
  const s = secondsOf(v);
  return s === null ? null : new Date(s * 1000).toISOString();
};

export function invoiceId(value: string, field = 'id'): string {
  const v = value.trim().toLowerCase();
  if (!INVOICE_ID.test(v)) throw badUserInput(`${field} must be an invoice id of 24 hexadecimal characters`, field);
  return v;
}

/** The configurations a stream of credentials changes carries (`return()` kept, so a client that leaves releases the bus). */
export function configurationsOf(source: AsyncIterableIterator<TrackedInvoice>): AsyncIterableIterator<Obj> {
  const wrap = (r: IteratorResult<TrackedInvoice>): IteratorResult<Obj> => (r.done ? { value: undefined, done: true } : { value: { ...r.value.record }, done: false });
  const it: AsyncIterableIterator<Obj> = {
    [Symbol.asyncIterator]: () => it,
    next: async () => wrap(await source.next()),
    return: async () => wrap(source.return ? await source.return() : { value: undefined, done: true }),
    throw: async (e?: unknown) => wrap(source.throw ? await source.throw(e) : { value: undefined, done: true }),
  };
  return it;
}

/** Errors thrown while setting up a subscription take the same codes as query errors. */
export const clientError = (err: unknown): unknown => toClientError(err) ?? err;

export function signatureOf(input: { user: string; password: string } | null | undefined): SignatureCredentials | null {
  if (!input) return null;
  return { user: requiredText(input.user, 'signature.user', 200), password: requiredText(input.password, 'signature.password', 200) };
}

export function credentialsOf(
  input: { taxCode: string; password: string; pin: string } | null | undefined,
  field: string,
): { taxCode: string; password: string; pin: string } | null {
  if (!input) return null;
  return {
    taxCode: fiscalCode(input.taxCode, `${field}.taxCode`),
    password: requiredText(input.password, `${field}.password`, 200),
    pin: requiredText(input.pin, `${field}.pin`, 50),
  };
}

/** The configuration's fiscal id: an Italian VAT number or fiscal code, checksum-validated. */
export function configFiscalId(value: string, field: string): string {
  return vatOrFiscalCode(value, field).code;
}

/** A configuration's fiscal id of any country: a French or German VAT id, else an Italian VAT number or fiscal code. */
export function anyConfigFiscalId(value: string, field: string): string {
  const v = value.replace(/\s/g, '').toUpperCase();
  return /^(FR|DE)/.test(v) ? branchVatId(v.slice(0, 2) as 'FR' | 'DE', v, field) : configFiscalId(value, field);
}

/** The legal identity of a checked Italian invoice: the company's VAT number (the configuration's fiscal id: the seller's, the buyer's on a self-invoice), number, date and type. */
export const identityOf = (s: FatturaSummary): InvoiceIdentity => {
  const company = companyOf(s);
  return { fiscalId: company.vatNumber ?? company.fiscalCode ?? '', number: s.number, date: s.date, documentType: s.documentType };
};

/** The progressive number of a transmission (`ProgressivoInvio`, up to 10 letters and digits) from the document number. */
export function progressiveOf(number: string): string {
  const clean = number.replace(/[^A-Za-z0-9]/g, '').slice(-10);
  return clean === '' ? '1' : clean;
}

export const offsetOf = (after: string | null | undefined): number => cursorOffset('o', after, 'after is not a cursor of this list');
