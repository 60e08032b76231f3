/** The PEC subgraph's `Subscription` fields: one mailbox's or notification's changes, latest state first, until it is final. */
import type { SubgraphContext } from '../../../runtime/context.ts';
import { payloads } from '../../../runtime/tracking/subscribe.ts';
import type { SubscriptionResolvers } from '../../__generated__/resolvers-types.ts';
import type { PecService } from '../../service.ts';
import { follow } from './shared.ts';

export function subscriptionResolvers(service: PecService): SubscriptionResolvers {
  return {
    mailboxUpdated: { subscribe: async (_root, { id }, ctx: SubgraphContext) => payloads('mailboxUpdated', await follow(service, ctx, 'MAILBOX', id)) },
    pecNotificationUpdated: { subscribe: async (_root, { id }, ctx: SubgraphContext) => payloads('pecNotificationUpdated', await follow(service, ctx, 'NOTIFICATION', id)) },
  };
}
