/** `npm run compose`: writes supergraph.graphql from the subgraph schemas. */
import { writeFileSync } from 'node:fs';
import { composeSupergraph, SUPERGRAPH_FILE } from '../gateway/compose.ts';

writeFileSync(SUPERGRAPH_FILE, composeSupergraph());
console.log(`wrote ${SUPERGRAPH_FILE.pathname}`);
