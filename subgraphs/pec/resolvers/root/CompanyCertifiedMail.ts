/** `CompanyCertifiedMail`: the caller's own mailbox of that address, if any (their list, read once per request). */
import type { CompanyCertifiedMailResolvers } from '../../__generated__/resolvers-types.ts';
import type { PecService } from '../../service.ts';
import { asText } from '../../../../contract/values.ts';

export function companyCertifiedMailResolvers(service: PecService): CompanyCertifiedMailResolvers {
  return {
    mailbox: async (parent, _args, ctx) => {
      const all = await ctx.once('pec:mailboxes', () => service.list(ctx, 'MAILBOX'));
      return all.find((m) => asText((m.record as Record<string, unknown>).casella_pec).toLowerCase() === parent.address) ?? null;
    },
  };
}
