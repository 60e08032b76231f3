/**
 * The gateway's traces, when the process has them on (`platform/tracing.ts`): Hive's
 * OpenTelemetry plugin makes the spans of each request, operation and subgraph fetch and sends the
 * context to the subgraphs (`traceparent`); `extensions.traceId` of each response names the trace,
 * so a client's report can be found in the tracing backend. Off: no plugin, no cost.
 */
import type { OpenTelemetryPlugin } from '@graphql-hive/plugin-opentelemetry';
import type { GatewayConfigContext, GatewayPlugin } from '@graphql-hive/gateway-runtime';
import { trace, type Context } from '@opentelemetry/api';
import { handleStreamOrSingleExecutionResult, mapAsyncIterator } from 'graphql-yoga';
import type { ExecutionResult } from 'graphql';
import { hiveOpenTelemetryPlugin } from '../platform/tracing.ts';

/**
 * Puts the trace id into `extensions.traceId` of every answer over HTTP: executed or not (parse and
 * validation errors, persisted-query errors, cached answers), each event of a stream too. Operations
 * over graphql-ws have no HTTP request for Hive's plugin to trace (no trace, no id).
 */
function useTraceIdExtension(otel: OpenTelemetryPlugin): GatewayPlugin {
  const traceIdOf = (ctx: Context | undefined): string | undefined => {
    const span = (ctx ? trace.getSpan(ctx) : trace.getActiveSpan())?.spanContext();
    return span && trace.isSpanContextValid(span) ? span.traceId : undefined;
  };
  const withId = (r: ExecutionResult, traceId: string): ExecutionResult => ({ ...r, extensions: { ...(r.extensions ?? {}), traceId } });
  // Executed operations (graphql-ws too, which has no HTTP request): each result and each event.
  const onDone = (contextValue: unknown) => (payload: Parameters<typeof handleStreamOrSingleExecutionResult>[0]) => {
    const traceId = traceIdOf(otel.getOperationContext(contextValue));
    if (traceId) handleStreamOrSingleExecutionResult(payload, ({ result, setResult }) => setResult(withId(result, traceId)));
  };
  return {
    onExecute: ({ args }) => ({ onExecuteDone: onDone(args.contextValue) }),
    onSubscribe: ({ args }) => ({ onSubscribeResult: onDone(args.contextValue) }),
    // Answers over HTTP, executed or not (parse and validation errors, persisted-query errors, cached answers).
    onResultProcess({ request, serverContext, result, setResult }) {
      const traceId = traceIdOf((request ? otel.getHttpContext(request) : undefined) ?? otel.getOperationContext(serverContext));
      if (!traceId) return;
      if (Array.isArray(result)) setResult(result.map((r: ExecutionResult) => withId(r, traceId)));
      else if (Symbol.asyncIterator in result) setResult(mapAsyncIterator(result, (r: ExecutionResult) => withId(r, traceId)));
      else setResult(withId(result, traceId));
    },
  };
}

/** The gateway's tracing plugins: none unless traces are on in the process (`setupTracing` loaded Hive's plugin). */
export function tracingPlugins(ctx: Partial<GatewayConfigContext>): GatewayPlugin[] {
  const useOpenTelemetry = hiveOpenTelemetryPlugin();
  if (!useOpenTelemetry) return [];
  const otel = useOpenTelemetry({ ...ctx, traces: true });
  return [otel as GatewayPlugin, useTraceIdExtension(otel)];
}
