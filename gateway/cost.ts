/**
 * Gateway plugin: the money side of every client operation.
 *
 * - **One budget per operation**: each query or mutation gets an id, sent to every subgraph request
 *   of its query plan (`x-openapi-operation`); the subgraphs charge that one entry of the shared
 *   cost ledger, so `OPENAPI_MAX_EURO_PER_OPERATION` holds across every subgraph and entity fetch.
 *   (A subscription's events are each budgeted on their own.)
 * - **An estimate before spending**: the worst-case euro of the operation (`estimate.ts`); an
 *   operation whose estimate passes the limit is refused with `COST_LIMIT_EXCEEDED` before any
 *   upstream call, and `extensions.cost.estimate` is on every response. A client asks for the
 *   estimate alone, without executing, with the header `x-openapi-estimate-only: true` or the
 *   request extension `{"cost": {"estimateOnly": true}}`; that answer also lists the endpoints the
 *   operation may call and what the response cache would save this caller (`estimateDetail`).
 * - **What was spent**: the `extensions.cost` of every subgraph call is added up (calls, cache and
 *   de-duplication hits, euro, euro at risk, where the budgets stand); answers served from stale
 *   data add a warning to `extensions.warnings`. An answer delivered in parts (`@defer`) says in
 *   each payload what was spent so far, and the whole in its last (`withRunningCost`).
 */
import { randomUUID } from 'node:crypto';
import type { GatewayPlugin } from '@graphql-hive/gateway-runtime';
import { GraphQLError, type DocumentNode, type ExecutionResult, type GraphQLSchema } from 'graphql';
import { ESTIMATE_HEADER, OPERATION_HEADER, SCOPES_HEADER, scopesHeaderOf } from '../subgraphs/runtime/operation.ts';
import type { PricingTable } from '../subgraphs/runtime/pricing.ts';
import { mergeSummaries, round4, summarize, type CostSummary } from '../subgraphs/upstream/cost.ts';
import { priceOf } from '../contract/prices.ts';
import { countBudgetRefused, countReplayedAnswer } from '../platform/metrics.ts';
import { setLogContext } from '../platform/log.ts';
import { EstimateError, estimateOperation, type Estimate } from './estimate.ts';
import { SERVED_FROM_RESPONSE_CACHE, SHARED_IN_FLIGHT } from './response-cache.ts';
import { log } from '../platform/log.ts';
import { LRUCache } from 'lru-cache';
import { stableJson } from './caller-session.ts';

const isSummary = (v: unknown): v is CostSummary => typeof v === 'object' && v !== null && Array.isArray((v as { calls?: unknown }).calls);

export interface CostPluginOptions {
  pricing: PricingTable;
  /** Euro one operation may spend; null for no limit. */
  maxEuroPerOperation: number | null;
  /** Items the estimate assumes for a list without a documented limit. @default 5 */
  defaultListSize?: number;
  /**
   * Whether this caller's answer to the operation is in the response cache now (`response-cache.ts`,
   * `LayerResponseCache.holds`): an estimate-only answer then says the cache would save it all.
   * @default none (an estimate-only answer says nothing is known to be cached)
   */
  cachedAnswer?: (ctx: YogaLikeContext) => Promise<boolean>;
}

/** One payload of an incremental delivery (the 2022-08-24 format the runtime's executor sends). */
interface IncrementalPayload {
  extensions?: Record<string, unknown>;
  hasNext?: boolean;
  incremental?: readonly unknown[];
}

/**
 * The payloads of an incremental delivery (`@defer`, `@stream`), each with the operation's spending
 * up to it in `extensions.cost` (`extensions()` reads it as the payload goes out): a running total,
 * never a part's alone, with `partial: true` while payloads follow, so the last payload's figure is
 * the operation's whole and a client keeping the latest counts nothing twice. The last payload is
 * one of its own, `{hasNext: false, extensions}`, after the executor's last part: clients of the
 * 2022-08-24 format (Apollo Client) read the top-level `extensions` of a payload without parts
 * only, and the response cache keeps the last payload's `extensions` with the merged answer.
 */
export async function* withRunningCost<P extends IncrementalPayload>(payloads: AsyncIterable<P>, extensions: () => Record<string, unknown>): AsyncGenerator<P> {
  const now = (partial: boolean): Record<string, unknown> => {
    const ext = extensions();
    return partial && typeof ext.cost === 'object' && ext.cost !== null ? { ...ext, cost: { ...ext.cost, partial: true } } : ext;
  };
  for await (const payload of payloads) {
    const last = payload.hasNext !== true;
    const parts = payload.incremental?.length ?? 0;
    if (!last || parts === 0) {
      yield { ...payload, extensions: { ...(payload.extensions ?? {}), ...now(!last) } };
      continue;
    }
    yield { ...payload, hasNext: true, extensions: { ...(payload.extensions ?? {}), ...now(true) } };
    yield { hasNext: false, extensions: now(false) } as P;
  }
}

/** The header asking for the estimate alone. */
export const ESTIMATE_ONLY_HEADER = 'x-openapi-estimate-only';

interface OperationState {
  id: string;
  estimate: Estimate;
  parts: CostSummary[];
}

export interface YogaLikeContext {
  params?: { query?: string; operationName?: string | null; variables?: Record<string, unknown> | null; extensions?: Record<string, unknown> };
  request?: { headers: { get(name: string): string | null } };
}

/** Whether an operation asks for its estimate alone (header or request extension); also read by `response-cache.ts`. */
export function wantsEstimateOnly(ctx: YogaLikeContext): boolean {
  const header = ctx.request?.headers.get(ESTIMATE_ONLY_HEADER);
  if (header && /^(1|true|yes)$/i.test(header.trim())) return true;
  const ext = ctx.params?.extensions?.cost;
  return typeof ext === 'object' && ext !== null && (ext as { estimateOnly?: unknown }).estimateOnly === true;
}

/**
 * The cost of an answer another operation paid for (`response-cache.ts`): from the response cache
 * (`cache`) or shared in flight (`dedup`). Each of its calls is reported as answered that way, at
 * €0; `saved` says what asking again would have cost; the estimate is the original's.
 */
/** The `extensions.cost` an answer carries, if any. */
const costOf = (result: ExecutionResult): unknown => (result.extensions as { cost?: unknown } | undefined)?.cost;

export function replayedCost(original: unknown, source: 'cache' | 'dedup'): Record<string, unknown> {
  const o = isSummary(original) ? original : summarize([]);
  const calls = o.calls.map((c) => ({ ...c, source, euro: 0, ms: 0, atRisk: undefined }));
  const estimate = (original as { estimate?: unknown } | null)?.estimate ?? { euro: 0, breakdown: [] };
  const saved = (original as { saved?: unknown } | null)?.saved ?? { upstreamCalls: o.upstreamCalls, euro: o.euro };
  // An id of its own: nothing of it is at risk, `operationCost` answers zeros for it.
  return { ...summarize(calls), saved, answeredFrom: source === 'cache' ? 'response-cache' : 'in-flight', estimate, operationId: randomUUID() };
}

/** The `extensions.cost.estimate` of a response. */
const estimateOf = (e: Estimate) => ({ euro: e.euro, breakdown: e.breakdown });

/** One endpoint an operation may call, as an estimate-only answer lists it. */
export interface EstimatedEndpoint {
  /** As the price table names it, e.g. `company GET IT-start/{id}`. */
  endpoint: string;
  area: string;
  /** Euro of one call (before free tiers and subscriptions). */
  euro: number;
  /** Seconds a successful answer stays in the caller's cache (0: read upstream every time). */
  cacheSeconds: number;
}

/**
 * What an estimate-only answer adds to the estimate: the endpoints the operation may call, with the
 * price of one call each, and what the cache would save this caller now: all of it when
 * the caller's answer is in the response cache, else nothing known (upstream answers each tenant
 * keeps for `cacheSeconds` may still answer some calls).
 */
export function estimateDetail(e: Estimate, cached: boolean): Record<string, unknown> {
  const endpoints: EstimatedEndpoint[] = e.endpoints.map((ep) => ({
    endpoint: `${ep.area} ${ep.method} ${ep.path.replace(/^\/+/, '')}`,
    area: ep.area,
    euro: round4(priceOf(ep.area, ep.method, ep.path)),
    cacheSeconds: ep.method === 'GET' ? (ep.ttl ?? 0) : 0,
  }));
  return { ...estimateOf(e), endpoints, cache: { answered: cached, saves: cached ? e.euro : 0, afterCache: cached ? 0 : e.euro } };
}

/** Variables longer than this (as JSON) are not memo keys: at most 100 such keys a document. */
const MEMO_VARIABLES_MAX_CHARS = 4_096;

export function useCost(opts: CostPluginOptions): GatewayPlugin {
  const operations = new WeakMap<object, OperationState>();
  /**
   * Estimates by schema, document (the runtime's parse cache hands the same document for the same
   * text) and operation name and variables: a function of those alone, priced once.
   */
  const estimates = new WeakMap<GraphQLSchema, WeakMap<DocumentNode, LRUCache<string, Estimate>>>();
  const priced = (schema: GraphQLSchema, document: DocumentNode, operationName: string | null | undefined, variables: Record<string, unknown>): Estimate => {
    let bySchema = estimates.get(schema);
    if (!bySchema) estimates.set(schema, (bySchema = new WeakMap()));
    let byDocument = bySchema.get(document);
    if (!byDocument) bySchema.set(document, (byDocument = new LRUCache<string, Estimate>({ max: 100 })));
    const json = stableJson(variables);
    // Large variables (a bulk sending's recipients, files) are priced each time, not kept as keys.
    if (json.length > MEMO_VARIABLES_MAX_CHARS)
      return estimateOperation(schema, document, operationName, variables, { pricing: opts.pricing, defaultListSize: opts.defaultListSize });
    const key = `${operationName ?? ''}\u0000${json}`;
    let estimate = byDocument.get(key);
    if (!estimate) {
      estimate = estimateOperation(schema, document, operationName, variables, { pricing: opts.pricing, defaultListSize: opts.defaultListSize });
      byDocument.set(key, estimate);
    }
    return estimate;
  };

  const withCost = (result: Pick<ExecutionResult, 'extensions'>, cost: Record<string, unknown>): ExecutionResult => {
    const extensions: Record<string, unknown> = { ...(result.extensions ?? {}), cost };
    const stale = Array.isArray(cost.calls) ? (cost.calls as Array<{ source?: string; area?: string; path?: string }>).filter((c) => c.source === 'stale') : [];
    if (stale.length > 0) {
      extensions.warnings = [
        ...((result.extensions?.warnings as unknown[] | undefined) ?? []),
        {
          code: 'STALE_DATA',
          message: `The Openapi service failed; ${stale.length} answer(s) came from data cached earlier, past its freshness`,
          calls: stale.map((c) => `${c.area ?? ''} ${c.path ?? ''}`.trim()),
        },
      ];
    }
    return { ...result, extensions };
  };

  return {
    onExecute({ args, setResultAndStopExecution }) {
      const ctx = args.contextValue as object;
      let estimate: Estimate;
      try {
        estimate = priced(
          args.schema as GraphQLSchema,
          args.document as DocumentNode,
          args.operationName as string | null | undefined,
          (args.variableValues ?? {}) as Record<string, unknown>,
        );
      } catch (err) {
        // What cannot be priced is not run (fail closed).
        const message = err instanceof EstimateError ? `This operation cannot be priced before it runs: ${err.message}` : 'This operation cannot be priced before it runs';
        if (!(err instanceof EstimateError)) log.error({ err }, '[gateway] estimate failed');
        countBudgetRefused('unpriced', 'estimate');
        setResultAndStopExecution({
          errors: [new GraphQLError(message, { extensions: { code: 'COST_LIMIT_EXCEEDED', scope: 'operation' } })],
          extensions: { cost: { ...summarize([]), estimate: { euro: 0, breakdown: [] } } },
        });
        return;
      }
      const state: OperationState = { id: randomUUID(), estimate, parts: [] };
      operations.set(ctx, state);
      setLogContext({ operationId: state.id });
      const zero = { ...summarize([]), estimate: estimateOf(estimate), operationId: state.id };
      if (wantsEstimateOnly(ctx)) {
        const cachedAnswer = opts.cachedAnswer;
        if (!cachedAnswer) {
          setResultAndStopExecution({ data: null, extensions: { cost: { ...zero, executed: false, estimate: estimateDetail(estimate, false) } } });
          return;
        }
        // Whether the response cache holds the caller's answer: a read of the cache, never an upstream call.
        return cachedAnswer(ctx as YogaLikeContext)
          .catch(() => false)
          .then((cached) => {
            setResultAndStopExecution({ data: null, extensions: { cost: { ...zero, executed: false, estimate: estimateDetail(estimate, cached) } } });
          })
          .then(() => undefined);
      }
      const limit = opts.maxEuroPerOperation;
      if (limit !== null && estimate.euro > limit + 1e-9) {
        countBudgetRefused('operation', 'estimate');
        const error = new GraphQLError(
          `This operation may spend up to €${estimate.euro} upstream, more than its budget of €${limit}: nothing was called. Ask for fewer or cheaper fields, or split it.`,
          { extensions: { code: 'COST_LIMIT_EXCEEDED', scope: 'operation', budget: limit, estimate: estimate.euro } },
        );
        setResultAndStopExecution({ errors: [error], extensions: { cost: zero } });
        return;
      }
      return {
        onExecuteDone({ result, setResult }) {
          if (Symbol.asyncIterator in result) {
            // Incremental delivery (`@defer`, `@stream`): every payload says what the operation
            // has spent so far, the last one the whole (`withRunningCost`).
            setResult(withRunningCost(result, () => withCost({}, { ...mergeSummaries(state.parts), estimate: estimateOf(estimate), operationId: state.id }).extensions ?? {}));
            return;
          }
          setResult(withCost(result, { ...mergeSummaries(state.parts), estimate: estimateOf(estimate), operationId: state.id }));
        },
      };
    },
    onSubgraphExecute({ executionRequest, setExecutionRequest }) {
      const ctx = executionRequest.context as object | undefined;
      if (!ctx) return;
      const state = operations.get(ctx);
      const extensions = executionRequest.extensions ?? {};
      const headers = (extensions.headers ?? {}) as Record<string, string>;
      // The estimate and the scopes the operation needs, for the account guard's checks before any call.
      const estimate = state ? { [ESTIMATE_HEADER]: String(state.estimate.euro), [SCOPES_HEADER]: scopesHeaderOf(state.estimate.endpoints) } : {};
      setExecutionRequest({ ...executionRequest, extensions: { ...extensions, headers: { ...headers, [OPERATION_HEADER]: state?.id ?? randomUUID(), ...estimate } } });
      return ({ result }) => {
        if (Symbol.asyncIterator in result) return;
        const cost = result.extensions?.cost;
        if (state && isSummary(cost)) state.parts.push(cost);
      };
    },
    // Operations refused before execution (parse or validation errors) cost nothing: say so too.
    onResultProcess({ result, setResult }) {
      if (Array.isArray(result) || Symbol.asyncIterator in result) return;
      // Served whole from the response cache: no call made, the stored cost says what was saved.
      if (SERVED_FROM_RESPONSE_CACHE in result) {
        countReplayedAnswer('cache');
        setResult({ ...result, extensions: { ...(result.extensions ?? {}), cost: replayedCost(costOf(result), 'cache') } });
        return;
      }
      // Another caller's answer, shared in flight: it reported the calls, this one the de-duplication.
      if (SHARED_IN_FLIGHT in result) {
        countReplayedAnswer('dedup');
        setResult({ ...result, extensions: { ...(result.extensions ?? {}), cost: replayedCost(costOf(result), 'dedup') } });
        return;
      }
      if (costOf(result) === undefined) setResult({ ...result, extensions: { ...(result.extensions ?? {}), cost: { ...summarize([]), estimate: { euro: 0, breakdown: [] } } } });
    },
  };
}
