/** Every subgraph of the supergraph (their schemas are composed into supergraph.graphql). */
import type { Subgraph } from './runtime/server.ts';
import { companySubgraph } from './company/index.ts';
import { riskSubgraph } from './risk/index.ts';

export const SUBGRAPHS: Subgraph[] = [companySubgraph, riskSubgraph];
