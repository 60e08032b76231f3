/** `Invoice`: the upstream record's fields, and its document as a signed download. */
import type { InvoiceResolvers, InvoiceState } from '../__generated__/resolvers-types.ts';
import type { InvoicingService } from '../service.ts';
import { INVOICING } from '../upstream.ts';
import { isObj, objects } from '../../../contract/values.ts';
import { float as numOrNull } from '../../upstream/coerce.ts';
import { INVOICE_STATES, iso, str } from './shared.ts';

export function invoiceResolvers(service: InvoicingService): InvoiceResolvers {
  return {
    id: (p) => p.id,
    state: (p) => {
      const s = str(p.record.state);
      return (s !== null && INVOICE_STATES.includes(s) ? s : 'RAW_UNKNOWN') as InvoiceState;
    },
    rawState: (p) => str(p.record.state),
    direction: (p) => (p.record.direction === 'incoming' ? 'INCOMING' : 'OUTGOING'),
    fiscalId: (p) => str(p.record.fiscal_id),
    documentType: (p) => str(p.record.type),
    documentNumber: (p) => str(p.record.document_number),
    issueDate: (p) => str(p.record.issue_date),
    currency: (p) => str(p.record.currency),
    totalAmount: (p) => numOrNull(p.record.total_gross_amount ?? p.record.total_amount_including_tax),
    taxableAmount: (p) => numOrNull(p.record.total_amount_excluding_tax),
    taxAmount: (p) => numOrNull(p.record.total_tax_amount),
    payableAmount: (p) => numOrNull(p.record.total_payable_amount),
    toPublicAdministration: (p) => (typeof p.record.to_pa === 'boolean' ? p.record.to_pa : null),
    lines: (p) => objects(p.record.invoice_lines),
    sender: (p) => (isObj(p.record.sender) ? p.record.sender : null),
    recipient: (p) => (isObj(p.record.recipient) ? p.record.recipient : null),
    sdi: (p) => (isObj(p.record.details) ? p.record.details : null),
    createdAt: (p) => iso(p.record.create_at ?? p.record.created_at),
    updatedAt: (p) => iso(p.record.updated_at ?? p.record.create_at),
    document: (p, { format }, ctx) => {
      const pdf = format === 'PDF';
      const name = `${(str(p.record.document_number) ?? p.id).replace(/[^A-Za-z0-9._-]+/g, '_')}.${pdf ? 'pdf' : 'xml'}`;
      return service.files.issue(service.publicUrl(), ctx.auth, pdf ? INVOICING.invoicePdf : INVOICING.invoiceXml, { id: p.id }, name, pdf ? 'application/pdf' : 'application/xml');
    },
  };
}
