/**
 * Root resolvers of the PEC subgraph (mailboxes, Company Register notifications, certified domains,
 * and its part of `Company`). One file per type under `root/` (Query, Mutation, Subscription,
 * Company, CompanyCertifiedMail); this one assembles them.
 */
import type { CompanyCertifiedMailResolvers, CompanyResolvers, MutationResolvers, QueryResolvers, SubscriptionResolvers } from '../__generated__/resolvers-types.ts';
import type { PecService } from '../service.ts';
import { companyResolvers } from './root/Company.ts';
import { companyCertifiedMailResolvers } from './root/CompanyCertifiedMail.ts';
import { mutationResolvers } from './root/Mutation.ts';
import { queryResolvers } from './root/Query.ts';
import { subscriptionResolvers } from './root/Subscription.ts';

export function rootResolvers(service: PecService): {
  Query: QueryResolvers;
  Mutation: MutationResolvers;
  Subscription: SubscriptionResolvers;
  Company: CompanyResolvers;
  CompanyCertifiedMail: CompanyCertifiedMailResolvers;
} {
  return {
    Query: queryResolvers(service),
    Mutation: mutationResolvers(service),
    Subscription: subscriptionResolvers(service),
    Company: companyResolvers(service),
    CompanyCertifiedMail: companyCertifiedMailResolvers(service),
  };
}
