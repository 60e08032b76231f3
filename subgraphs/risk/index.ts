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
import { RiskService, type RiskServiceOptions } from './service.ts';

const typeDefs = parse(readFileSync(new URL('./schema.graphql', import.meta.url), 'utf8'));

/** A risk subgraph with its own status store, bus and poller. */
export function createRiskSubgraph(opts: RiskServiceOptions = {}): Subgraph & { service: RiskService } {
  const service = new RiskService(opts);
  return {
    name: 'risk',
    typeDefs,
    resolvers: createResolvers(service),
    http: (req, res, path) => service.http(req, res, path),
    start: async (deps) => service.start(deps),
    service,
  };
}
