/**
 * The postal subgraph: postal codes, municipalities (also as the `municipality` of every address
 * of the supergraph, by cadastral code), provinces, regions, metropolitan cities, suppressed
 * municipalities, street types and address completion. Stateless: its only state is the upstream
 * cache, where postal answers are public data shared by every tenant.
 */
import { readFileSync } from 'node:fs';
import { parse } from 'graphql';
import { defineArea } from '../runtime/area.ts';
import type { Subgraph } from '../runtime/server.ts';
import { postalPricing } from './pricing.ts';
import { createResolvers } from './resolvers/index.ts';
import { POSTAL, POSTAL_TTL } from './upstream.ts';

const typeDefs = parse(readFileSync(new URL('./schema.graphql', import.meta.url), 'utf8'), { noLocation: true });

export function createPostalSubgraph(): Subgraph {
  return { name: 'postal', typeDefs, resolvers: createResolvers() };
}

/** The postal area (see the module doc), as the registry (`subgraphs/index.ts`) lists it. */
export const postalArea = defineArea({
  name: 'postal',
  vendorAreas: ['cap'],
  typeDefs,
  create: () => createPostalSubgraph(),
  endpointTables: () => [POSTAL],
  pricing: postalPricing,
  // Every endpoint is kept `POSTAL_TTL`.
  cache: { responseTtlSeconds: POSTAL_TTL },
  settings: [],
});
