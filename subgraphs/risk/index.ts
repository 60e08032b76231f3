/**
 * The risk subgraph: credit scores (also on the `Company` entity), fiscal-code verification, the
 * asynchronous request families with their live status subscriptions, signed downloads and the
 * upstream callback ingress (`/risk/callbacks/…`, `/risk/files/…`, reached through the gateway's
 * `/callbacks/risk/…` and `/files/risk/…`).
 */
import { readFileSync } from 'node:fs';
import { parse } from 'graphql';
import { defineArea } from '../runtime/area.ts';
import type { Subgraph } from '../runtime/server.ts';
import { trackedSubgraph } from '../runtime/tracking/subgraph.ts';
import { RISK_AREA } from './policy.ts';
import { riskPricing } from './pricing.ts';
import * as tables from './upstream.ts';
import { createResolvers } from './resolvers/index.ts';
import { RiskService, type RiskServiceOptions } from './service.ts';
import type { SettingsSource } from '../../platform/settings.ts';

const typeDefs = parse(readFileSync(new URL('./schema.graphql', import.meta.url), 'utf8'), { noLocation: true });

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

/** The risk area (see the module doc), as the registry (`subgraphs/index.ts`) lists it. */
export const riskArea = defineArea({
  name: 'risk',
  vendorAreas: ['risk'],
  typeDefs,
  create: ({ env }) => createRiskSubgraph({ env }),
  // The endpoint table, the request families, the score and bureau tables.
  endpointTables: () => [tables.RISK, tables.FAMILIES, tables.SCORE_ENDPOINTS, tables.BUREAU_FAMILIES, tables.ORDER_FAMILIES],
  pricing: riskPricing,
  // Read upstream every time.
  cache: { responseTtlSeconds: 0 },
  sharedSubscriptions: { riskRequestUpdated: 'id' },
  trackingFamilies: tables.FAMILY_NAMES,
  routes: ['callbacks', 'files'],
  settings: ['RISK_*'],
});
