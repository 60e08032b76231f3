/** `BulkSending`: a queued sending's counts, cost and recipients. */
import type { BulkSendingResolvers } from '../../__generated__/resolvers-types.ts';
import { countsOf, type BulkService } from '../../bulk.ts';

export function bulkSendingResolvers(bulk: BulkService): BulkSendingResolvers {
  return {
    counts: (s) => countsOf(s),
    cost: (s) => s.cost ?? { euro: 0, atRisk: 0, estimate: bulk.estimate(s.recipients.length) },
    recipients: (s, { state }) =>
      s.recipients
        .filter((r) => !state || r.state === state)
        .map((r) => ({ address: r.address, state: r.state, messageId: r.code, acceptedAt: r.acceptedAt, deliveredAt: r.deliveredAt, failedAt: r.failedAt, reason: r.reason })),
  };
}
