/** Every resolver of the PEC subgraph, typed by the generated `Resolvers`. */
import type { Resolvers } from '../__generated__/resolvers-types.ts';
import { DateTimeScalar } from '../../runtime/scalars.ts';
import type { BulkService } from '../bulk.ts';
import type { PecService } from '../service.ts';
import { bulkResolvers } from './bulk.ts';
import { rootResolvers } from './root.ts';
import { typeResolvers } from './types.ts';

export function createResolvers(service: PecService, bulk: BulkService): Resolvers {
  const root = rootResolvers(service);
  const b = bulkResolvers(bulk, service.maxPdfBytes);
  return {
    DateTime: DateTimeScalar,
    Query: { ...root.Query, ...b.Query },
    Mutation: { ...root.Mutation, ...b.Mutation },
    Subscription: { ...root.Subscription, ...b.Subscription },
    BulkSending: b.BulkSending,
    Company: root.Company,
    CompanyCertifiedMail: root.CompanyCertifiedMail,
    ...typeResolvers(service),
  };
}
