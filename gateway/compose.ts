/**
 * Composes the supergraph from the subgraph schemas. `npm run compose` writes it to
 * `supergraph.graphql`; a test fails when the checked-in file drifts from the schemas.
 * The URLs in the file are placeholders: the gateway points each subgraph at its real location.
 */
import { readFileSync, readdirSync, existsSync } from 'node:fs';
import { composeServices, compositionHasErrors } from '@theguild/federation-composition';
import { parse } from 'graphql';

const SUBGRAPHS_DIR = new URL('../subgraphs/', import.meta.url);

/** Subgraphs in the supergraph: every folder of `subgraphs/` with a `schema.graphql`, sorted. */
export const SUBGRAPH_NAMES: readonly string[] = readdirSync(SUBGRAPHS_DIR)
  .filter((d) => existsSync(new URL(`${d}/schema.graphql`, SUBGRAPHS_DIR)))
  .sort();

export const placeholderUrl = (name: string): string => `http://subgraphs.internal/${name}/graphql`;

export function readSubgraphSdl(name: string): string {
  return readFileSync(new URL(`${name}/schema.graphql`, SUBGRAPHS_DIR), 'utf8');
}

export function composeSupergraph(names: readonly string[] = SUBGRAPH_NAMES): string {
  const result = composeServices(names.map((name) => ({ name, typeDefs: parse(readSubgraphSdl(name)), url: placeholderUrl(name) })));
  if (compositionHasErrors(result)) {
    throw new Error(`supergraph composition failed:\n${result.errors.map((e) => `- ${e.message}`).join('\n')}`);
  }
  return result.supergraphSdl;
}

export const SUPERGRAPH_FILE = new URL('../supergraph.graphql', import.meta.url);
