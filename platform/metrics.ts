/**
 * The layer's own Prometheus metrics: one module, one registry (prom-client's default, which the
 * gateway's Prometheus plugin also writes to), so that in one process one `/metrics` serves the
 * gateway's and the subgraphs' counts, and a separate subgraph service serves its own on its port.
 *
 * Each event is counted where it happens, through the functions below: upstream calls (the cost
 * meter's `record`), budgets refused (the meter's `reserve`/`fits`, the gateway's estimate), poller
 * reads (the kit's poller), callbacks (the kit's ingress), operations and subscriptions (the
 * gateway's `useOperationMetrics`). Endpoint labels are templates (`IT-start/{vat}`), never a path
 * holding a token or an identifier.
 */
import { Counter, Gauge, Histogram, register, type Metric, type Registry } from 'prom-client';

/** Where the metrics are served (the gateway's port, and each separate subgraph service's). */
export const METRICS_PATH = '/metrics';

/** The registry every metric of the process is in (prom-client's default). */
export const registry: Registry = register;

/** The layer's metrics, by name (see `registerLayerMetrics`). */
const layerMetrics = new Map<string, Metric>();

/** A metric of the registry by name, created once (a module loaded twice, e.g. by tests, reuses it). */
function once<T extends Metric>(name: string, make: () => T): T {
  const metric = (registry.getSingleMetric(name) as T | undefined) ?? make();
  layerMetrics.set(name, metric);
  return metric;
}

/**
 * Puts the layer's metrics back in the registry where something removed them: Hive's Prometheus
 * plugin clears the whole registry when its gateway is disposed, so a gateway started again in the
 * same process (tests, an embedding application) would otherwise count into metrics no page shows.
 * Called by every gateway's metric plugins and before every `/metrics` page.
 */
export function registerLayerMetrics(): void {
  for (const [name, metric] of layerMetrics) if (!registry.getSingleMetric(name)) registry.registerMetric(metric);
}

export const upstreamCalls = once(
  'openapi_upstream_calls_total',
  () =>
    new Counter({
      name: 'openapi_upstream_calls_total',
      help: 'Upstream REST calls by area, method, endpoint template, HTTP status (0: no answer) and source (network: sent; cache, dedup, stale: answered without a call)',
      labelNames: ['area', 'method', 'endpoint', 'status', 'source'] as const,
    }),
);

export const upstreamEuro = once(
  'openapi_upstream_euro_total',
  () =>
    new Counter({
      name: 'openapi_upstream_euro_total',
      help: 'Euro spent upstream by area, method and endpoint template',
      labelNames: ['area', 'method', 'endpoint'] as const,
    }),
);

export const upstreamAtRisk = once(
  'openapi_upstream_at_risk_euro_total',
  () =>
    new Counter({
      name: 'openapi_upstream_at_risk_euro_total',
      help: 'Euro of paid calls whose outcome is unknown (sent, no answer): possibly spent',
      labelNames: ['area', 'method', 'endpoint'] as const,
    }),
);

export const settledEuro = once(
  'openapi_settled_euro_total',
  () =>
    new Counter({
      name: 'openapi_settled_euro_total',
      help: "Euro of calls whose outcome was unknown, settled later from the account's wallet history: charged or not_charged",
      labelNames: ['outcome'] as const,
    }),
);

export const settledCalls = once(
  'openapi_settled_calls_total',
  () =>
    new Counter({
      name: 'openapi_settled_calls_total',
      help: "Calls whose outcome was unknown, settled later from the account's wallet history: charged or not_charged",
      labelNames: ['outcome'] as const,
    }),
);

/** Counts one call settled (`upstream/settlement.ts`). */
export function countSettled(outcome: 'charged' | 'not_charged', euro: number): void {
  settledCalls.inc({ outcome });
  if (euro > 0) settledEuro.inc({ outcome }, euro);
}

export const upstreamDuration = once(
  'openapi_upstream_call_duration_seconds',
  () =>
    new Histogram({
      name: 'openapi_upstream_call_duration_seconds',
      help: 'Duration of upstream REST calls sent (source network), by area and endpoint template',
      labelNames: ['area', 'method', 'endpoint'] as const,
      buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    }),
);

export const budgetsRefused = once(
  'openapi_budget_refused_total',
  () =>
    new Counter({
      name: 'openapi_budget_refused_total',
      help: 'Spending refused by a budget: scope operation, day, or unpriced (an operation that cannot be priced is not run); stage estimate (gateway, before running) or call (before an upstream call)',
      labelNames: ['scope', 'stage'] as const,
    }),
);

export const pollerReads = once(
  'openapi_poller_reads_total',
  () =>
    new Counter({
      name: 'openapi_poller_reads_total',
      help: 'Reads of pending asynchronous work by the cost-aware poller, by poller',
      labelNames: ['poller'] as const,
    }),
);

export const callbacks = once(
  'openapi_callbacks_total',
  () =>
    new Counter({
      name: 'openapi_callbacks_total',
      help: 'Upstream callbacks received by area and outcome (accepted, or the reason of a refusal)',
      labelNames: ['area', 'outcome'] as const,
    }),
);

export const operations = once(
  'openapi_operations_total',
  () =>
    new Counter({
      name: 'openapi_operations_total',
      help: 'Client GraphQL operations by name, type and outcome (ok, partial: data and errors, error, refused: budget or estimate)',
      labelNames: ['operation', 'type', 'outcome'] as const,
    }),
);

export const answersReplayed = once(
  'openapi_answers_replayed_total',
  () =>
    new Counter({
      name: 'openapi_answers_replayed_total',
      help: 'Client operations answered with an answer another operation paid for, by source (cache: the response cache, dedup: shared in flight)',
      labelNames: ['source'] as const,
    }),
);

/** Counts an operation answered from the response cache or shared in flight (the gateway's cost plugin). */
export function countReplayedAnswer(source: 'cache' | 'dedup'): void {
  answersReplayed.inc({ source });
}

export const subscriptionsOpen = once(
  'openapi_subscriptions_open',
  () =>
    new Gauge({
      name: 'openapi_subscriptions_open',
      help: 'Client subscriptions open on the gateway, by operation name',
      labelNames: ['operation'] as const,
    }),
);

/** What an upstream call record says (`CostCall` of `upstream/cost.ts`). */
export interface UpstreamCallEvent {
  area: string;
  method: string;
  status: number;
  euro: number;
  ms: number;
  source: 'upstream' | 'cache' | 'dedup' | 'stale';
  atRisk?: number;
}

/** `upstream` calls are the ones sent over the network. */
export const sourceLabel = (source: UpstreamCallEvent['source']): string => (source === 'upstream' ? 'network' : source);

/** Counts one upstream call (sent or answered without one) under its endpoint template. */
export function countUpstreamCall(call: UpstreamCallEvent, endpoint: string): void {
  const ep = { area: call.area, method: call.method, endpoint };
  upstreamCalls.inc({ ...ep, status: String(call.status), source: sourceLabel(call.source) });
  if (call.source !== 'upstream') return;
  if (call.euro > 0) upstreamEuro.inc(ep, call.euro);
  if (call.atRisk) upstreamAtRisk.inc(ep, call.atRisk);
  upstreamDuration.observe(ep, call.ms / 1000);
}

/** Counts a refusal by a budget. */
export function countBudgetRefused(scope: 'operation' | 'day' | 'unpriced', stage: 'estimate' | 'call'): void {
  budgetsRefused.inc({ scope, stage });
}

/** The Prometheus exposition of the registry, for a `/metrics` route. */
export async function metricsText(): Promise<{ contentType: string; body: string }> {
  registerLayerMetrics();
  return { contentType: registry.contentType, body: await registry.metrics() };
}
