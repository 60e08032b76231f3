/**
 * Composes the supergraph from the subgraph schemas. `npm run compose` (`scripts/compose.ts`) writes
 * it to `supergraph.graphql` from the registry's areas (`subgraphs/index.ts`); a test fails when the
 * checked-in file drifts from the schemas. The URLs in the file are placeholders: the gateway points
 * each subgraph at its real location.
 */
import { composeServices, compositionHasErrors } from '@theguild/federation-composition';
import type { DocumentNode } from 'graphql';

export const placeholderUrl = (name: string): string => `http://subgraphs.internal/${name}/graphql`;

/** One subgraph to compose: its name and schema. */
export interface ComposedSubgraph {
  name: string;
  typeDefs: DocumentNode;
}

/** The supergraph of these subgraphs (composed in the order of their names, whatever the order given). */
export function composeSupergraph(subgraphs: readonly ComposedSubgraph[]): string {
  const sorted = [...subgraphs].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const result = composeServices(sorted.map(({ name, typeDefs }) => ({ name, typeDefs, url: placeholderUrl(name) })));
  if (compositionHasErrors(result)) {
    throw new Error(`supergraph composition failed:\n${result.errors.map((e) => `- ${e.message}`).join('\n')}`);
  }
  return result.supergraphSdl;
}

export { SUPERGRAPH_FILE } from './supergraph-file.ts';
