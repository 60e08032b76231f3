/**
 * Every resolver of the invoicing subgraph, typed by the generated `Resolvers`, one file per type
 * (as Apollo's subgraph template has them). Inputs are checked before any call (BAD_USER_INPUT
 * naming the field); submissions go through the service (paid once per idempotency key); live
 * status comes from the kit's bus, latest state first.
 */
import { DateTimeScalar } from '../../runtime/scalars.ts';
import type { Resolvers } from '../__generated__/resolvers-types.ts';
import type { InvoicingService } from '../service.ts';
import { companyResolvers } from './Company.ts';
import { CustomSignature } from './CustomSignature.ts';
import { invoiceResolvers } from './Invoice.ts';
import { InvoiceLine } from './InvoiceLine.ts';
import { InvoiceParty } from './InvoiceParty.ts';
import { InvoicingConfiguration } from './InvoicingConfiguration.ts';
import { mutationResolvers } from './Mutation.ts';
import { queryResolvers } from './Query.ts';
import { receiptResolvers } from './Receipt.ts';
import { ReceiptItem } from './ReceiptItem.ts';
import { SdiDetails } from './SdiDetails.ts';
import { subscriptionResolvers } from './Subscription.ts';

export function createResolvers(service: InvoicingService): Resolvers {
  return {
    DateTime: DateTimeScalar,
    Query: queryResolvers(service),
    Mutation: mutationResolvers(service),
    Subscription: subscriptionResolvers(service),
    Company: companyResolvers(service),
    Invoice: invoiceResolvers(service),
    InvoicingConfiguration,
    Receipt: receiptResolvers(service),
    CustomSignature,
    ReceiptItem,
    InvoiceLine,
    InvoiceParty,
    SdiDetails,
  };
}
