/** Every subgraph of the supergraph (their schemas are composed into supergraph.graphql). */
import type { Subgraph } from './runtime/server.ts';
import { createCompanySubgraph } from './company/index.ts';
import { createRiskSubgraph } from './risk/index.ts';
import { createInvoicingSubgraph } from './invoicing/index.ts';
import { createPecSubgraph } from './pec/index.ts';
import { createPostalSubgraph } from './postal/index.ts';
import { createAccountSubgraph } from './account/index.ts';
import type { SettingsSource } from '../platform/settings.ts';

/**
 * A fresh set of subgraphs for one stack: stateful subgraphs (the risk and company monitor status
 * stores, buses and pollers) get their own instances, configured from `env`.
 */
/** The subgraphs of the supergraph, by name (listing them builds nothing and connects nothing). */
export const SUBGRAPH_NAMES = ['company', 'risk', 'postal', 'pec', 'invoicing', 'account'] as const;

/**
 * The subgraphs named (all by default). Only those are built: a stateful subgraph on Redis opens its
 * connections when built and closes them when its server stops.
 */
export function createSubgraphs(env: SettingsSource, names: readonly string[] = SUBGRAPH_NAMES): Subgraph[] {
  const make: Record<(typeof SUBGRAPH_NAMES)[number], () => Subgraph> = {
    company: () => createCompanySubgraph({ env }),
    risk: () => createRiskSubgraph({ env }),
    invoicing: () => createInvoicingSubgraph({ env }),
    pec: () => createPecSubgraph({ env }),
    postal: () => createPostalSubgraph(),
    account: () => createAccountSubgraph({ env }),
  };
  return SUBGRAPH_NAMES.filter((n) => names.includes(n)).map((n) => make[n]());
}
