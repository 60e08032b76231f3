/**
 * The risk subgraph: credit scores (also on the `Company` entity), fiscal-code verification, the
 * asynchronous request families with their live status subscriptions, signed downloads and the
 * upstream callback ingress (`/risk/callbacks/…`, `/risk/files/…`, reached through the gateway's
 * `/callbacks/risk/…` and `/files/risk/…`).
 */
import { readFileSync } from 'node:fs';
import { parse } from 'graphql';
import type { Subgraph } from '../runtime/server.ts';
import { createResolvers } from './resolvers/index.ts';
import { trackingStoresFromEnv } from '../runtime/tracking/stores.ts';
import { RISK_POLICY } from './policy.ts';
import { RiskService, type RiskServiceOptions } from './service.ts';
import type { RiskFamilyName } from './upstream.ts';

const typeDefs = parse(readFileSync(new URL('./schema.graphql', import.meta.url), 'utf8'));

/**
 * A risk subgraph with its own service and poller. Its tracked work (status store, reservations,
 * idempotency keys, replay guard, download grants, poller leases, event bus) lives on Redis when the
 * `env` given has `REDIS_URL` (shared by every replica, surviving restarts; keys under
 * `REDIS_PREFIX`), else in this process's memory. Stores passed in `opts` win. Every `RISK_*`
 * setting is read from that `env`, never from `process.env`.
 */
export function createRiskSubgraph(opts: RiskServiceOptions & { env: NodeJS.ProcessEnv }): Subgraph & { service: RiskService } {
  const { env } = opts;
  const shared = opts.store ? null : trackingStoresFromEnv<RiskFamilyName>(env, 'risk', RISK_POLICY);
  const service = new RiskService({ ...(shared ?? {}), ...opts });
  return {
    name: 'risk',
    typeDefs,
    resolvers: createResolvers(service),
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
