/**
 * The account area's view of money at risk, settled (`upstream/settlement.ts`): an operation's
 * standing by its id (`extensions.cost.operationId`), a settlement pass on demand, and an event per
 * call settled. A caller sees only its own operations' calls (by tenant).
 */
import { GraphQLError } from 'graphql';
import type { SubgraphContext } from '../runtime/context.ts';
import { requiredText } from '../runtime/validate.ts';
import { operationSettlement, settledTopic, type OperationSettlement, type Settler, type UnknownCall } from '../upstream/settlement.ts';
import type { CostSettlement, OperationCost, SettledCall, SettlementRun } from './__generated__/resolvers-types.ts';

const iso = (ms: number | undefined): string | null => (ms === undefined ? null : new Date(ms).toISOString());

export const settledCallOf = (c: UnknownCall): SettledCall => ({
  area: c.area,
  method: c.method,
  path: c.path,
  euro: c.price,
  state: c.state === 'open' ? 'OPEN' : c.state === 'charged' ? 'CHARGED' : 'NOT_CHARGED',
  basis: c.basis ?? null,
  sentAt: iso(c.sentAt) ?? '',
  settledAt: iso(c.settledAt),
});

export const operationCostOf = (s: OperationSettlement): OperationCost => ({
  operationId: s.operationId,
  atRisk: s.atRisk,
  charged: s.charged,
  notCharged: s.notCharged,
  open: s.open,
  settled: s.settled,
  calls: s.calls.map(settledCallOf),
});

function settlerOf(ctx: SubgraphContext): Settler | null {
  return ctx.upstream.settler ?? null;
}

/** The operation's calls the caller made (its tenant's). */
async function standing(ctx: SubgraphContext, operationId: string): Promise<OperationSettlement> {
  const settler = settlerOf(ctx);
  const calls = settler ? (await settler.store.byOperation(operationId)).filter((c) => c.tenant === ctx.auth.tenant) : [];
  return operationSettlement(operationId, calls);
}

export async function operationCost(ctx: SubgraphContext, id: string): Promise<OperationCost> {
  return operationCostOf(await standing(ctx, requiredText(id, 'id', 64)));
}

export async function settleCosts(ctx: SubgraphContext): Promise<SettlementRun> {
  const settler = settlerOf(ctx);
  if (!settler) throw new GraphQLError('money at risk is not kept for settlement here', { extensions: { code: 'SETTLEMENT_UNAVAILABLE' } });
  return settler.settleNow();
}

/**
 * The events of calls settled from now on (the caller's; of `operationId` only, when given), the
 * operation's standing first when it is already partly settled. Settled by this process's settler.
 */
export async function costSettled(ctx: SubgraphContext, operationId: string | null): Promise<AsyncIterableIterator<{ costSettled: CostSettlement }>> {
  const settler = settlerOf(ctx);
  if (!settler) throw new GraphQLError('money at risk is not kept for settlement here', { extensions: { code: 'SETTLEMENT_UNAVAILABLE' } });
  const source = settler.events.subscribe(settledTopic(ctx.auth.tenant), {
    replayLatest: false,
    filter: (c) => operationId === null || c.operationId === operationId,
  });
  let first: OperationSettlement | null = null;
  if (operationId !== null) {
    const now = await standing(ctx, operationId);
    if (now.calls.some((c) => c.state !== 'open')) first = now;
  }
  const events: AsyncIterableIterator<{ costSettled: CostSettlement }> = {
    async next() {
      if (first) {
        const operation = operationCostOf(first);
        first = null;
        return { done: false, value: { costSettled: { call: null, operation } } };
      }
      const got = await source.next();
      if (got.done) return { done: true, value: undefined };
      return { done: false, value: { costSettled: { call: settledCallOf(got.value), operation: operationCostOf(await standing(ctx, got.value.operationId)) } } };
    },
    async return() {
      await source.return?.();
      return { done: true, value: undefined };
    },
    [Symbol.asyncIterator]() {
      return events;
    },
  };
  return events;
}
