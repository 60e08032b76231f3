import type { UnknownCall } from '../../subgraphs/upstream/settlement.ts';

/**
 * A paid call whose outcome is unknown, as the settlement tests record it: a €0.50 credit score of
 * operation `op-1`, tenant `t1`, charged to account `acct`, sent at `sentAt` and given up 400 ms
 * later, open; `over` changes any of it.
 */
export function unknownCall(id: string, sentAt: number, over: Partial<UnknownCall> = {}): UnknownCall {
  return {
    id,
    operationId: 'op-1',
    tenant: 't1',
    account: 'acct',
    area: 'risk',
    method: 'GET',
    path: '/IT-creditscore-start/00041000084',
    price: 0.5,
    sentAt,
    endedAt: sentAt + 400,
    state: 'open',
    ...over,
  };
}
