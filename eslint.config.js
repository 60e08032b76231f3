/**
 * ESLint with type-aware rules (typescript-eslint), run by `npm test` (`npm run lint`). Formatting is
 * Prettier's (`.prettierrc.json`); nothing here is about layout.
 */
import { readdirSync } from 'node:fs';
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';

// ---------------------------------------------------------------------------------------------
// The layers (docs/adding-an-area.md; test/architecture.test.ts checks the same on resolved paths):
// shared code imports no area of the layer and not its registry (the entry points hand it the
// registry's values); an area imports no other area; a vendor module of the emulator imports no
// other module; the emulator never imports the layer, nor the layer the emulator.

const foldersOf = (dir) =>
  readdirSync(new URL(`${dir}/`, import.meta.url), { withFileTypes: true })
    .filter((d) => d.isDirectory() && !d.name.startsWith('_') && !d.name.startsWith('.'))
    .map((d) => d.name);
/** The layer's areas: every folder of `subgraphs/` but the shared ones. */
const LAYER_AREAS = foldersOf('subgraphs').filter((d) => d !== 'runtime' && d !== 'upstream');
/** The emulator's vendor modules: every folder of `emulator/`. */
const EMULATOR_MODULES = foldersOf('emulator');
const any = (names) => names.join('|');

const toEmulator = { regex: '(^|/)emulator/', message: 'the layer never imports the emulator: only the entry points that start it (main.ts, stack.ts, services/*) do.' };
const toLayer = [
  { regex: '(^|/)(gateway|subgraphs|services)/', message: 'the emulator imports only itself, contract/ and platform/: never the layer.' },
  { regex: '(^|/)(main|stack)\\.ts$', message: 'the emulator imports only itself, contract/ and platform/: never the layer.' },
];
const restricted = (patterns) => ({ rules: { 'no-restricted-imports': ['error', { patterns }] } });

const layerBoundaries = [
  {
    // Shared code: the gateway, the subgraph runtime, the upstream client, platform, contract.
    files: ['gateway/**/*.ts', 'subgraphs/runtime/**/*.ts', 'subgraphs/upstream/**/*.ts', 'platform/**/*.ts', 'contract/**/*.ts'],
    ...restricted([
      {
        regex: `(^|/)subgraphs/(${any(LAYER_AREAS)})(/|$)|^(\\.\\./)+(${any(LAYER_AREAS)})/`,
        message: "shared code imports no area: read the area's descriptor from the registry (subgraphs/index.ts), handed over by the entry point.",
      },
      {
        regex: '(^|/)subgraphs/index(\\.ts)?$|^\\.\\./index\\.ts$',
        message: 'shared code does not import the registry: the entry points (stack.ts, services/*) hand it what it needs.',
      },
      toEmulator,
    ]),
  },
  ...LAYER_AREAS.map((area) => ({
    files: [`subgraphs/${area}/**/*.ts`],
    ...restricted([
      {
        regex: `(^|/)subgraphs/(${any(LAYER_AREAS.filter((a) => a !== area))})(/|$)|^(\\.\\./)+(${any(LAYER_AREAS.filter((a) => a !== area))})/`,
        message: `the ${area} area imports no other area: what two areas share belongs in subgraphs/runtime/ or subgraphs/upstream/.`,
      },
      toEmulator,
    ]),
  })),
  ...EMULATOR_MODULES.map((module) => ({
    files: [`emulator/${module}/**/*.ts`],
    ...restricted([
      {
        regex: `^(\\.\\./)+(${any(EMULATOR_MODULES.filter((m) => m !== module))})/`,
        message: `the emulator's ${module} module imports no other module: what two modules share belongs in emulator/.`,
      },
      ...toLayer,
    ]),
  })),
  {
    files: ['emulator/*.ts'],
    ignores: ['emulator/modules.ts'],
    ...restricted([{ regex: `^\\./(${any(EMULATOR_MODULES)})/`, message: "only the emulator's registry (emulator/modules.ts) imports a vendor module." }, ...toLayer]),
  },
  { files: ['emulator/modules.ts'], ...restricted(toLayer) },
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
    // Plain JavaScript (this file, the install and build scripts): no types to check with.
    files: ['**/*.js', '**/*.mjs'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: { globals: globals.node, parserOptions: { projectService: false, project: null } },
  },
);
