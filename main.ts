/**
 * `npm start`: the whole layer in one process; prints the GraphiQL URL; on SIGINT/SIGTERM drains
 * gracefully within `SHUTDOWN_TIMEOUT_MS` (gateway, then the layer) and exits (a second signal exits
 * at once). A bad setting stops the start with one line naming it, exit code 1.
 */
import { startStack } from './stack.ts';
import { START_RISK_COMPLETE_AFTER_MS } from './services/build.ts';
import { runService } from './services/run.ts';
import { setupTracing } from './platform/tracing.ts';
import { loadSettings } from './platform/settings.ts';

await runService('start', async () => {
  // Parsed once, first: a bad value stops the start with one line naming it.
  const settings = loadSettings();
  // Then traces on (OTEL_EXPORTER_OTLP_ENDPOINT) before the stack's plugins are built.
  await setupTracing({ env: settings });
  // Risk requests take 30 s in the embedded emulator unless EMULATOR_RISK_COMPLETE_AFTER_MS says
  // otherwise: GraphiQL's WatchRequest example then shows the status change at a person's pace.
  const stack = await startStack({ env: settings, emulatorDefaults: { riskCompleteAfterMs: START_RISK_COMPLETE_AFTER_MS } });
  const { gateway, config, emulatorUrl } = stack;
  return {
    shutdownTimeoutMs: settings.SHUTDOWN_TIMEOUT_MS,
    close: () => stack.shutdown(settings.SHUTDOWN_TIMEOUT_MS),
    banner: [
      `openapi-supergraph ready`,
      `  GraphiQL and GraphQL:  ${gateway.graphqlUrl}`,
      `  WebSocket (graphql-ws): ${gateway.wsUrl}`,
      `  upstream: ${config.env}${emulatorUrl ? ` (embedded emulator at ${emulatorUrl}, control API ${emulatorUrl}/_emulator/calls)` : ''}`,
    ],
  };
});
