/** `Receipt`: an electronic receipt's fields, and its PDF as a signed download. */
import type { ReceiptResolvers, ReceiptStatus, ReceiptType } from '../__generated__/resolvers-types.ts';
import type { InvoicingService } from '../service.ts';
import { INVOICING } from '../upstream.ts';
import { objects } from '../../../contract/values.ts';
import { float as numOrNull } from '../../upstream/coerce.ts';
import { iso, RECEIPT_STATUSES, RECEIPT_TYPES, str } from './shared.ts';

export function receiptResolvers(service: InvoicingService): ReceiptResolvers {
  return {
    id: (p) => p.id,
    fiscalId: (p) => str(p.record.fiscal_id),
    status: (p) => {
      const s = str(p.record.status)?.toUpperCase() ?? null;
      return (s !== null && RECEIPT_STATUSES.includes(s) ? s : 'RAW_UNKNOWN') as ReceiptStatus;
    },
    rawStatus: (p) => str(p.record.status),
    type: (p) => {
      const s = str(p.record.type)?.toUpperCase() ?? null;
      return (s !== null && RECEIPT_TYPES.includes(s) ? s : 'RAW_UNKNOWN') as ReceiptType;
    },
    documentNumber: (p) => str(p.record.document_number),
    documentDate: (p) => str(p.record.document_date),
    totalAmount: (p) => numOrNull(p.record.total_amount),
    totalTaxableAmount: (p) => numOrNull(p.record.total_taxable_amount),
    totalVatAmount: (p) => numOrNull(p.record.total_vat_amount),
    items: (p) => objects(p.record.items),
    cashPaymentAmount: (p) => numOrNull(p.record.cash_payment_amount),
    electronicPaymentAmount: (p) => numOrNull(p.record.electronic_payment_amount),
    ticketRestaurantPaymentAmount: (p) => numOrNull(p.record.ticket_restaurant_payment_amount),
    ticketRestaurantQuantity: (p) => (typeof p.record.ticket_restaurant_quantity === 'number' ? Math.trunc(p.record.ticket_restaurant_quantity) : null),
    lotteryCode: (p) => str(p.record.lottery_code),
    goodsUncollectedAmount: (p) => numOrNull(p.record.goods_uncollected_amount),
    servicesUncollectedAmount: (p) => numOrNull(p.record.services_uncollected_amount),
    totalUncollectedAmount: (p) => numOrNull(p.record.total_uncollected_amount),
    invoiceIssuing: (p) => (typeof p.record.invoice_issuing === 'boolean' ? p.record.invoice_issuing : null),
    discount: (p) => numOrNull(p.record.discount),
    totalDiscount: (p) => numOrNull(p.record.total_discount),
    totalGrossDiscount: (p) => numOrNull(p.record.total_gross_discount),
    deductibleAmount: (p) => numOrNull(p.record.deductible_amount),
    linkedReceipt: (p) => str(p.record.linked_receipt),
    transactionId: (p) => str(p.record.transaction_id),
    tags: (p) => (Array.isArray(p.record.tags) ? p.record.tags.filter((x): x is string => typeof x === 'string') : []),
    parentReceiptId: (p) => str(p.record.parent_receipt_id),
    errorCode: (p) => str(p.record.error_code),
    errorMessage: (p) => str(p.record.error_message),
    createdAt: (p) => iso(p.record.created_at ?? p.record.create_timestamp),
    updatedAt: (p) => iso(p.record.update_timestamp ?? p.record.created_at),
    pdf: (p, _a, ctx) => service.files.issue(service.publicUrl(), ctx.auth, INVOICING.receiptPdf, { id: p.id }, `receipt-${p.id}.pdf`, 'application/pdf'),
  };
}
