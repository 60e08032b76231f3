/**
 * The invoicing area's part of the cost estimate: a submission at the invoice price (plus the
 * custom signature's when credentials are given), cross-border invoices, receipts, returns and
 * voids at theirs, a configuration at most the price of one beyond the included ones; reads,
 * lists and updates are free.
 */
import { surchargeOf } from '../../contract/prices.ts';
import { endpointPrice, type PricingTable } from '../runtime/pricing.ts';
import { INVOICING } from './upstream.ts';

const submission = (args: Record<string, unknown>): number => endpointPrice(INVOICING.invoiceSubmit) + (args.signature ? surchargeOf('invoice', 'custom-signature') : 0);

export const invoicingPricing: PricingTable = {
  fields: {
    'Mutation.configureInvoicing': { euro: () => Math.max(endpointPrice(INVOICING.configurationCreate), surchargeOf('invoice', 'extra-configuration')) },
    'Mutation.issueInvoice': { euro: submission },
    'Mutation.issueInvoiceXml': { euro: submission },
    'Mutation.activateCustomSignature': { euro: () => endpointPrice(INVOICING.signatureActivate) },
    'Mutation.issueCrossBorderInvoice': { euro: () => endpointPrice(INVOICING.crossBorderSubmit) },
    'Mutation.issueReceipt': { euro: () => endpointPrice(INVOICING.receiptIssue) },
    'Mutation.returnReceiptItems': { euro: () => endpointPrice(INVOICING.receiptReturn) },
    'Mutation.voidReceipt': { euro: () => endpointPrice(INVOICING.receiptVoid) },
    'ReceiptConnection.nodes': { maxItems: (_args, parentArgs) => (typeof parentArgs.first === 'number' ? parentArgs.first : 20) },
    'InvoiceConnection.nodes': { maxItems: (_args, parentArgs) => (typeof parentArgs.first === 'number' ? parentArgs.first : 20) },
  },
  entities: {},
};
