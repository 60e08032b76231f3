/** `InvoiceParty`: an invoice's sender or recipient. */
import type { InvoicePartyResolvers } from '../__generated__/resolvers-types.ts';
import { str } from './shared.ts';

export const InvoiceParty: InvoicePartyResolvers = {
  name: (p) => str(p.name),
  vatNumber: (p) => str(p.vat_id),
  fiscalCode: (p) => str(p.tax_code),
  street: (p) => str(p.street),
  city: (p) => str(p.city),
  zip: (p) => str(p.zip),
  province: (p) => str(p.province),
  country: (p) => str(p.country_code),
  phone: (p) => str(p.phone),
  email: (p) => str(p.email),
};
