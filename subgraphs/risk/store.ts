/** The risk area's tracked-work store: the kit's store (`runtime/tracking/store.ts`) with risk's state policy. */
import {
  MemoryTrackedStore,
  type IdempotencyRecord as KitIdempotencyRecord,
  type MemoryTrackedStoreOptions,
  type Observation as KitObservation,
  type Reservation as KitReservation,
  type TrackedRequest as KitTrackedRequest,
  type TrackedStore,
} from '../runtime/tracking/store.ts';
import { RISK_POLICY } from './policy.ts';
import type { RiskFamilyName } from './upstream.ts';

export { IDEMPOTENCY_TTL_MS, type IdempotencyOutcome, type IdempotencyState, type RelayTarget } from '../runtime/tracking/store.ts';
export type TrackedRequest = KitTrackedRequest<RiskFamilyName>;
export type Reservation = KitReservation<RiskFamilyName>;
export type IdempotencyRecord = KitIdempotencyRecord<RiskFamilyName>;
export type Observation = KitObservation<RiskFamilyName>;
export type RequestStore = TrackedStore<RiskFamilyName>;
export type MemoryRequestStoreOptions = MemoryTrackedStoreOptions;

/** One process's risk store. */
export class MemoryRequestStore extends MemoryTrackedStore<RiskFamilyName> {
  constructor(opts: MemoryRequestStoreOptions = {}) {
    super(RISK_POLICY, opts);
  }
}
