/**
 * Gateway plugin: adds up the `extensions.cost` of every subgraph call made for an operation and
 * returns the total to the client in `extensions.cost` (zero for operations refused before
 * execution).
 */
import type { GatewayPlugin } from '@graphql-hive/gateway-runtime';
import { mergeSummaries, summarize, type CostSummary } from '../subgraphs/upstream/cost.ts';

const isSummary = (v: unknown): v is CostSummary =>
  typeof v === 'object' && v !== null && Array.isArray((v as { calls?: unknown }).calls);

export function useCostAggregation(): GatewayPlugin {
  const parts = new WeakMap<object, CostSummary[]>();
  const partsOf = (ctx: object): CostSummary[] => {
    let list = parts.get(ctx);
    if (!list) parts.set(ctx, (list = []));
    return list;
  };
  return {
    onSubgraphExecute({ executionRequest }) {
      const ctx = executionRequest.context as object | undefined;
      if (!ctx) return;
      return ({ result }) => {
        if (Symbol.asyncIterator in result) return;
        const cost = result.extensions?.cost;
        if (isSummary(cost)) partsOf(ctx).push(cost);
      };
    },
    onExecute({ args }) {
      const ctx = args.contextValue as object;
      return {
        onExecuteDone({ result, setResult }) {
          if (Symbol.asyncIterator in result) return;
          setResult({ ...result, extensions: { ...(result.extensions ?? {}), cost: mergeSummaries(parts.get(ctx) ?? []) } });
        },
      };
    },
    // Operations refused before execution (parse or validation errors) cost nothing: say so too.
    onResultProcess({ result, setResult }) {
      if (Array.isArray(result) || Symbol.asyncIterator in result) return;
      if (result.extensions?.cost === undefined) setResult({ ...result, extensions: { ...(result.extensions ?? {}), cost: summarize([]) } });
    },
  };
}
