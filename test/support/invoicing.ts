/**
 * The invoices the invoicing tests issue: Openapi SpA invoicing an Italian customer on the SDI
 * (recipient code), one line of consulting, unless a test says otherwise.
 */
import type { Obj } from '../../contract/values.ts';

export const SENDER_VAT = '12485671007';
export const CUSTOMER_VAT = '01234567897';

/** An invoice party in Rome (`over` adds or replaces fields: a fiscal code, a country …). */
export const party = (name: string, vatNumber: string | null, over: Obj = {}): Obj => ({
  name,
  vatNumber,
  street: 'Via Roma 1',
  zip: '00100',
  city: 'Roma',
  province: 'RM',
  ...over,
});

/** An `InvoiceInput` from Openapi SpA to Cliente Srl; `over` replaces any top-level field. */
export const invoiceInput = (over: Obj = {}): Obj => ({
  number: 'FT-2025/001',
  date: '2025-01-31',
  sender: party('Openapi SpA', SENDER_VAT),
  recipient: party('Cliente Srl', CUSTOMER_VAT),
  recipientCode: 'ABC1234',
  lines: [{ description: 'Consulenza', quantity: 2, unitPrice: 100, vatRate: 22 }],
  ...over,
});
