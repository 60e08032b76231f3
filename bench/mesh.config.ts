/**
 * GraphQL Mesh's compose config for the alternative in `bench/alternative.ts`: the vendor's company
 * OpenAPI spec as one REST subgraph. `mesh-compose -c bench/mesh.config.ts -o <file>` reads
 * `MESH_OAS` (the spec: the vendor's, or the bench's hand-fixed copy) and `MESH_ENDPOINT` (the
 * company area's base URL, the emulator's `<url>/company`). The caller's `Authorization` goes to
 * every REST call, as the layer forwards it.
 */
import { defineConfig } from '@graphql-mesh/compose-cli';
import { loadOpenAPISubgraph } from '@omnigraph/openapi';

const source = process.env.MESH_OAS;
const endpoint = process.env.MESH_ENDPOINT;
if (!source || !endpoint) throw new Error('mesh.config.ts needs MESH_OAS and MESH_ENDPOINT');

export const composeConfig = defineConfig({
  subgraphs: [
    {
      sourceHandler: loadOpenAPISubgraph('Company', {
        source,
        endpoint,
        operationHeaders: { Authorization: '{context.headers.authorization}' },
      }),
    },
  ],
});
