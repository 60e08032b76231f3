/**
 * The subgraph of an area whose work is tracked (risk, invoicing): one `TrackingService` of the area
 * over its stores, its resolvers, its HTTP routes (callback ingress, signed files) and its poller.
 */
import type { DocumentNode } from 'graphql';
import type { Subgraph } from '../server.ts';
import type { AreaSpec } from './policy.ts';
import type { TrackingService, TrackingServiceOptions } from './service.ts';
import { trackingStoresFromEnv } from './stores.ts';
import type { SettingsSource } from '../../../platform/settings.ts';

export interface TrackedSubgraphSpec<F extends string, K extends string, O extends TrackingServiceOptions<F>, S extends TrackingService<F, K>> {
  area: AreaSpec<F, K>;
  typeDefs: DocumentNode;
  /** The area's service over the stores given. */
  service: (opts: O) => S;
  resolvers: (service: S) => object;
}

/**
 * A subgraph with its own service and poller. Its tracked work (status store, reservations,
 * idempotency keys, replay guard, download grants, poller leases, event bus) lives on Redis when the
 * `env` given has `REDIS_URL` (shared by every replica, surviving restarts; keys under
 * `REDIS_PREFIX`), else in the embedded store (`DATA_DIR`, surviving restarts; the event bus in
 * this process), or in memory with `STORE=memory`; stores passed in `opts` win. The service's
 * settings (`<AREA>_*`) are read from that `env`, never from `process.env`. Stopping it stops the
 * service, then closes the stores it opened.
 */
export function trackedSubgraph<F extends string, K extends string, O extends TrackingServiceOptions<F> & { env: SettingsSource }, S extends TrackingService<F, K>>(
  spec: TrackedSubgraphSpec<F, K, O, S>,
  opts: O,
): Subgraph & { service: S } {
  const shared = opts.store ? null : trackingStoresFromEnv<F>(opts.env, spec.area.name, spec.area.policy);
  const service = spec.service({ ...(shared ?? {}), ...opts });
  return {
    name: spec.area.name,
    typeDefs: spec.typeDefs,
    resolvers: spec.resolvers(service),
    http: (req, res, path) => service.http(req, res, path),
    start: async (deps) => {
      const stop = service.start(deps);
      return async () => {
        await stop();
        await shared?.close();
      };
    },
    service,
  };
}
