/**
 * Parent types of the invoicing schema's object types (GraphQL Code Generator maps `<Type>Parent`
 * to the GraphQL type `<Type>`): invoices are the service's records (a tracked snapshot or a list
 * item), the rest are parts of them; a company reference carries only its key.
 */
import type { Obj } from '../../contract/values.ts';

/** A `Company` entity reference: the key the company subgraph gives (`lookupCode`). */
export interface CompanyParent {
  lookupCode: string;
}

/** An invoice: its id and the service's record (a tracked snapshot satisfies it). */
export interface InvoiceParent {
  id: string;
  record: Readonly<Obj>;
}

export type InvoicingConfigurationParent = Obj;
export type InvoiceLineParent = Obj;
export type InvoicePartyParent = Obj;
export type SdiDetailsParent = Obj;

/** A receipt: its id and the service's record (a tracked snapshot satisfies it). */
export interface ReceiptParent {
  id: string;
  record: Readonly<Obj>;
}
export type ReceiptItemParent = Obj;

export type CustomSignatureParent = Obj;
