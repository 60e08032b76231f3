/**
 * Where the checked-in supergraph is. A module of its own: the gateway and the build read the file
 * without loading the composition library (`compose.ts`), which only `npm run compose` and the
 * drift test need (about 0.7 MB of module source kept in the heap of every process otherwise).
 */
export const SUPERGRAPH_FILE = new URL('../supergraph.graphql', import.meta.url);
