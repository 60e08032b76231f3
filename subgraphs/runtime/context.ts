/**
 * The request context every subgraph resolver receives (one type, one place). Built by the
 * subgraph server for each GraphQL request or subscription.
 */
import type { CostMeter } from '../upstream/cost.ts';
import type { UpstreamClient } from '../upstream/client.ts';

/** Who pays upstream: the bearer token sent to the REST suite and the tenant derived from it. */
export interface UpstreamAuth {
  /** Bearer token for the REST suite (the service token, or the caller's, passed through). */
  token: string;
  /** Stable, non-reversible id of the token's owner: everything cached or stored is keyed by it. */
  tenant: string;
}

export interface SubgraphContext {
  auth: UpstreamAuth;
  /** Cost of this operation in this subgraph; ends up in `extensions.cost`. */
  meter: CostMeter;
  upstream: UpstreamClient;
  /** Per-request memo: returns the value made once per request under `key` (DataLoaders). */
  once<T>(key: string, make: () => T): T;
}
