/** `ReceiptItem`: one item of a receipt. */
import type { ReceiptItemResolvers } from '../__generated__/resolvers-types.ts';
import { float as numOrNull } from '../../upstream/coerce.ts';
import { str } from './shared.ts';

export const ReceiptItem: ReceiptItemResolvers = {
  id: (i) => str(i.id),
  description: (i) => str(i.description),
  quantity: (i) => numOrNull(i.quantity),
  grossPrice: (i) => numOrNull(i.gross_price),
  vatRate: (i) => str(i.vat_rate),
  totalAmount: (i) => numOrNull(i.total_amount),
  returnedQuantity: (i) => numOrNull(i.return),
  unitPrice: (i) => numOrNull(i.unit_price),
  taxableAmount: (i) => numOrNull(i.taxable_amount),
  netTaxableAmount: (i) => numOrNull(i.net_taxable_amount),
  vatAmount: (i) => numOrNull(i.vat_amount),
  discount: (i) => numOrNull(i.gross_discount),
  unitDiscount: (i) => numOrNull(i.unit_discount),
  complimentary: (i) => (typeof i.complimentary === 'boolean' ? i.complimentary : null),
  sku: (i) => str(i.sku),
};
