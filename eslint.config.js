/**
 * ESLint with type-aware rules (typescript-eslint), run by `npm test` (`npm run lint`). Formatting is
 * Prettier's (`.prettierrc.json`); nothing here is about layout.
 */
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';

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
