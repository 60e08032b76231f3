/**
 * What the async-work kit (`runtime/tracking/`) needs of the PEC area: its families (`upstream.ts`),
 * its state policy (`model.ts`), the shape of its ids and of its records (`stato`, not `state`).
 */
import type { AreaSpec, FamilyTable, StatePolicy } from '../runtime/tracking/policy.ts';
import { awaitsUpstream, isActiveMonitor, isFinalState, rawStateOf, timestampsOf } from './model.ts';
import { FAMILIES, type PecFamily, type PecKind } from './upstream.ts';
import type { Obj } from '../../contract/values.ts';

export const PEC_POLICY: StatePolicy<PecKind> = {
  stateOf: rawStateOf,
  timestampsOf,
  isFinal: isFinalState,
  awaitsUpstream,
  isActiveMonitor,
};

/** The area over a families table (the deployment's paths). */
export const pecArea = (families: FamilyTable<PecFamily, PecKind> = FAMILIES): AreaSpec<PecFamily, PecKind> => ({
  name: 'pec',
  families,
  policy: PEC_POLICY,
  idPattern: /^[0-9a-f]{24}$/,
  isRecord: (body: Obj) => typeof body.id === 'string' && body.id !== '' && typeof body.stato === 'string',
});
