/**
 * Resolvers of bulk certified mail: sending (queued), its progress, the inbox with cursor
 * pagination over the service's pages of 25, one message, deletion and quota. Inputs are validated
 * before any call; credentials go to the service only (`x-username` / `x-password`).
 *
 * One file per type under `bulk/` (Query, Mutation, Subscription, BulkSending); this one assembles them.
 */
import type { BulkSendingResolvers, MutationResolvers, QueryResolvers, SubscriptionResolvers } from '../__generated__/resolvers-types.ts';
import type { BulkService } from '../bulk.ts';
import { bulkSendingResolvers } from './bulk/BulkSending.ts';
import { mutationResolvers } from './bulk/Mutation.ts';
import { queryResolvers } from './bulk/Query.ts';
import { subscriptionResolvers } from './bulk/Subscription.ts';

export function bulkResolvers(
  bulk: BulkService,
  maxBytes: number,
): { Query: QueryResolvers; Mutation: MutationResolvers; Subscription: SubscriptionResolvers; BulkSending: BulkSendingResolvers } {
  return {
    Query: queryResolvers(bulk),
    Mutation: mutationResolvers(bulk, maxBytes),
    Subscription: subscriptionResolvers(bulk),
    BulkSending: bulkSendingResolvers(bulk),
  };
}
