/** `InvoicingConfiguration`: a configuration of the account, as the upstream keeps it. */
import type { InvoicingConfigurationResolvers, InvoicingEvent } from '../__generated__/resolvers-types.ts';
import { eventName, type InvoicingEventName } from '../service.ts';
import { asText, isObj } from '../../../contract/values.ts';
import { iso, str } from './shared.ts';

export const InvoicingConfiguration: InvoicingConfigurationResolvers = {
  id: (c) => asText(c.id),
  fiscalId: (c) => asText(c.fiscal_id),
  name: (c) => asText(c.name),
  email: (c) => asText(c.email),
  customerInvoices: (c) => c.customer_invoice !== false,
  supplierInvoices: (c) => c.supplier_invoice === true,
  receipts: (c) => c.receipts === true,
  receiptsCredentialsTaxCode: (c) => (isObj(c.receipts_authentication) ? str(c.receipts_authentication.taxCode) : null),
  events: (c) =>
    [
      ...new Set(
        (Array.isArray(c.api_configurations) ? c.api_configurations : []).map((a) => (isObj(a) ? eventName(a.event) : null)).filter((e): e is InvoicingEventName => e !== null),
      ),
    ] as InvoicingEvent[],
  active: (c) => c.active !== false,
  createdAt: (c) => iso(c.create_timestamp),
};
