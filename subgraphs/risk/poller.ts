/** The risk area's poller: the kit's poller (`runtime/tracking/poller.ts`) over risk's families and state policy, `RISK_POLL_*` settings. */
import { Poller, pollerOptionsFromEnv as kitPollerOptionsFromEnv, type PollerDeps, type PollerOptions } from '../runtime/tracking/poller.ts';
import { RISK_POLICY } from './policy.ts';
import { FAMILIES, type RiskFamilyName, type RiskRecordKind } from './upstream.ts';
import type { SettingsSource } from '../../platform/settings.ts';

export type { PollerOptions } from '../runtime/tracking/poller.ts';

/** `RISK_POLL_*` settings of `env`. */
export const pollerOptionsFromEnv = (env: SettingsSource) => kitPollerOptionsFromEnv(env, 'risk');

export class RiskPoller extends Poller<RiskFamilyName, RiskRecordKind> {
  constructor(deps: PollerDeps<RiskFamilyName>, opts: PollerOptions = {}) {
    super(FAMILIES, RISK_POLICY, deps, { label: 'risk poller', ...opts });
  }
}
