/**
 * The risk subgraph: credit scores (also on the `Company` entity), fiscal-code verification, the
 * asynchronous request families with their live status subscriptions, signed downloads and the
 * upstream callback ingress (`/risk/callbacks/…`, `/risk/files/…`, reached through the gateway's
 * `/callbacks/risk/…` and `/files/risk/…`).
 */
import { readFileSync } from 'node:fs';
import { parse } from 'graphql';
import type { Subgraph } from '../runtime/server.ts';
import { trackedSubgraph } from '../runtime/tracking/subgraph.ts';
import { RISK_AREA } from './policy.ts';
import { createResolvers } from './resolvers/index.ts';
import { RiskService, type RiskServiceOptions } from './service.ts';
import type { SettingsSource } from '../../platform/settings.ts';

const typeDefs = parse(readFileSync(new URL('./schema.graphql', import.meta.url), 'utf8'));

/**
 * A risk subgraph with its own service and poller. Its tracked work (status store, reservations,
 * idempotency keys, replay guard, download grants, poller leases, event bus) lives on Redis when the
 * `env` given has `REDIS_URL` (shared by every replica, surviving restarts; keys under
 * `REDIS_PREFIX`), else in the embedded store (`DATA_DIR`), or in memory with `STORE=memory`.
 * Stores passed in `opts` win. Every `RISK_*`
 * setting is read from that `env`, never from `process.env`.
 */
export function createRiskSubgraph(opts: RiskServiceOptions & { env: SettingsSource }): Subgraph & { service: RiskService } {
  return trackedSubgraph({ area: RISK_AREA, typeDefs, service: (o) => new RiskService(o), resolvers: createResolvers }, opts);
}
