/**
 * `npm run gateway`: the gateway alone, listening on `PORT` (default 4000) and `HOST` (default
 * 127.0.0.1), over the subgraphs at `SUBGRAPH_<NAME>_URL` (one variable per subgraph of the
 * supergraph: `SUBGRAPH_COMPANY_URL`, `SUBGRAPH_RISK_URL`), with `/callbacks/<area>` and
 * `/files/<area>` streamed to the subgraph of that name. Prints where it listens; `/healthz` and
 * `/readyz`; on SIGINT/SIGTERM drains gracefully within `SHUTDOWN_TIMEOUT_MS` and exits.
 */
import { startGateway } from '../gateway/index.ts';
import { gatewayOptionsFromEnv, subgraphUrlsFromEnv } from './build.ts';
import { runService } from './run.ts';
import { setupTracing } from '../platform/tracing.ts';
import { loadSettings } from '../platform/settings.ts';

await runService('gateway', async () => {
  // Parsed once, first: a bad value stops the start with one line naming it.
  const settings = loadSettings();
  // Then traces on (OTEL_EXPORTER_OTLP_ENDPOINT) before the gateway's plugins are built.
  await setupTracing({ env: settings });
  const subgraphUrls = subgraphUrlsFromEnv(settings);
  const gateway = await startGateway(gatewayOptionsFromEnv(settings, subgraphUrls));
  return {
    shutdownTimeoutMs: settings.SHUTDOWN_TIMEOUT_MS,
    // SIGTERM drains: /readyz 503, in-flight requests finish, subscriptions closed with 1001 so that
    // clients reconnect elsewhere (SHUTDOWN_TIMEOUT_MS); exit 1 when cut short.
    close: () => gateway.shutdown(settings.SHUTDOWN_TIMEOUT_MS),
    banner: [
      `gateway listening on ${gateway.url}`,
      `  GraphiQL and GraphQL:  ${gateway.graphqlUrl}`,
      `  WebSocket (graphql-ws): ${gateway.wsUrl}`,
      ...Object.entries(subgraphUrls).map(([name, url]) => `  ${name}: ${url}`),
    ],
  };
});
