/** `npm run compose`: writes supergraph.graphql from the schemas of the registry's areas. */
import { writeFileSync } from 'node:fs';
import { composeSupergraph, SUPERGRAPH_FILE } from '../gateway/compose.ts';
import { SUPERGRAPH_SUBGRAPHS } from '../subgraphs/index.ts';

writeFileSync(SUPERGRAPH_FILE, composeSupergraph(SUPERGRAPH_SUBGRAPHS));
console.log(`wrote ${SUPERGRAPH_FILE.pathname}`);
