import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { composeSupergraph, SUPERGRAPH_FILE } from '../../../gateway/compose.ts';
import { SUPERGRAPH_SUBGRAPHS } from '../../../subgraphs/index.ts';

describe('supergraph.graphql', () => {
  it('is what the subgraph schemas compose to (run `npm run compose` after a schema change)', () => {
    expect(readFileSync(SUPERGRAPH_FILE, 'utf8')).toBe(composeSupergraph(SUPERGRAPH_SUBGRAPHS));
  });
});
