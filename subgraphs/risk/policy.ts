/**
 * What the async-work kit (`runtime/tracking/`) needs of the risk area: its family table
 * (`upstream.ts` FAMILIES), its state policy (`model.ts`) and the shape of its request ids.
 */
import type { AreaSpec, StatePolicy } from '../runtime/tracking/policy.ts';
import { awaitsUpstream, isActiveMonitor, isFinalState, rawStateOf, timestampsOf } from './model.ts';
import { FAMILIES, type RiskFamilyName, type RiskRecordKind } from './upstream.ts';

export const RISK_POLICY: StatePolicy<RiskRecordKind> = {
  stateOf: rawStateOf,
  timestampsOf,
  isFinal: isFinalState,
  awaitsUpstream,
  isActiveMonitor,
};

export const RISK_AREA: AreaSpec<RiskFamilyName, RiskRecordKind> = {
  name: 'risk',
  families: FAMILIES,
  policy: RISK_POLICY,
  idPattern: /^[0-9a-f]{24}$/,
};
