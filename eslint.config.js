/**
 * ESLint with type-aware rules (typescript-eslint), run by `npm test` (`npm run lint`). Formatting is
 * Prettier's (`.prettierrc.json`); nothing here is about layout.
 */
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';

/** One layer's rule: files matching `files` may not import a relative path into `forbidden`. */
function layer(files, forbidden, message) {
  return [
    {
      files: [files],
      rules: {
        'no-restricted-imports': ['error', { patterns: [{ regex: `^(\\.\\./)+(?:${forbidden})(?:/|$)`, message }] }],
      },
    },
  ];
}

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
  // The layers (docs/architecture.md): each folder may import only what sits below it, so a wrong
  // import fails `npm run lint`. From the bottom: contract/ (knowledge of the suite) and platform/
  // (process plumbing) import nothing of ours above them; subgraphs/upstream/ (the REST side) builds
  // on those; subgraphs/runtime/ (the GraphQL side) on upstream; the areas on runtime; the gateway
  // at the edge. The emulator and the layer never import each other; only the entry points
  // (main.ts, stack.ts, services/, scripts/) put them in one process.
  // (The general rule for subgraphs/ comes first: for a file two blocks match, the later one wins.)
  ...layer('subgraphs/*/**', 'gateway|emulator|services', 'an area sits below the gateway and never reaches the emulator'),
  ...layer('contract/**', 'platform|subgraphs|gateway|emulator|services', 'contract/ knows the suite, nothing of the layer or the emulator'),
  ...layer('platform/**', 'contract|subgraphs|gateway|emulator|services', 'platform/ is plumbing below every part: no GraphQL side, no area, no suite knowledge'),
  ...layer('subgraphs/upstream/**', 'runtime|gateway|emulator|services', 'subgraphs/upstream/ (the REST side) sits below subgraphs/runtime/ and the gateway'),
  ...layer('subgraphs/runtime/**', 'gateway|emulator|services', 'subgraphs/runtime/ sits below the gateway and never reaches the emulator'),
  ...layer('gateway/**', 'emulator|services', 'the gateway never reaches the emulator or the entry points'),
  ...layer('emulator/**', 'subgraphs|gateway|services', 'the emulator stands in for the suite: it imports contract/ and platform/, never the layer'),
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
  {
    // Plain JavaScript (this file, the install and build scripts): no types to check with.
    files: ['**/*.js', '**/*.mjs'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: { globals: globals.node, parserOptions: { projectService: false, project: null } },
  },
);
