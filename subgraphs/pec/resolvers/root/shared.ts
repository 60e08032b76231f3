/**
 * What the PEC subgraph's mailbox and notification resolvers share: the checks a change makes of a
 * mailbox before paying, reads that answer null for an unknown id, and following one record's changes.
 */
import { GraphQLError } from 'graphql';
import type { SubgraphContext } from '../../../runtime/context.ts';
import { badUserInput, toClientError } from '../../../runtime/errors.ts';
import { UpstreamError } from '../../../upstream/errors.ts';
import { boxTypeOf, contractState, isFinalState, isStandardFamily } from '../../model.ts';
import type { PecService, TrackedPec } from '../../service.ts';
import type { PecFamily } from '../../upstream.ts';
import { pecId } from '../../validate.ts';

export const isNotFound = (err: unknown): boolean => err instanceof UpstreamError && err.kind === 'http' && (err.status === 400 || err.status === 404);

/** A usable standard-family mailbox (the condition of sizes, preservation and upgrades), checked before paying. */
export async function changeable(service: PecService, ctx: SubgraphContext, id: string, what: string): Promise<TrackedPec> {
  const box = await service.current(ctx, 'MAILBOX', id);
  const type = boxTypeOf((box.record as Record<string, unknown>).tipo_casella);
  if (type !== null && !isStandardFamily(type)) throw badUserInput(`${what} is only for standard-family mailboxes (this one is ${type})`, 'id');
  if (contractState(box.rawState) !== 'evasa') throw badUserInput(`${what} needs a usable (ACTIVE) mailbox; this one is ${contractState(box.rawState) ?? 'unknown'}`, 'id');
  return box;
}

/** A record of the caller by id, or null when the upstream knows no such id. */
export const readOrNull = async (service: PecService, ctx: SubgraphContext, family: PecFamily, id: string): Promise<TrackedPec | null> => {
  try {
    return await service.read(ctx, family, pecId(id));
  } catch (err) {
    if (isNotFound(err)) return null;
    throw err;
  }
};

/** Latest state first, then every change of one record of the caller, until it is final. */
export async function follow(service: PecService, ctx: SubgraphContext, family: PecFamily, rawId: string) {
  let entry: TrackedPec;
  try {
    entry = await service.findForSubscription(ctx, pecId(rawId), family);
  } catch (err) {
    if (isNotFound(err)) throw new GraphQLError(`no ${family === 'MAILBOX' ? 'mailbox' : 'notification'} ${rawId} of this account`, { extensions: { code: 'NOT_FOUND' } });
    throw toClientError(err) ?? err;
  }
  const { tenant } = ctx.auth;
  return service.bus.subscribe(service.requestTopic(tenant, entry.id), {
    initial: async () => [(await service.store.get(tenant, entry.id)) ?? entry],
    identity: (e) => e.id,
    version: (e) => e.seq,
    until: (e) => isFinalState(e.rawState),
  });
}
