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
import { shutdownTimeoutFromEnv } from '../platform/health.ts';

await runService('gateway', async () => {
  // First: traces on (OTEL_EXPORTER_OTLP_ENDPOINT) before the gateway's plugins are built.
  await setupTracing();
  const subgraphUrls = subgraphUrlsFromEnv(process.env);
  const gateway = await startGateway(gatewayOptionsFromEnv(process.env, subgraphUrls));
  return {
    // SIGTERM drains: /readyz 503, in-flight requests finish, subscriptions closed with 1001 so that
    // clients reconnect elsewhere (SHUTDOWN_TIMEOUT_MS); exit 1 when cut short.
    close: () => gateway.shutdown(shutdownTimeoutFromEnv(process.env)),
    banner: [
      `gateway listening on ${gateway.url}`,
      `  GraphiQL and GraphQL:  ${gateway.graphqlUrl}`,
      `  WebSocket (graphql-ws): ${gateway.wsUrl}`,
      ...Object.entries(subgraphUrls).map(([name, url]) => `  ${name}: ${url}`),
    ],
  };
});
