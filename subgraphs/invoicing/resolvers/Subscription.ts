/** The invoicing subgraph's `Subscription` fields: live status from the kit's bus, latest state first. */
import { GraphQLError } from 'graphql';
import type { SubgraphContext } from '../../runtime/context.ts';
import { badUserInput } from '../../runtime/errors.ts';
import { parseIsoDateTime } from '../../runtime/scalars.ts';
import { payloads } from '../../runtime/tracking/subscribe.ts';
import { UpstreamError } from '../../upstream/errors.ts';
import type { SubscriptionResolvers } from '../__generated__/resolvers-types.ts';
import { INVOICING_POLICY } from '../policy.ts';
import { credentialsTopic, invoiceTopic, tenantTopic, type InvoicingService, type TrackedInvoice } from '../service.ts';
import { clientError, configFiscalId, configurationsOf, invoiceId } from './shared.ts';

export function subscriptionResolvers(service: InvoicingService): SubscriptionResolvers {
  /** The changes of one invoice or receipt of the caller until it is final (latest first); NOT_FOUND when the account has none of that id. */
  async function changesOfOne(ctx: SubgraphContext, id: string, family: 'INVOICE' | 'RECEIPT'): Promise<AsyncIterableIterator<TrackedInvoice>> {
    const { tenant } = ctx.auth;
    let entry: TrackedInvoice;
    try {
      entry = await service.findForSubscription(ctx, invoiceId(id), family);
    } catch (err) {
      if (err instanceof UpstreamError && err.kind === 'http' && (err.status === 400 || err.status === 404)) {
        throw new GraphQLError(`no ${family === 'INVOICE' ? 'invoice' : 'receipt'} ${id} of this account`, { extensions: { code: 'NOT_FOUND' } });
      }
      throw clientError(err);
    }
    return service.bus.subscribe(invoiceTopic(tenant, entry.id), {
      initial: async () => [(await service.store.get(tenant, entry.id)) ?? entry],
      identity: (e) => e.id,
      version: (e) => e.seq,
      until: (e) => INVOICING_POLICY.isFinal(e.rawState),
    });
  }

  return {
    invoiceUpdated: {
      subscribe: async (_r, { id }, ctx: SubgraphContext) => {
        const { tenant } = ctx.auth;
        if (id !== null && id !== undefined) return payloads('invoiceUpdated', await changesOfOne(ctx, id, 'INVOICE'));
        const source = service.bus.subscribe(tenantTopic(tenant), {
          replayLatest: false,
          initial: async () => (await service.store.list(tenant, 'INVOICE')).filter((e) => e.record.direction !== 'incoming' && !INVOICING_POLICY.isFinal(e.rawState)),
          filter: (e) => e.family === 'INVOICE' && e.record.direction !== 'incoming',
          identity: (e) => e.id,
          version: (e) => e.seq,
        });
        return payloads('invoiceUpdated', source);
      },
    },
    invoiceReceived: {
      subscribe: (_r, { since }, ctx: SubgraphContext) => {
        const { tenant } = ctx.auth;
        let after: number | null = null;
        if (since !== null && since !== undefined) {
          const ms = parseIsoDateTime(since);
          if (ms === null) throw badUserInput('since must be an ISO 8601 date-time', 'since');
          after = Math.floor(ms / 1000);
        }
        const source = service.bus.subscribe(tenantTopic(tenant), {
          replayLatest: false,
          initial: async () => (after === null ? [] : (await service.store.list(tenant, 'INVOICE')).filter((e) => e.record.direction === 'incoming' && (e.createdAt ?? 0) > after)),
          filter: (e) => e.family === 'INVOICE' && e.record.direction === 'incoming',
          identity: (e) => e.id,
          version: (e) => e.seq,
        });
        return payloads('invoiceReceived', source);
      },
    },
    receiptUpdated: {
      subscribe: async (_r, { id }, ctx: SubgraphContext) => {
        const { tenant } = ctx.auth;
        if (id !== null && id !== undefined) return payloads('receiptUpdated', await changesOfOne(ctx, id, 'RECEIPT'));
        const source = service.bus.subscribe(tenantTopic(tenant), {
          replayLatest: false,
          initial: async () => (await service.store.list(tenant, 'RECEIPT')).filter((e) => !INVOICING_POLICY.isFinal(e.rawState)),
          filter: (e) => e.family === 'RECEIPT',
          identity: (e) => e.id,
          version: (e) => e.seq,
        });
        return payloads('receiptUpdated', source);
      },
    },
    receiptCredentialsUpdated: {
      subscribe: (_r, { fiscalId }, ctx: SubgraphContext) => {
        const wanted = fiscalId !== null && fiscalId !== undefined ? configFiscalId(fiscalId, 'fiscalId').toUpperCase() : null;
        const source = service.bus.subscribe(credentialsTopic(ctx.auth.tenant), {
          filter: (e) => wanted === null || e.id === wanted,
          identity: (e) => e.id,
          version: (e) => e.seq,
        });
        return payloads('receiptCredentialsUpdated', configurationsOf(source));
      },
    },
  };
}
