/**
 * `npm start`: the whole layer in one process; prints the GraphiQL URL; on SIGINT/SIGTERM drains
 * gracefully within `SHUTDOWN_TIMEOUT_MS` (gateway, then the layer) and exits (a second signal exits
 * at once).
 */
import { startStack } from './stack.ts';
import { START_RISK_COMPLETE_AFTER_MS } from './services/build.ts';
import { stopOnSignals } from './services/run.ts';
import { setupTracing } from './platform/tracing.ts';
import { shutdownTimeoutFromEnv } from './platform/health.ts';

// First: traces on (OTEL_EXPORTER_OTLP_ENDPOINT) before the stack's plugins are built.
await setupTracing();
// Risk requests take 30 s in the embedded emulator unless EMULATOR_RISK_COMPLETE_AFTER_MS says
// otherwise: GraphiQL's WatchRequest example then shows the status change at a person's pace.
const stack = await startStack({ emulatorDefaults: { riskCompleteAfterMs: START_RISK_COMPLETE_AFTER_MS } });
const { gateway, config, emulatorUrl } = stack;
console.log(`openapi-supergraph ready`);
console.log(`  GraphiQL and GraphQL:  ${gateway.graphqlUrl}`);
console.log(`  WebSocket (graphql-ws): ${gateway.wsUrl}`);
console.log(`  upstream: ${config.env}${emulatorUrl ? ` (embedded emulator at ${emulatorUrl}, control API ${emulatorUrl}/_emulator/calls)` : ''}`);

stopOnSignals({ close: () => stack.shutdown(shutdownTimeoutFromEnv(process.env)) });
