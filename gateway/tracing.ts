/**
 * The gateway's traces, when the process has them on (`subgraphs/runtime/tracing.ts`): Hive's
 * OpenTelemetry plugin makes the spans of each request, operation and subgraph fetch and sends the
 * context to the subgraphs (`traceparent`); `extensions.traceId` of each response names the trace,
 * so a client's report can be found in the tracing backend. Off: no plugin, no cost.
 */
import { useOpenTelemetry, type OpenTelemetryPlugin } from '@graphql-hive/plugin-opentelemetry';
import type { GatewayConfigContext, GatewayPlugin } from '@graphql-hive/gateway-runtime';
import { trace } from '@opentelemetry/api';
import { tracingEnabled } from '../subgraphs/runtime/tracing.ts';

/** Puts the operation's trace id into `extensions.traceId`. */
function useTraceIdExtension(otel: OpenTelemetryPlugin): GatewayPlugin {
  return {
    onExecute({ args }) {
      return {
        onExecuteDone({ result, setResult }) {
          if (Symbol.asyncIterator in result) return;
          const ctx = otel.getOperationContext(args.contextValue);
          const span = ctx ? trace.getSpan(ctx)?.spanContext() : undefined;
          if (span && trace.isSpanContextValid(span)) setResult({ ...result, extensions: { ...(result.extensions ?? {}), traceId: span.traceId } });
        },
      };
    },
  };
}

/** The gateway's tracing plugins: none unless traces are on in the process. */
export function tracingPlugins(ctx: Partial<GatewayConfigContext>): GatewayPlugin[] {
  if (!tracingEnabled()) return [];
  const otel = useOpenTelemetry({ ...ctx, traces: true });
  return [otel as GatewayPlugin, useTraceIdExtension(otel)];
}
