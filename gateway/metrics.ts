/**
 * The gateway's metrics at `/metrics` (Prometheus text format): Hive's Prometheus plugin for the
 * runtime's own (requests, phases and their latency histograms, subgraph fetches, errors), and
 * `useOperationMetrics` for what the layer adds (operations by name and outcome, subscriptions
 * open). Both write to the one registry of `platform/metrics.ts`, so in one process the
 * same page holds the subgraphs' counts too (upstream calls and euro, cache and de-duplication
 * hits, money at risk, budgets refused, poller reads, callbacks).
 */
import useMeshPrometheus from '@graphql-mesh/plugin-prometheus';
import type { GatewayPlugin } from '@graphql-hive/gateway-runtime';
import type { Logger } from '@graphql-hive/logger';
import { getOperationAST, type DocumentNode, type ExecutionResult, type GraphQLError } from 'graphql';
import { LRUCache } from 'lru-cache';
import { parseBounded } from './limits.ts';
import { keyHash } from './caller-session.ts';
import { opensSharedTopic, type SharingMetrics } from './subscription-sharing.ts';
import type { GraphQLParams } from 'graphql-yoga';
import { METRICS_PATH, operations, registerLayerMetrics, registry, subscriptionsOpen } from '../platform/metrics.ts';

/**
 * `ok`; `partial` (data and errors, a budget stopping part of it included); `refused` (a budget or
 * the estimate said no, nothing ran); `persisted_query_miss` (an APQ hash not known yet: the
 * client's normal first step, no error); `error`.
 */
export function outcomeOf(result: ExecutionResult): 'ok' | 'partial' | 'refused' | 'persisted_query_miss' | 'error' {
  const errors = result.errors ?? [];
  if (errors.length === 0) return 'ok';
  const data = result.data;
  const hasData = !!data && Object.values(data).some((v) => v !== null && v !== undefined);
  if (hasData) return 'partial';
  if (errors.some((e) => e.extensions?.code === 'COST_LIMIT_EXCEEDED')) return 'refused';
  if (errors.every((e) => e.extensions?.code === 'PERSISTED_QUERY_NOT_FOUND')) return 'persisted_query_miss';
  return 'error';
}

/** Distinct operation names labelled at most; later new names are `other` (bounded series). */
export const MAX_OPERATION_NAMES = 200;

/**
 * The operation names a label may hold: names of documents that parsed and validated (they reached
 * execution), at most `max` of them. Client text of a refused document never becomes a label.
 */
export class OperationNames {
  private readonly known = new Set<string>();
  constructor(private readonly max = MAX_OPERATION_NAMES) {}

  /** The label of a validated operation's name: itself while fewer than `max` are known, else `other`. */
  admit(name: string): string {
    if (this.known.has(name)) return name;
    if (this.known.size >= this.max) return 'other';
    this.known.add(name);
    return name;
  }

  /** The label of a name seen without validation (an answer given without execution): known names only. */
  seen(name: string | null | undefined, fallback: string): string {
    return name && this.known.has(name) ? name : fallback;
  }
}

function labelsOf(names: OperationNames, document: DocumentNode, operationName: string | null | undefined): { operation: string; type: string } {
  const op = getOperationAST(document, operationName ?? undefined);
  return { operation: op?.name ? names.admit(op.name.value) : 'anonymous', type: op?.operation ?? 'unknown' };
}

/** What the labels of an operation answered without execution are read from. */
interface ParamsLike {
  query?: string;
  operationName?: string | null;
}

/** The name and type of a document's operation, by its text (parsed once); null when it does not parse. */
const shapes = new LRUCache<string, { name: string | undefined; type: string } | false>({ max: 1_000 });
function shapeOf(query: string, operationName: string | null | undefined): { name: string | undefined; type: string } | null {
  const key = keyHash(operationName ?? '', query);
  let shape = shapes.get(key);
  if (shape === undefined) {
    try {
      const op = getOperationAST(parseBounded(query), operationName ?? undefined);
      shape = { name: op?.name?.value, type: op?.operation ?? 'unknown' };
    } catch {
      shape = false;
    }
    shapes.set(key, shape);
  }
  return shape || null;
}

/**
 * The labels of a request answered without execution (a cached or shared answer, a document
 * refused before it ran): its name when a validated document already had it, `invalid` when the
 * answer is an error, else `other`.
 */
function labelsOfParams(names: OperationNames, params: ParamsLike | undefined, result: ExecutionResult): { operation: string; type: string } {
  const fallback = result.errors?.length ? 'invalid' : 'other';
  let name = params?.operationName;
  let type = 'unknown';
  if (params?.query) {
    const shape = shapeOf(params.query, params.operationName);
    if (!shape) return { operation: 'invalid', type };
    name = shape.name ?? name;
    if (fallback !== 'invalid') type = shape.type;
  }
  return { operation: names.seen(name, fallback), type };
}

/** Counts an operation answered without execution by the gateway's HTTP edge (`cache-hits.ts`), as `useOperationMetrics` counts one answered by the runtime. */
export function countAnsweredWithoutExecution(names: OperationNames, params: ParamsLike, result: ExecutionResult): void {
  operations.inc({ ...labelsOfParams(names, params, result), outcome: outcomeOf(result) });
}

const requestOf = (ctx: unknown): object | undefined => (ctx as { request?: object } | undefined)?.request;

/**
 * Counts each client operation by name, type and outcome (executed over HTTP or graphql-ws, or
 * answered without execution: a cached answer, a document refused before it ran), and the
 * subscriptions open.
 */
export function useOperationMetrics(names = new OperationNames()): GatewayPlugin {
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
      const labels = labelsOf(names, args.document as DocumentNode, args.operationName as string | null | undefined);
      return {
        onExecuteDone({ result }) {
          if (Symbol.asyncIterator in result) {
            // Incremental delivery (`@defer`): counted once, when it ends, with every payload's errors.
            const whole: { data?: ExecutionResult['data']; errors: GraphQLError[] } = { errors: [] };
            return {
              onNext({ result: payload }) {
                if ('data' in payload && payload.data) whole.data ??= payload.data;
                whole.errors.push(...((payload.errors ?? []) as readonly GraphQLError[]));
                for (const part of ('incremental' in payload ? payload.incremental : undefined) ?? []) whole.errors.push(...((part.errors ?? []) as readonly GraphQLError[]));
              },
              onEnd() {
                operations.inc({ ...labels, outcome: outcomeOf(whole) });
              },
            };
          }
          operations.inc({ ...labels, outcome: outcomeOf(result) });
        },
      };
    },
    onSubscribe({ args }) {
      const request = requestOf(args.contextValue);
      if (request) executed.add(request);
      const labels = labelsOf(names, args.document as DocumentNode, args.operationName as string | null | undefined);
      return {
        onSubscribeResult({ result }) {
          if (!(Symbol.asyncIterator in result)) {
            operations.inc({ ...labels, outcome: outcomeOf(result) });
            return;
          }
          operations.inc({ ...labels, outcome: 'ok' });
          // A graphql-ws subscription opening a shared topic: its subscribers (itself included) are
          // counted open by the sharing, which knows when each leaves; this execution may outlive it.
          if (opensSharedTopic(args.contextValue)) return;
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
      operations.inc({ ...labelsOfParams(names, params.get(request), result), outcome: outcomeOf(result) });
    },
  };
}

/**
 * Counts the graphql-ws subscribers a shared subscription serves (`useWebSocketSharing`), as
 * `useOperationMetrics` counts what the runtime runs: a joiner is an operation (`ok` once the topic's
 * document was accepted, else the refusal's outcome, its name a label only if a validated document
 * had it), and every subscriber, the opener included, a subscription open until it ends.
 */
export function sharingMetrics(names: OperationNames): SharingMetrics {
  return {
    served(shape, operation) {
      const label = shape.name ? names.admit(shape.name) : 'anonymous';
      if (operation) operations.inc({ operation: label, type: 'subscription', outcome: 'ok' });
      subscriptionsOpen.inc({ operation: label });
      let open = true;
      return () => {
        if (!open) return;
        open = false;
        subscriptionsOpen.dec({ operation: label });
      };
    },
    refused(shape, result) {
      operations.inc({ operation: names.seen(shape.name, 'invalid'), type: 'subscription', outcome: outcomeOf(result) });
    },
  };
}

/** The gateway's metric plugins; `log` is the runtime's logger (the plugins' context); `names` the operation labels. */
export function metricsPlugins(log: Logger, names = new OperationNames()): GatewayPlugin[] {
  registerLayerMetrics();
  return [
    useMeshPrometheus({
      log,
      endpoint: METRICS_PATH,
      registry,
      // No request URL (a GET operation's query string holds variables: VAT numbers, ids) and no
      // client-chosen operation name or field path (unbounded series): `openapi_operations_total`
      // labels bounded, validated names.
      labels: { url: false, operationName: false, path: false },
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
    useOperationMetrics(names),
  ];
}
