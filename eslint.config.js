/**
 * ESLint with type-aware rules (typescript-eslint), run by `npm test` (`npm run lint`). Formatting is
 * Prettier's (`.prettierrc.json`); nothing here is about layout.
 */
import { readdirSync } from 'node:fs';
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';

// ---------------------------------------------------------------------------------------------
// The layers (docs/architecture.md, docs/adding-an-area.md), so that a wrong import fails
// `npm run lint`; test/architecture/unit/layers.test.ts checks each rule refuses what it should.
// From the bottom: contract/ (knowledge of the suite) and platform/ (process plumbing) import nothing
// of ours above them; subgraphs/upstream/ (the REST side) builds on those; subgraphs/runtime/ (the
// GraphQL side) on upstream; the areas on runtime; the gateway at the edge. Shared code imports no
// area and not the registry (the entry points hand it the registry's values); an area imports no
// other area; a vendor module of the emulator imports no other module; the emulator and the layer
// never import each other: only the entry points (main.ts, stack.ts, services/, scripts/) put them
// in one process. ESLint keeps one setting of a rule per file, so each file is matched by one block.

const foldersOf = (dir) =>
  readdirSync(new URL(`${dir}/`, import.meta.url), { withFileTypes: true })
    .filter((d) => d.isDirectory() && !d.name.startsWith('_') && !d.name.startsWith('.'))
    .map((d) => d.name);
/** The layer's areas: every folder of `subgraphs/` but the shared ones. */
const LAYER_AREAS = foldersOf('subgraphs').filter((d) => d !== 'runtime' && d !== 'upstream');
/** The emulator's vendor modules: every folder of `emulator/`. */
const EMULATOR_MODULES = foldersOf('emulator');
const any = (names) => names.join('|');

/** Imports of a folder above: `forbidden` names top-level folders (or subgraphs' shared ones). */
const above = (forbidden, message) => ({ regex: `^(\\.\\./)+(?:${forbidden})(?:/|$)`, message });
const toEmulator = above('emulator', 'the layer never imports the emulator: only the entry points that start it (main.ts, stack.ts, services/*) do.');
const toEntryPoints = above('services', 'the entry points import the layer, never the other way round.');
const toLayer = [
  { regex: '(^|/)(gateway|subgraphs|services)/', message: 'the emulator imports only itself, contract/ and platform/: never the layer.' },
  { regex: '(^|/)(main|stack)\\.ts$', message: 'the emulator imports only itself, contract/ and platform/: never the layer.' },
];
const toAreas = {
  regex: `(^|/)subgraphs/(${any(LAYER_AREAS)})(/|$)|^(\\.\\./)+(${any(LAYER_AREAS)})/`,
  message: "shared code imports no area: read the area's descriptor from the registry (subgraphs/index.ts), handed over by the entry point.",
};
const toRegistry = {
  regex: '(^|/)subgraphs/index(\\.ts)?$|^\\.\\./index\\.ts$',
  message: 'shared code does not import the registry: the entry points (stack.ts, services/*) hand it what it needs.',
};
const restricted = (files, patterns, extra = {}) => ({ files, ...extra, rules: { 'no-restricted-imports': ['error', { patterns }] } });
const shared = [toAreas, toRegistry, toEmulator, toEntryPoints];

const layerBoundaries = [
  restricted(['contract/**/*.ts'], [above('platform|subgraphs|gateway', 'contract/ knows the suite, nothing of the layer or the emulator.'), ...shared]),
  restricted(
    ['platform/**/*.ts'],
    [above('subgraphs|gateway', 'platform/ is plumbing below every part: no GraphQL side, no area (it may read contract/, which imports nothing of ours).'), ...shared],
  ),
  restricted(['subgraphs/upstream/**/*.ts'], [above('runtime|gateway', 'subgraphs/upstream/ (the REST side) sits below subgraphs/runtime/ and the gateway.'), ...shared]),
  restricted(['subgraphs/runtime/**/*.ts'], [above('gateway', 'subgraphs/runtime/ sits below the gateway.'), ...shared]),
  restricted(['gateway/**/*.ts'], shared),
  ...LAYER_AREAS.map((area) =>
    restricted(
      [`subgraphs/${area}/**/*.ts`],
      [
        {
          regex: `(^|/)subgraphs/(${any(LAYER_AREAS.filter((a) => a !== area))})(/|$)|^(\\.\\./)+(${any(LAYER_AREAS.filter((a) => a !== area))})/`,
          message: `the ${area} area imports no other area: what two areas share belongs in subgraphs/runtime/ or subgraphs/upstream/.`,
        },
        above('gateway', 'an area sits below the gateway.'),
        toEmulator,
        toEntryPoints,
      ],
    ),
  ),
  ...EMULATOR_MODULES.map((module) =>
    restricted(
      [`emulator/${module}/**/*.ts`],
      [
        {
          regex: `^(\\.\\./)+(${any(EMULATOR_MODULES.filter((m) => m !== module))})/`,
          message: `the emulator's ${module} module imports no other module: what two modules share belongs in emulator/.`,
        },
        ...toLayer,
      ],
    ),
  ),
  restricted(
    ['emulator/*.ts'],
    [{ regex: `^\\./(${any(EMULATOR_MODULES)})/`, message: "only the emulator's registry (emulator/modules.ts) imports a vendor module." }, ...toLayer],
    {
      ignores: ['emulator/modules.ts'],
    },
  ),
  restricted(['emulator/modules.ts'], toLayer),
];

export default tseslint.config(
  { ignores: ['node_modules/', 'dist/', '.build-*/', 'client/generated/', 'data/', '.scratch*/'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      // Promises are awaited, returned, or handed to `void` with their errors handled where they start.
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/no-explicit-any': 'error',
      // Off: methods of stores, loaders and plugins are `async` to keep one contract (a promise, and a
      // thrown error as a rejection) whether or not their memory implementation awaits anything.
      '@typescript-eslint/require-await': 'off',
      // Off: envelop/Hive hook payloads hand out plain functions (`setExecutor`, `executor`), not
      // methods that need `this`; the rule cannot tell them apart.
      '@typescript-eslint/unbound-method': 'off',
    },
  },
  {
    // Tests and benches read JSON answers (`JSON.parse`, graphql-ws results typed `any` by the library)
    // and assert on their shape; a wrong shape fails the assertion, so the `no-unsafe-*` rules, which
    // would need a cast per read, stay for the code that ships.
    files: ['test/**', 'bench/**'],
    rules: {
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
    },
  },
  ...layerBoundaries,
  {
    // Settings are read once, by platform/settings.ts (one typed, checked, documented schema), and
    // handed down: product code reads no environment of its own. services/processes.ts only builds
    // the environment of the processes it spawns (tests, benches).
    files: ['main.ts', 'stack.ts', 'contract/**', 'platform/**', 'gateway/**', 'subgraphs/**', 'emulator/**', 'services/**'],
    ignores: ['platform/settings.ts', 'services/processes.ts'],
    rules: {
      'no-restricted-properties': [
        'error',
        { object: 'process', property: 'env', message: 'Read settings from platform/settings.ts (settingsOf / loadSettings at start), not process.env.' },
      ],
    },
  },
  {
    // Plain JavaScript (this file, the install and build scripts): no types to check with.
    files: ['**/*.js', '**/*.mjs'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: { globals: globals.node, parserOptions: { projectService: false, project: null } },
  },
);
