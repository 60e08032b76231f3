/**
 * `npm run subgraph -- <name> [<name>…]`: one HTTP server with the named subgraphs (`company`,
 * `risk`), each at `/<name>/graphql`, listening on `SUBGRAPH_PORT` (default 4001) and
 * `SUBGRAPH_HOST` (default 127.0.0.1), configured from the environment as `npm start` configures
 * them. Running apart, it needs `LAYER_SECRET` (the same in every subgraph process), `PUBLIC_URL`
 * (the gateway's public URL) and, with `OPENAPI_ENV=emulator`, the emulator's URL
 * (`OPENAPI_EMULATOR_URL`). Prints where it listens; `/healthz` and `/readyz`; on SIGINT/SIGTERM
 * drains gracefully within `SHUTDOWN_TIMEOUT_MS` and exits.
 */
import { startSubgraphsFromEnv, subgraphUrlVariable } from './build.ts';
import { runService } from './run.ts';
import { setupTracing } from '../platform/tracing.ts';
import { loadSettings } from '../platform/settings.ts';

// `npm run subgraph -- company risk` or `-- company,risk`.
const names = process.argv
  .slice(2)
  .flatMap((a) => a.split(','))
  .map((a) => a.trim())
  .filter(Boolean);

await runService('subgraph', async () => {
  // Parsed once, first: a bad value stops the start with one line naming it.
  const settings = loadSettings();
  // Then traces on (OTEL_EXPORTER_OTLP_ENDPOINT) before the subgraphs' plugins are built.
  await setupTracing({ env: settings });
  const layer = await startSubgraphsFromEnv({ env: settings, names, standalone: true });
  const { config } = layer;
  return {
    shutdownTimeoutMs: settings.SHUTDOWN_TIMEOUT_MS,
    // SIGTERM drains: /readyz 503, in-flight requests finish, subscriptions closed with 1001 so that
    // clients reconnect elsewhere (SHUTDOWN_TIMEOUT_MS); exit 1 when cut short.
    close: () => layer.shutdown(settings.SHUTDOWN_TIMEOUT_MS),
    banner: [
      `subgraph ${layer.names.join(', ')} listening on ${layer.subgraphs.url}`,
      ...layer.names.map((n) => `  ${n}: ${layer.graphqlUrls[n]}  (the gateway's ${subgraphUrlVariable(n)})`),
      `  upstream: ${config.env}${settings.OPENAPI_EMULATOR_URL ? ` (emulator at ${settings.OPENAPI_EMULATOR_URL})` : ''}; callback and download URLs under ${layer.publicUrl}`,
    ],
  };
});
