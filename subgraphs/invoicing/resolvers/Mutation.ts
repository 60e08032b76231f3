/** The invoicing subgraph's `Mutation` fields: configuration, invoices and receipts (paid once per idempotency key). */
import { badUserInput } from '../../runtime/errors.ts';
import { idempotencyKey, relayTarget } from '../../runtime/tracking/args.ts';
import { email, requiredText } from '../../runtime/validate.ts';
import type { MutationResolvers } from '../__generated__/resolvers-types.ts';
import { readFattura } from '../../../contract/fatturapa.ts';
import { branchVatId, buildFattura, checkFatturaXml, crossBorderBody, invoiceFromInput } from '../fatturapa.ts';
import { receiptBody } from '../receipts.ts';
import type { InvoicingEventName, InvoicingService } from '../service.ts';
import type { Obj } from '../../../contract/values.ts';
import { anyConfigFiscalId, configFiscalId, credentialsOf, identityOf, invoiceId, progressiveOf, signatureOf } from './shared.ts';

const defaultEvents = (customer: boolean, supplier: boolean, receipts: boolean): InvoicingEventName[] => [
  ...(customer ? (['CUSTOMER_INVOICE'] as const) : []),
  ...(supplier ? (['SUPPLIER_INVOICE'] as const) : []),
  ...(receipts ? (['RECEIPT', 'RECEIPT_RETRY', 'RECEIPT_ERROR'] as const) : []),
];

export function mutationResolvers(service: InvoicingService): MutationResolvers {
  const relayOpts = { allowPrivate: service.allowPrivateRelay };
  return {
    configureInvoicing: (_r, { input }, ctx) => {
      const customer = input.customerInvoices ?? true;
      const supplier = input.supplierInvoices ?? false;
      const receipts = input.receipts ?? false;
      const credentials = credentialsOf(input.receiptsCredentials, 'input.receiptsCredentials');
      if (receipts && credentials === null) throw badUserInput('input.receiptsCredentials are required to send receipts', 'input.receiptsCredentials');
      const country = (input.country ?? 'IT').trim().toUpperCase();
      if (country !== 'IT' && country !== 'FR' && country !== 'DE') throw badUserInput('input.country must be IT, FR or DE', 'input.country');
      if (country !== 'IT' && receipts) throw badUserInput('input.receipts: electronic receipts exist in Italy only', 'input.receipts');
      return service.configure(ctx, {
        fiscalId: country === 'IT' ? configFiscalId(input.fiscalId, 'input.fiscalId') : branchVatId(country, input.fiscalId, 'input.fiscalId'),
        name: requiredText(input.name, 'input.name', 200),
        email: email(input.email, 'input.email'),
        customerInvoices: customer,
        supplierInvoices: supplier,
        receipts,
        credentials,
        events: [...new Set(input.events ?? defaultEvents(customer, supplier, receipts))] as InvoicingEventName[],
        relay: relayTarget(input.callback, 'input.callback', relayOpts),
      });
    },
    updateInvoicingConfiguration: (_r, { input }, ctx) => {
      const change: Parameters<InvoicingService['update']>[1] = { fiscalId: configFiscalId(input.fiscalId, 'input.fiscalId') };
      if (input.receipts !== null && input.receipts !== undefined) change.receipts = input.receipts;
      const credentials = credentialsOf(input.receiptsCredentials, 'input.receiptsCredentials');
      if (credentials) change.credentials = credentials;
      if (input.events) change.events = [...new Set(input.events)] as InvoicingEventName[];
      if (input.callback) change.relay = relayTarget(input.callback, 'input.callback', relayOpts);
      return service.update(ctx, change);
    },
    deleteInvoicingConfiguration: (_r, { fiscalId }, ctx) => service.deleteConfiguration(ctx, anyConfigFiscalId(fiscalId, 'fiscalId')),
    issueInvoice: (_r, { input, signature, idempotencyKey: key }, ctx) => {
      const idem = idempotencyKey(key);
      const sig = signatureOf(signature);
      const summary = invoiceFromInput(input);
      const xml = buildFattura(summary, progressiveOf(summary.number));
      // The document built is read back and checked like any given XML.
      checkFatturaXml(xml);
      return service.issue(ctx, xml, identityOf(summary), sig, idem);
    },
    issueInvoiceXml: (_r, { xml, signature, idempotencyKey: key }, ctx) => {
      const idem = idempotencyKey(key);
      const sig = signatureOf(signature);
      const summary = checkFatturaXml(xml);
      return service.issue(ctx, xml, identityOf(summary), sig, idem);
    },
    activateCustomSignature: (_r, { fiscalId, credentials }, ctx) => {
      const sig = signatureOf(credentials)!;
      return service.activateSignature(ctx, configFiscalId(fiscalId, 'fiscalId'), sig);
    },
    importInvoice: (_r, { xml, sdiId, sdiFileName, sdiStatus, idempotencyKey: key }, ctx) => {
      const idem = idempotencyKey(key);
      if (xml.length > 5 * 1024 * 1024) throw badUserInput('xml is larger than 5 MB', 'xml');
      const read = readFattura(xml);
      if (!read.ok)
        throw badUserInput(
          read.error === 'structure' ? 'xml is not a well-formed FatturaPA 1.2 document' : `xml: ${read.field} is missing or not valid`,
          read.error === 'structure' ? 'xml' : `xml:${read.field}`,
        );
      const status = sdiStatus ?? 'DELIVERED';
      if (!['DELIVERED', 'NOT_DELIVERED', 'ACCEPTED', 'REJECTED', 'TERMS_EXPIRED'].includes(status)) {
        throw badUserInput('sdiStatus must be definitive: DELIVERED, NOT_DELIVERED, ACCEPTED, REJECTED or TERMS_EXPIRED', 'sdiStatus');
      }
      const details: Obj = { sdi_status: status };
      if (sdiId) details.sdi_id = requiredText(sdiId, 'sdiId', 64);
      if (sdiFileName) details.sdi_filename = requiredText(sdiFileName, 'sdiFileName', 100);
      return service.importInvoice(ctx, { invoice: xml, details }, idem);
    },
    issueCrossBorderInvoice: (_r, { input, idempotencyKey: key }, ctx) => {
      const idem = idempotencyKey(key);
      const { body, fiscalId } = crossBorderBody(input);
      return service.issueCrossBorder(ctx, body, fiscalId, idem);
    },
    issueReceipt: (_r, { input, idempotencyKey: key }, ctx) => {
      const idem = idempotencyKey(key);
      const { body } = receiptBody(configFiscalId(input.fiscalId, 'input.fiscalId'), input);
      return service.issueReceipt(ctx, body, idem);
    },
    returnReceiptItems: (_r, { id, items, idempotencyKey: key }, ctx) => {
      const idem = idempotencyKey(key);
      const receipt = invoiceId(id);
      if (items.length === 0) throw badUserInput('items must hold at least one item', 'items');
      const body = items.map((it, i) => {
        if (!Number.isFinite(it.quantity) || it.quantity <= 0) throw badUserInput(`items[${i}].quantity must be more than 0`, `items[${i}].quantity`);
        return { id: requiredText(it.itemId, `items[${i}].itemId`, 64), quantity: it.quantity };
      });
      return service.returnReceiptItems(ctx, receipt, body, idem);
    },
    voidReceipt: (_r, { id, idempotencyKey: key }, ctx) => service.voidReceipt(ctx, invoiceId(id), idempotencyKey(key)),
  };
}
