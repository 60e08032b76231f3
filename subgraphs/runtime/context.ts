/**
 * The request context every subgraph resolver receives (one type, one place). Built by the
 * subgraph server for each GraphQL request or subscription.
 */
import type { CostMeter } from '../upstream/cost.ts';
import type { Upstream, UpstreamAuth } from '../upstream/upstream.ts';

export type { UpstreamAuth };

export interface SubgraphContext {
  auth: UpstreamAuth;
  /** Cost of this operation in this subgraph; ends up in `extensions.cost`. */
  meter: CostMeter;
  upstream: Upstream;
  /** Per-request memo: returns the value made once per request under `key` (DataLoaders). */
  once<T>(key: string, make: () => T): T;
  /** The request's headers (HTTP requests only; absent over graphql-ws), e.g. an operator's key. */
  headers?: { get(name: string): string | null };
}
