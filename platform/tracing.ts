/**
 * OpenTelemetry traces of the layer: set up once per process (`setupTracing`), off unless
 * `OTEL_EXPORTER_OTLP_ENDPOINT` (or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) is set or an exporter is
 * given (tests), so that a process without it pays nothing. The gateway's spans (operation,
 * subgraph fetch) come from Hive's OpenTelemetry plugin (`gateway/tracing.ts`), which sends the
 * context to the subgraphs in `traceparent`; a subgraph continues that trace (`useIncomingTrace`)
 * and each upstream REST call, sent or answered by the cache, is a span under it
 * (`traceUpstreamCall`, from the cost meter), so one trace holds the whole tree.
 */
import { context, propagation, SpanKind, SpanStatusCode, trace, type Attributes } from '@opentelemetry/api';
import type { SpanExporter } from '@opentelemetry/sdk-trace-base';
import type { useOpenTelemetry } from '@graphql-hive/plugin-opentelemetry';
import type { Plugin } from 'graphql-yoga';
import { sourceLabel, type UpstreamCallEvent } from './metrics.ts';
import { log } from './log.ts';
import { settingsOf, type SettingsSource } from './settings.ts';

/** The tracer of the layer's own spans. */
export const TRACER_NAME = 'openapi-supergraph';

let enabled = false;
let hivePlugin: typeof useOpenTelemetry | null = null;

/** Hive's OpenTelemetry gateway plugin, loaded by `setupTracing` when traces are on (null otherwise). */
export const hiveOpenTelemetryPlugin = (): typeof useOpenTelemetry | null => hivePlugin;

/** Whether traces are on in this process. */
export const tracingEnabled = (): boolean => enabled;

export interface TracingOptions {
  /** Where `OTEL_EXPORTER_OTLP_ENDPOINT` / `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` / `OTEL_SERVICE_NAME` are read. @default the process's settings */
  env?: SettingsSource;
  /** An exporter of its own (tests: an in-memory one, exported span by span); wins over the environment. */
  exporter?: SpanExporter;
  /** @default `OTEL_SERVICE_NAME` or 'openapi-supergraph' */
  serviceName?: string;
}

/**
 * Turns traces on for the process when configured (the first call decides; later calls answer
 * whether they are on). Call it first thing in an entry point, before the gateway and subgraphs are
 * built (their plugins ask `tracingEnabled()`). OTLP over HTTP to
 * `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, else `<OTEL_EXPORTER_OTLP_ENDPOINT>/v1/traces`, in batches;
 * W3C `traceparent` propagation; the SDK's own diagnostics go to the process logger. The SDK, the
 * exporter and Hive's plugin are imported only then, so a process without traces loads none of them.
 */
export async function setupTracing(opts: TracingOptions = {}): Promise<boolean> {
  if (enabled) return true;
  const env = settingsOf(opts.env);
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT;
  const url = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || (base ? `${base.replace(/\/+$/, '')}/v1/traces` : '');
  if (!opts.exporter && !url) return false;
  const [{ openTelemetrySetup }, { useOpenTelemetry }, { AsyncLocalStorageContextManager }] = await Promise.all([
    import('@graphql-hive/plugin-opentelemetry/setup'),
    import('@graphql-hive/plugin-opentelemetry'),
    import('@opentelemetry/context-async-hooks'),
  ]);
  const exporter = opts.exporter ?? new (await import('@opentelemetry/exporter-trace-otlp-http')).OTLPTraceExporter({ url });
  if (enabled) return true;
  openTelemetrySetup({
    log,
    contextManager: new AsyncLocalStorageContextManager(),
    resource: { serviceName: opts.serviceName ?? (env.OTEL_SERVICE_NAME || TRACER_NAME) },
    traces: { exporter, batching: !opts.exporter },
  });
  hivePlugin = useOpenTelemetry;
  enabled = true;
  return true;
}

/** The trace id of the active span, when a trace is in progress. */
export function activeTraceId(): string | undefined {
  if (!enabled) return undefined;
  const ctx = trace.getActiveSpan()?.spanContext();
  return ctx && trace.isSpanContextValid(ctx) ? ctx.traceId : undefined;
}

const headerGetter = {
  keys: (h: Headers): string[] => [...h.keys()],
  get: (h: Headers, key: string): string | undefined => h.get(key) ?? undefined,
};

/**
 * Subgraph plugin: each request to subgraph `name` is served in a server span continuing the trace
 * its `traceparent` names (over HTTP or handed over in process alike); nothing when traces are off.
 */
export function useIncomingTrace<T extends Record<string, unknown>>(name: string): Plugin<T> {
  if (!enabled) return {};
  return {
    instrumentation: {
      request: ({ request }, wrapped) => {
        const parent = propagation.extract(context.active(), request.headers, headerGetter);
        return trace.getTracer(TRACER_NAME).startActiveSpan(`subgraph ${name}`, { kind: SpanKind.SERVER }, parent, async (span) => {
          try {
            await wrapped();
          } finally {
            span.end();
          }
        });
      },
    },
  };
}

/**
 * A span for one upstream REST call, recorded when the call is (the cost meter's `record`): it
 * started `ms` ago under the active context. Attributes: area, method, endpoint template, HTTP
 * status, euro, cache source (network, cache, dedup, stale), euro at risk.
 */
export function traceUpstreamCall(call: UpstreamCallEvent, endpoint: string): void {
  if (!enabled) return;
  const end = Date.now();
  const attributes: Attributes = {
    'openapi.area': call.area,
    'http.request.method': call.method,
    'openapi.endpoint': endpoint,
    'http.response.status_code': call.status,
    'openapi.euro': call.euro,
    'openapi.cache_source': sourceLabel(call.source),
  };
  if (call.atRisk) attributes['openapi.at_risk_euro'] = call.atRisk;
  const span = trace.getTracer(TRACER_NAME).startSpan(`${call.method} ${call.area} ${endpoint}`, { kind: SpanKind.CLIENT, startTime: end - call.ms, attributes }, context.active());
  if (call.status === 0 || call.status >= 400) span.setStatus({ code: SpanStatusCode.ERROR });
  span.end(end);
}
