/** The PEC subgraph's `Query` fields: address availability, certified domains, the caller's mailboxes and Company Register notifications. */
import type { QueryResolvers } from '../../__generated__/resolvers-types.ts';
import type { PecService } from '../../service.ts';
import { domainName, pecAddress } from '../../validate.ts';
import { isObj } from '../../../../contract/values.ts';
import { readOrNull } from './shared.ts';

export function queryResolvers(service: PecService): QueryResolvers {
  const eps = service.endpoints;
  return {
    mailboxAvailability: async (_root, { address }, ctx) => {
      const a = pecAddress(address);
      const data = await ctx.upstream.call<unknown>(ctx, eps.availability, { params: { address: a } });
      return { address: a, available: isObj(data) && data.available === true };
    },
    certifiedDomain: async (_root, { domain }, ctx) => {
      const d = domainName(domain);
      return { domain: d, ...(await service.domainCertified(ctx, d)) };
    },
    mailbox: (_root, { id }, ctx) => readOrNull(service, ctx, 'MAILBOX', id),
    mailboxes: (_root, _args, ctx) => service.list(ctx, 'MAILBOX'),
    // Read through the free list first: an uploaded one is never read by id (that would send it).
    pecNotification: (_root, { id }, ctx) => readOrNull(service, ctx, 'NOTIFICATION', id),
    pecNotifications: (_root, _args, ctx) => service.list(ctx, 'NOTIFICATION'),
  };
}
