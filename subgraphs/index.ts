/** Every subgraph of the supergraph (their schemas are composed into supergraph.graphql). */
import type { Subgraph } from './runtime/server.ts';
import { companySubgraph } from './company/index.ts';
import { createRiskSubgraph } from './risk/index.ts';

/**
 * A fresh set of subgraphs for one stack: stateful subgraphs (the risk status store, bus and
 * poller) get their own instances, configured from `env`.
 */
export function createSubgraphs(env: NodeJS.ProcessEnv = process.env): Subgraph[] {
  return [companySubgraph, createRiskSubgraph({ env })];
}
