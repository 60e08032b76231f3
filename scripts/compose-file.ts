/**
 * `npm run compose-file` (also run by `npm run compose`): writes the registry's part of
 * `compose.yaml`. The file's shared parts (the anchors, Redis, the emulator, the two gateways and
 * every comment) are written by hand; what depends on the areas is generated here from
 * `SUBGRAPH_NAMES`: one `subgraph-<name>` service per area (the first, alphabetically, builds the
 * image the others use), and in the gateways' anchor each `SUBGRAPH_<NAME>_URL` and `depends_on`
 * entry. The checked-in file is this script's output: `test/stack/unit/compose-file.test.ts` fails
 * when it drifts from the registry.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { format, resolveConfig } from 'prettier';
import { isMap, isScalar, parseDocument, Scalar, type Document, type YAMLMap } from 'yaml';
import { SUBGRAPH_NAMES } from '../subgraphs/index.ts';

export const COMPOSE_FILE = fileURLToPath(new URL('../compose.yaml', import.meta.url));

/** The port every subgraph service listens on inside its container (`SUBGRAPH_PORT` of the `x-subgraph` anchor). */
const SUBGRAPH_PORT = 4001;

const isSubgraphService = (key: unknown): boolean => isScalar(key) && typeof key.value === 'string' && key.value.startsWith('subgraph-');
const isSubgraphUrl = (key: unknown): boolean => isScalar(key) && typeof key.value === 'string' && /^SUBGRAPH_[A-Z0-9_]+_URL$/.test(key.value);

/** The map at `path`, which the hand-written part of the file must have. */
function mapAt(doc: Document, path: readonly string[]): YAMLMap {
  const node = doc.getIn(path, true);
  if (!isMap(node)) throw new Error(`compose.yaml: ${path.join('.')} must be a map`);
  return node;
}

/**
 * Drops the items whose key `drop` matches and puts `added` (in order) where the first was, else at
 * the end; the blank line before the first dropped item stays before the first added one.
 */
function replaceItems(map: YAMLMap, drop: (key: unknown) => boolean, added: YAMLMap['items']): void {
  const first = map.items.findIndex((item) => drop(item.key));
  const kept = map.items.filter((item) => !drop(item.key));
  const at = first < 0 ? kept.length : first;
  const blankBefore = first >= 0 && isScalar(map.items[first].key) && map.items[first].key.spaceBefore === true;
  if (blankBefore && added.length > 0 && isScalar(added[0].key)) added[0].key.spaceBefore = true;
  map.items = [...kept.slice(0, at), ...added, ...kept.slice(at)];
}

/** `compose.yaml` as the registry makes it: `source` (the current file) with its per-subgraph parts generated for `names`. */
export async function renderComposeFile(source: string, names: readonly string[] = SUBGRAPH_NAMES): Promise<string> {
  const doc = parseDocument(source, { merge: true });
  if (doc.errors.length > 0) throw new Error(`compose.yaml: ${doc.errors[0].message}`);
  const sorted = [...names].sort();
  const healthy = (): YAMLMap => {
    const condition = doc.createNode({ condition: 'service_healthy' });
    condition.flow = true;
    return condition;
  };

  // One service per subgraph, from the `x-subgraph` anchor; the first builds the image.
  const subgraphAnchor = doc.getIn(['x-subgraph'], true);
  if (!isMap(subgraphAnchor) || !subgraphAnchor.anchor) throw new Error('compose.yaml: x-subgraph must be an anchored map (&subgraph)');
  replaceItems(
    mapAt(doc, ['services']),
    isSubgraphService,
    sorted.map((name, i) => {
      const service = doc.createNode({ '<<': null }) as YAMLMap;
      service.set('<<', doc.createAlias(subgraphAnchor));
      if (i === 0) {
        service.set('pull_policy', 'build');
        service.set('build', '.');
      }
      const command = doc.createNode(['node', 'dist/services/subgraph.js', name]);
      command.flow = true;
      for (const word of command.items) if (isScalar(word)) word.type = Scalar.QUOTE_SINGLE;
      service.set('command', command);
      return doc.createPair(doc.createNode(`subgraph-${name}`), service);
    }),
  );

  // The gateways: every subgraph's URL, and started once every subgraph is healthy.
  replaceItems(
    mapAt(doc, ['x-gateway', 'environment']),
    isSubgraphUrl,
    sorted.map((name) => doc.createPair(doc.createNode(`SUBGRAPH_${name.toUpperCase()}_URL`), `http://subgraph-${name}:${SUBGRAPH_PORT}/${name}/graphql`)),
  );
  replaceItems(
    mapAt(doc, ['x-gateway', 'depends_on']),
    isSubgraphService,
    sorted.map((name) => doc.createPair(doc.createNode(`subgraph-${name}`), healthy())),
  );

  const text = doc.toString({ lineWidth: 0, flowCollectionPadding: true });
  return format(text, { ...(await resolveConfig(COMPOSE_FILE)), filepath: COMPOSE_FILE });
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const before = readFileSync(COMPOSE_FILE, 'utf8');
  const after = await renderComposeFile(before);
  if (after === before) console.log(`${COMPOSE_FILE}: up to date`);
  else {
    writeFileSync(COMPOSE_FILE, after);
    console.log(`wrote ${COMPOSE_FILE}`);
  }
}
