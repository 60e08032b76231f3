import { createRequire } from 'node:module';
import { defineConfig } from 'vitest/config';

const require = createRequire(import.meta.url);

/**
 * Test files that change what a process cannot take back (OpenTelemetry's global tracer provider),
 * or that must see the layer's modules loaded for the first time (settings read from the
 * environment at import): each runs in a fresh process of its own.
 */
const OWN_PROCESS = ['test/gateway/e2e/tracing.test.ts', 'test/stack/e2e/env-config.test.ts'];

export default defineConfig({
  resolve: {
    // graphql@16 ships an ESM build that Vite picks and a CommonJS build that Node (and so
    // @apollo/subgraph and the Hive runtime) loads; one process must use one copy, as it does under
    // `npm start`.
    alias: [{ find: /^graphql$/, replacement: require.resolve('graphql') }],
  },
  test: {
    // Every stack and store a test builds keeps its state in memory (fast, isolated) unless the
    // test asks for the embedded store (`STORE=sqlite` or a `DATA_DIR` in the env it passes) or Redis.
    env: { STORE: 'memory' },
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 60_000,
    projects: [
      {
        extends: true,
        test: {
          name: 'shared',
          include: ['test/**/*.test.ts'],
          exclude: OWN_PROCESS,
          // Files run one after another in a worker that keeps its loaded modules: importing the
          // stack again for each of ~100 files was 40% of the run. Every file closes what it starts
          // and puts back what it changes (log sinks, stubbed environment, timers, prototypes).
          isolate: false,
        },
      },
      { extends: true, test: { name: 'own-process', include: OWN_PROCESS, isolate: true } },
    ],
  },
});
