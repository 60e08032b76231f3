/**
 * The PEC area's part of the gateway's cost estimate: the availability check and the registration
 * (bulk boxes are not checked), each change by its endpoint, a renewal per year; reads, lists,
 * uploads and revocations are free.
 */
import { namedPriceOf, PEC_FINALIZE_PRICE_KEY } from '../../contract/prices.ts';
import { endpointPrice, type PricingTable } from '../runtime/pricing.ts';
import { BULK, bulkBatchSize, bulkSendEstimate } from './bulk.ts';
import { PEC_DEFAULT_PATHS as P } from './upstream.ts';

const fixed = (...eps: Array<(typeof P)[keyof typeof P]>) => ({ euro: () => eps.reduce((sum, e) => sum + endpointPrice(e), 0) });

export const pecPricing: PricingTable = {
  fields: {
    'Query.mailboxAvailability': fixed(P.availability),
    'Query.certifiedDomain': fixed(P.domain),
    'Company.certifiedMail': fixed(P.domain),
    'Mutation.registerMailbox': {
      euro: (args) => {
        const input = args.input as { boxType?: unknown } | undefined;
        const bulk = input?.boxType === 'PECBULK' || input?.boxType === 'PECMASSIVA';
        return endpointPrice(P.register) + (bulk ? 0 : endpointPrice(P.availability));
      },
    },
    'Mutation.renewMailbox': { euro: (args) => endpointPrice(P.renew) * (typeof args.years === 'number' ? args.years : 1) },
    'Mutation.enlargeMailbox': fixed(P.modify),
    'Mutation.upgradeMailbox': fixed(P.upgrade),
    'Mutation.enableMailboxPreservation': fixed(P.preserve),
    'Mutation.notifyCompanyRegister': fixed(P.noticeCreate),
    'Mutation.finalizeCompanyRegisterNotification': { euro: () => namedPriceOf(PEC_FINALIZE_PRICE_KEY) },
    'Mutation.addMailboxUser': fixed(P.addUser),
    // Bulk: one request per batch of recipients (PECMASSIVA_BATCH_SIZE, 50 by default: the queue's own
    // setting, read by the same function), sent later by the queue.
    'Mutation.sendCertifiedMail': {
      euro: (args) => {
        const input = args.input as { recipients?: unknown } | undefined;
        return bulkSendEstimate(Array.isArray(input?.recipients) ? input.recipients.length : 1, bulkBatchSize());
      },
    },
    'Query.bulkInbox': { euro: (args) => endpointPrice(BULK.inbox) * Math.max(1, Math.ceil((typeof args.first === 'number' ? args.first : 25) / 25) + 1) },
    'Query.bulkInboxMessage': fixed(BULK.message),
    'Query.bulkQuota': fixed(BULK.quota),
    'Query.bulkSendingReceipts': fixed(BULK.receipts),
    'Mutation.deleteBulkInboxMessage': fixed(BULK.deleteMessage),
    'Mutation.deleteBulkSending': fixed(BULK.deleteSending),
    'Query.bulkThreads': fixed(BULK.threads),
    'Query.bulkThread': fixed(BULK.thread),
    'Mutation.startBulkThread': fixed(BULK.threadStart),
    'Mutation.replyBulkThread': fixed(BULK.threadReply),
    'Mutation.deleteBulkThread': fixed(BULK.threadDelete),
    'Mutation.startBulkDispatch': fixed(BULK.cronStart),
  },
  entities: {},
};
