/**
 * The layers hold themselves (`docs/adding-an-area.md`, `eslint.config.js` checks the same as you type):
 *
 * - an area of the layer (`subgraphs/<area>/`) is imported only from its own folder and the registry
 *   (`subgraphs/index.ts`); shared code (gateway, runtime, upstream client, platform, contract) imports
 *   neither an area nor the registry: entry points hand it what it needs from the registry;
 * - a vendor module of the emulator (`emulator/<area>/`) is imported only from its own folder and the
 *   emulator's registry (`emulator/modules.ts`); the emulator imports only itself, `contract/` and
 *   `platform/`, and the layer never imports the emulator (only the entry points that start it);
 * - each registry lists every area folder, and every area's endpoint tables are in its descriptor.
 *
 * Tests and benches exercise an area's internals, so they are not scanned.
 */
import { readdirSync, readFileSync, statSync, existsSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Kind } from 'graphql';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { AREAS } from '../../../contract/areas.ts';
import { scopeOf } from '../../../contract/scopes.ts';
import { AREA_REGISTRY, SUBGRAPH_NAMES } from '../../../subgraphs/index.ts';
import { endpointsIn, endpointsOfArea } from '../../../subgraphs/runtime/area.ts';
import { EMULATOR_MODULES } from '../../../emulator/modules.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const SKIPPED = new Set(['node_modules', 'dist', 'data', 'test', 'bench', '.git', '__generated__']);
/** Folders of `subgraphs/` that are not areas. */
const SHARED_SUBGRAPH_FOLDERS = new Set(['runtime', 'upstream']);
/** Process entry points: they start the parts and hand them the registries. */
const ENTRY_POINTS = [/^main\.ts$/, /^stack\.ts$/, /^services\//, /^scripts\//];

/** Every source file of the project (repository-relative, `/`-separated), tests and benches aside. */
function sources(dir = ROOT): string[] {
  return readdirSync(dir).flatMap((name) => {
    if (SKIPPED.has(name) || name.startsWith('.')) return [];
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return /\.(ts|mts|mjs|js)$/.test(name) && !name.endsWith('.d.ts') ? [relative(ROOT, path).split(sep).join('/')] : [];
  });
}

/** The project files a source file imports (static, re-exports, dynamic with a literal), resolved. */
function importsOf(file: string): string[] {
  const info = ts.preProcessFile(readFileSync(join(ROOT, file), 'utf8'), true, true);
  return info.importedFiles
    .map((f) => f.fileName)
    .filter((s) => s.startsWith('.'))
    .map((s) =>
      relative(ROOT, resolve(ROOT, dirname(file), s))
        .split(sep)
        .join('/'),
    );
}

const folders = (dir: string): string[] => readdirSync(join(ROOT, dir)).filter((d) => statSync(join(ROOT, dir, d)).isDirectory() && !d.startsWith('_'));
const under = (path: string, folder: string): boolean => path === folder || path.startsWith(`${folder}/`);

const FILES = sources();
const IMPORTS = FILES.flatMap((from) => importsOf(from).map((to) => ({ from, to })));
const LAYER_AREAS = folders('subgraphs').filter((d) => !SHARED_SUBGRAPH_FOLDERS.has(d));
const EMULATOR_AREAS = folders('emulator');

describe('the layer', () => {
  it('every folder of subgraphs/ other than runtime/ and upstream/ is an area of the registry, and the other way round', () => {
    expect([...LAYER_AREAS].sort()).toEqual([...SUBGRAPH_NAMES].sort());
    for (const area of LAYER_AREAS) expect(existsSync(join(ROOT, 'subgraphs', area, 'schema.graphql')), area).toBe(true);
  });

  it('codegen generates resolver types for exactly the registry’s subgraphs (it finds them by their schema.graphql, not from the registry, which is typed by what it generates)', async () => {
    const { SUBGRAPH_SCHEMA_FOLDERS } = await import('../../../codegen.ts');
    expect([...SUBGRAPH_SCHEMA_FOLDERS]).toEqual([...SUBGRAPH_NAMES].sort());
  });

  it('no file outside an area’s folder and the registry imports the area', () => {
    const wrong = IMPORTS.filter(({ from, to }) => {
      const area = LAYER_AREAS.find((a) => under(to, `subgraphs/${a}`));
      return area !== undefined && !under(from, `subgraphs/${area}`) && from !== 'subgraphs/index.ts';
    });
    expect(wrong).toEqual([]);
  });

  it('shared code imports no area and not the registry (entry points hand it the registry’s values)', () => {
    const shared = ['gateway', 'subgraphs/runtime', 'subgraphs/upstream', 'platform', 'contract'];
    const wrong = IMPORTS.filter(({ from, to }) => shared.some((s) => under(from, s)) && to === 'subgraphs/index.ts');
    expect(wrong).toEqual([]);
    // Only entry points and areas import the registry.
    const importers = IMPORTS.filter(({ to }) => to === 'subgraphs/index.ts').map(({ from }) => from);
    expect(importers.filter((f) => !ENTRY_POINTS.some((e) => e.test(f)))).toEqual([]);
  });

  it('contract/ imports only contract/; platform/ no GraphQL layer, gateway or emulator', () => {
    expect(IMPORTS.filter(({ from, to }) => under(from, 'contract') && !under(to, 'contract'))).toEqual([]);
    expect(IMPORTS.filter(({ from, to }) => under(from, 'platform') && ['gateway', 'emulator', ...LAYER_AREAS.map((a) => `subgraphs/${a}`)].some((f) => under(to, f)))).toEqual([]);
  });
});

describe('the emulator', () => {
  it('its registry has one module per vendor area of the contract', () => {
    expect(EMULATOR_MODULES.map((m) => m.area).sort()).toEqual([...AREAS].sort());
    expect([...EMULATOR_AREAS].sort()).toEqual([...AREAS].sort());
  });

  it('no file outside a vendor module’s folder and the emulator’s registry imports the module', () => {
    const wrong = IMPORTS.filter(({ from, to }) => {
      const area = EMULATOR_AREAS.find((a) => under(to, `emulator/${a}`));
      return area !== undefined && !under(from, `emulator/${area}`) && from !== 'emulator/modules.ts';
    });
    expect(wrong).toEqual([]);
  });

  it('imports only itself, contract/ and platform/; the layer never imports it (only the entry points that start it)', () => {
    expect(IMPORTS.filter(({ from, to }) => under(from, 'emulator') && !['emulator', 'contract', 'platform'].some((f) => under(to, f)))).toEqual([]);
    const layer = ['gateway', 'subgraphs', 'platform', 'contract', 'client'];
    expect(IMPORTS.filter(({ from, to }) => layer.some((f) => under(from, f)) && under(to, 'emulator'))).toEqual([]);
  });
});

describe('area descriptors', () => {
  it('list every endpoint table of the area: each endpoint an area module exports is minted a scope', async () => {
    for (const area of AREA_REGISTRY) {
      const listed = new Set(endpointsOfArea(area).map((e) => scopeOf('production', e.area, e.method, e.path)));
      const modules = FILES.filter((f) => under(f, `subgraphs/${area.name}`) && f.endsWith('.ts'));
      for (const file of modules) {
        const exported: unknown = await import(pathToFileURL(join(ROOT, file)).href);
        const missing = endpointsIn(exported, 3)
          .filter((e) => e.auth !== 'basic' && e.area !== 'oauth')
          .map((e) => scopeOf('production', e.area, e.method, e.path))
          .filter((s) => !listed.has(s));
        expect(missing, `${file} exports endpoints missing from ${area.name}'s endpointTables`).toEqual([]);
      }
    }
  });

  it('call only the vendor areas they declare', () => {
    for (const area of AREA_REGISTRY) {
      for (const e of endpointsOfArea(area)) expect(area.vendorAreas, `${area.name} ${e.method} ${e.path}`).toContain(e.area);
    }
  });

  it('share subscriptions of their own schema, by an argument the field has', () => {
    for (const area of AREA_REGISTRY) {
      const fields = new Map<string, string[]>();
      for (const def of area.typeDefs.definitions) {
        if ((def.kind === Kind.OBJECT_TYPE_DEFINITION || def.kind === Kind.OBJECT_TYPE_EXTENSION) && def.name.value === 'Subscription') {
          for (const f of def.fields ?? [])
            fields.set(
              f.name.value,
              (f.arguments ?? []).map((a) => a.name.value),
            );
        }
      }
      for (const [field, arg] of Object.entries(area.sharedSubscriptions ?? {})) expect(fields.get(field) ?? [], `${area.name} Subscription.${field}`).toContain(arg);
    }
  });
});
