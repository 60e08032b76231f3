/**
 * The invoicing area's REST endpoints (`invoice.openapi.com`): the one table of paths, so a
 * deployment changes a path here. The contract's paths are the default (`/api_configurations`,
 * `/IT-configuration`, `/invoices`, `/IT-invoices_import`, `/WW-invoices`,
 * `/certificates/qes-automatic`); the vendor's (`/IT-configurations`, `/IT-invoices`,
 * `/IT-receipts`) fill what the contract does not show (submission of Italian invoices, one
 * invoice, configurations read or deleted by fiscal id, receipts), and the SDI's `/invoices_download/{id}`
 * serves an invoice's document (XML or PDF by `Accept`).
 */
import type { FamilyTable } from '../runtime/tracking/policy.ts';
import { defineEndpoints, type Endpoint } from '../upstream/endpoint.ts';

/** Paid submissions get a longer timeout (they are never retried). */
const SUBMIT_TIMEOUT = 30_000;

const get = (path: string): Endpoint => ({ area: 'invoice', method: 'GET', path });
const submit = (method: 'POST' | 'PATCH' | 'DELETE', path: string): Endpoint => ({ area: 'invoice', method, path, timeoutMs: SUBMIT_TIMEOUT });

export const INVOICING = defineEndpoints({
  configurationCreate: submit('POST', '/api_configurations'),
  configurationUpdate: submit('PATCH', '/IT-configuration'),
  configurationList: get('/IT-configurations'),
  configurationGet: get('/IT-configurations/{fiscalId}'),
  configurationDelete: submit('DELETE', '/IT-configurations/{fiscalId}'),

  invoiceSubmit: submit('POST', '/IT-invoices'),
  crossBorderSubmit: submit('POST', '/WW-invoices'),
  invoiceImport: submit('POST', '/IT-invoices_import'),
  signatureActivate: submit('POST', '/certificates/qes-automatic'),
  invoiceList: get('/invoices'),
  invoiceGet: get('/IT-invoices/{id}'),
  invoiceXml: { area: 'invoice', method: 'GET', path: '/invoices_download/{id}', timeoutMs: 60_000, headers: { accept: 'application/xml' } },
  invoicePdf: { area: 'invoice', method: 'GET', path: '/invoices_download/{id}', timeoutMs: 60_000, headers: { accept: 'application/pdf' } },

  receiptIssue: submit('POST', '/IT-receipts'),
  receiptList: get('/IT-receipts'),
  receiptGet: get('/IT-receipts/{id}'),
  // Contract rule 4: the request's Content-Type chooses the PDF.
  receiptPdf: { area: 'invoice', method: 'GET', path: '/IT-receipts/{id}', timeoutMs: 60_000, headers: { 'content-type': 'application/pdf', accept: 'application/pdf' } },
  receiptReturn: submit('PATCH', '/IT-receipts/{id}'),
  receiptVoid: submit('DELETE', '/IT-receipts/{id}'),
});

/** The families of tracked work, as the GraphQL schema names them. */
export type InvoicingFamily = 'INVOICE' | 'RECEIPT';
export type InvoicingKind = 'invoice' | 'receipt';

export const FAMILIES: FamilyTable<InvoicingFamily, InvoicingKind> = {
  INVOICE: { family: 'INVOICE', kind: 'invoice', create: INVOICING.invoiceSubmit, get: INVOICING.invoiceGet, list: INVOICING.invoiceList, download: INVOICING.invoicePdf },
  RECEIPT: { family: 'RECEIPT', kind: 'receipt', create: INVOICING.receiptIssue, get: INVOICING.receiptGet, list: INVOICING.receiptList, download: INVOICING.receiptPdf },
};
