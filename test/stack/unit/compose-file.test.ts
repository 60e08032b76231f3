/**
 * `compose.yaml`'s per-subgraph parts come from the registry (`scripts/compose-file.ts`, `npm run
 * compose-file`): the checked-in file is what the script writes for `SUBGRAPH_NAMES`, and an area
 * added to (or removed from) the registry changes exactly its service, its URL and its depends_on
 * entry. `test/stack/e2e/build.test.ts` checks what the services say.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { COMPOSE_FILE, renderComposeFile } from '../../../scripts/compose-file.ts';
import { SUBGRAPH_NAMES } from '../../../subgraphs/index.ts';

type Obj = Record<string, unknown>;
const CHECKED_IN = readFileSync(COMPOSE_FILE, 'utf8');

describe('compose.yaml from the registry', () => {
  it('is what `npm run compose-file` writes for the registry (run it after changing the registry)', async () => {
    expect(await renderComposeFile(CHECKED_IN, SUBGRAPH_NAMES)).toBe(CHECKED_IN);
  });

  it('an area added to the registry gets its service, its URL and its depends_on entry; one removed loses them', async () => {
    const names = [...SUBGRAPH_NAMES.filter((n) => n !== 'postal'), 'parcels'];
    const compose = parseYaml(await renderComposeFile(CHECKED_IN, names), { merge: true }) as { services: Record<string, Obj> };
    const subgraphServices = Object.keys(compose.services).filter((s) => s.startsWith('subgraph-'));
    expect(subgraphServices).toEqual([...names].sort().map((n) => `subgraph-${n}`));
    // The first builds the image; every one runs its subgraph from the shared anchor.
    expect(compose.services[subgraphServices[0]]).toMatchObject({ pull_policy: 'build', build: '.' });
    expect(compose.services['subgraph-parcels']).toMatchObject({ image: 'openapi-supergraph', pull_policy: 'never', command: ['node', 'dist/services/subgraph.js', 'parcels'] });
    for (const gateway of ['gateway-1', 'gateway-2']) {
      const g = compose.services[gateway] as { environment: Record<string, string>; depends_on: Obj };
      expect(g.environment.SUBGRAPH_PARCELS_URL).toBe('http://subgraph-parcels:4001/parcels/graphql');
      expect(g.environment).not.toHaveProperty('SUBGRAPH_POSTAL_URL');
      expect(g.depends_on['subgraph-parcels']).toEqual({ condition: 'service_healthy' });
      expect(g.depends_on).not.toHaveProperty('subgraph-postal');
      expect(g.depends_on.redis).toEqual({ condition: 'service_healthy' });
    }
    // What is written by hand stays as it was.
    const before = parseYaml(CHECKED_IN, { merge: true }) as { services: Record<string, Obj> };
    for (const s of ['redis', 'emulator']) expect(compose.services[s]).toEqual(before.services[s]);
  });
});
