/** `InvoiceLine`: one line of an invoice. */
import type { InvoiceLineResolvers } from '../__generated__/resolvers-types.ts';
import { float as numOrNull } from '../../upstream/coerce.ts';
import { str } from './shared.ts';

export const InvoiceLine: InvoiceLineResolvers = {
  number: (l) => (typeof l.line_number === 'number' ? l.line_number : null),
  description: (l) => str(l.description),
  quantity: (l) => numOrNull(l.quantity),
  unitPrice: (l) => numOrNull(l.unit_price),
  totalPrice: (l) => numOrNull(l.total_price),
  vatRate: (l) => numOrNull(l.vat_rate),
  nature: (l) => str(l.nature),
};
