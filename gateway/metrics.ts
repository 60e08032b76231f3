/**
 * The gateway's metrics at `/metrics` (Prometheus text format): Hive's Prometheus plugin for the
 * runtime's own (requests, phases and their latency histograms, subgraph fetches, errors), and
 * `useOperationMetrics` for what the layer adds (operations by name and outcome, subscriptions
 * open). Both write to the one registry of `subgraphs/runtime/metrics.ts`, so in one process the
 * same page holds the subgraphs' counts too (upstream calls and euro, cache and de-duplication
 * hits, money at risk, budgets refused, poller reads, callbacks).
 */
import useMeshPrometheus from '@graphql-mesh/plugin-prometheus';
import type { GatewayPlugin } from '@graphql-hive/gateway-runtime';
import type { Logger } from '@graphql-hive/logger';
import { getOperationAST, parse, type DocumentNode, type ExecutionResult } from 'graphql';
import type { GraphQLParams } from 'graphql-yoga';
import { METRICS_PATH, operations, registry, subscriptionsOpen } from '../subgraphs/runtime/metrics.ts';

/** `ok`; `partial` (data and errors); `refused` (a budget or the estimate said no); `error`. */
export function outcomeOf(result: ExecutionResult): 'ok' | 'partial' | 'refused' | 'error' {
  const errors = result.errors ?? [];
  if (errors.length === 0) return 'ok';
  if (errors.some((e) => e.extensions?.code === 'COST_LIMIT_EXCEEDED')) return 'refused';
  const data = result.data;
  return data && Object.values(data).some((v) => v !== null && v !== undefined) ? 'partial' : 'error';
}

function labelsOf(document: DocumentNode, operationName: string | null | undefined): { operation: string; type: string } {
  const op = getOperationAST(document, operationName ?? undefined);
  return { operation: op?.name?.value ?? 'anonymous', type: op?.operation ?? 'unknown' };
}

/** The labels of a request answered without execution (a cached answer, a parse error), from its params. */
function labelsOfParams(params: GraphQLParams | undefined): { operation: string; type: string } {
  if (!params?.query) return { operation: params?.operationName ?? 'anonymous', type: 'unknown' };
  try {
    return labelsOf(parse(params.query), params.operationName);
  } catch {
    return { operation: params.operationName ?? 'anonymous', type: 'unknown' };
  }
}

const requestOf = (ctx: unknown): object | undefined => (ctx as { request?: object } | undefined)?.request;

/**
 * Counts each client operation by name, type and outcome (executed over HTTP or graphql-ws, or
 * answered without execution: a cached answer, a document refused before it ran), and the
 * subscriptions open.
 */
export function useOperationMetrics(): GatewayPlugin {
  const params = new WeakMap<object, GraphQLParams>();
  const executed = new WeakSet<object>();
  return {
    onParams({ params: p, request }) {
      // graphql-ws runs operations without an HTTP request.
      if (typeof request === 'object' && request !== null) params.set(request, p);
    },
    onExecute({ args }) {
      const request = requestOf(args.contextValue);
      if (request) executed.add(request);
      const labels = labelsOf(args.document as DocumentNode, args.operationName as string | null | undefined);
      return {
        onExecuteDone({ result }) {
          if (Symbol.asyncIterator in result) return;
          operations.inc({ ...labels, outcome: outcomeOf(result) });
        },
      };
    },
    onSubscribe({ args }) {
      const request = requestOf(args.contextValue);
      if (request) executed.add(request);
      const labels = labelsOf(args.document as DocumentNode, args.operationName as string | null | undefined);
      return {
        onSubscribeResult({ result }) {
          if (!(Symbol.asyncIterator in result)) {
            operations.inc({ ...labels, outcome: outcomeOf(result) });
            return;
          }
          operations.inc({ ...labels, outcome: 'ok' });
          subscriptionsOpen.inc({ operation: labels.operation });
          return {
            onEnd() {
              subscriptionsOpen.dec({ operation: labels.operation });
            },
          };
        },
      };
    },
    onResultProcess({ request, result }) {
      if (typeof request !== 'object' || request === null || executed.has(request) || Array.isArray(result) || Symbol.asyncIterator in result) return;
      operations.inc({ ...labelsOfParams(params.get(request)), outcome: outcomeOf(result) });
    },
  };
}

/** The gateway's metric plugins; `log` is the runtime's logger (the plugins' context). */
export function metricsPlugins(log: Logger): GatewayPlugin[] {
  return [
    useMeshPrometheus({
      log,
      endpoint: METRICS_PATH,
      registry,
      metrics: {
        graphql_envelop_request: true,
        graphql_envelop_request_duration: true,
        graphql_envelop_error_result: true,
        graphql_envelop_phase_parse: true,
        graphql_envelop_phase_validate: true,
        graphql_envelop_phase_execute: true,
        graphql_envelop_phase_subscribe: true,
        graphql_yoga_http_duration: true,
        graphql_gateway_fetch_duration: true,
        graphql_gateway_subgraph_execute_duration: true,
        graphql_gateway_subgraph_execute_errors: true,
        // Per field: too many series for what it tells.
        graphql_envelop_execute_resolver: false,
        graphql_envelop_deprecated_field: false,
        graphql_envelop_request_time_summary: false,
        graphql_envelop_phase_context: false,
        graphql_envelop_schema_change: false,
      },
    }) as GatewayPlugin,
    useOperationMetrics(),
  ];
}
