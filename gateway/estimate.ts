/**
 * The worst-case euro of a client operation, before anything is spent: one walk over the operation
 * against the supergraph, pricing each field from the areas' tables (`PRICING` of the registry,
 * `subgraphs/index.ts`, given by the entry point) and multiplying what lies below a list by the most items it can hold. Cached data makes the actual
 * cost lower; the estimate assumes nothing is cached, so it is never lower than what the layer
 * spends, as long as lists without a documented limit stay within the assumed size (the budget is
 * enforced on actual spending as well).
 *
 * Why not the runtime's demand-control plugin: it prices each subgraph request as it is sent, so
 * the first fetches of an operation could spend before a later one is found over the limit; and a
 * company's price is not a sum of field weights but the cheapest set of tiers covering everything
 * selected on it, which a per-field `@cost` cannot say.
 */
import {
  getNamedType,
  getNullableType,
  isCompositeType,
  isListType,
  isObjectType,
  isInterfaceType,
  Kind,
  OperationTypeNode,
  getDirectiveValues,
  GraphQLIncludeDirective,
  GraphQLSkipDirective,
  type DocumentNode,
  type FragmentDefinitionNode,
  type GraphQLCompositeType,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from 'graphql';
import { getArgumentValues, getVariableValues } from 'graphql/execution/values.js';
import { collectingEndpoints, PricingRefused, type Args, type PricingTable } from '../subgraphs/runtime/pricing.ts';
import type { Endpoint } from '../subgraphs/upstream/endpoint.ts';
import { round4 } from '../subgraphs/upstream/cost.ts';

/** Rounded up to 1/10000: an estimate never rounds below what it bounds. */
const ceil4 = (n: number): number => Math.ceil(n * 10000 - 1e-6) / 10000;

export interface EstimateOptions {
  pricing: PricingTable;
  /** Items assumed for a list field without a documented limit. @default 5 */
  defaultListSize?: number;
}

export interface Estimate {
  /** Worst-case euro of the operation. */
  euro: number;
  /** The priced fields and what they contribute (coordinate → euro), largest first. */
  breakdown: Array<{ field: string; euro: number }>;
  /**
   * The endpoints the priced fields may call (the worst case the euro counts, at €0 too), learnt
   * from the tables as they price: the scopes the whole operation needs (`cost.ts` sends them).
   */
  endpoints: Endpoint[];
}

function included(node: { directives?: readonly unknown[] | undefined }, variables: Args): boolean {
  if (!node.directives || node.directives.length === 0) return true;
  const n = node as Parameters<typeof getDirectiveValues>[1];
  if (getDirectiveValues(GraphQLSkipDirective, n, variables)?.if === true) return false;
  if (getDirectiveValues(GraphQLIncludeDirective, n, variables)?.if === false) return false;
  return true;
}

/** The operation `operationName` names (or the only one). */
export function selectOperation(document: DocumentNode, operationName?: string | null): OperationDefinitionNode | null {
  const ops = document.definitions.filter((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
  if (operationName) return ops.find((o) => o.name?.value === operationName) ?? null;
  return ops.length === 1 ? ops[0] : null;
}

/** An operation the estimate cannot price (too deep); refused rather than priced at nothing. */
export class EstimateError extends Error {
  override readonly name = 'EstimateError';
}

/** Field nesting the estimate follows; deeper is refused (the document limit is lower anyway). */
const MAX_FIELD_DEPTH = 64;
/** Fragment expansions the estimate follows in all (a guard against exponential fragment fan-out). */
const MAX_EXPANSIONS = 100_000;

/**
 * Worst-case euro of an operation valid against `schema`, and the endpoints it may call.
 * `rawVariables` are the request's variables as sent: they are coerced here (defaults of variables
 * applied), as execution will. Variables that do not coerce price at 0: execution refuses them
 * before any call.
 */
export function estimateOperation(schema: GraphQLSchema, document: DocumentNode, operationName: string | null | undefined, rawVariables: Args, opts: EstimateOptions): Estimate {
  try {
    const { result, endpoints } = collectingEndpoints(() => walkOperation(schema, document, operationName, rawVariables, opts));
    return { ...result, endpoints };
  } catch (err) {
    // An area's refusal (`PricingRefused`) refuses the operation as one the estimate cannot price.
    if (err instanceof PricingRefused) throw new EstimateError(err.message);
    throw err;
  }
}

function walkOperation(
  schema: GraphQLSchema,
  document: DocumentNode,
  operationName: string | null | undefined,
  rawVariables: Args,
  opts: EstimateOptions,
): Omit<Estimate, 'endpoints'> {
  const op = selectOperation(document, operationName);
  if (!op) return { euro: 0, breakdown: [] };
  const coerced = getVariableValues(schema, op.variableDefinitions ?? [], rawVariables);
  if (coerced.errors) return { euro: 0, breakdown: [] };
  const variables: Args = coerced.coerced;
  let expansions = 0;
  const root =
    op.operation === OperationTypeNode.QUERY ? schema.getQueryType() : op.operation === OperationTypeNode.MUTATION ? schema.getMutationType() : schema.getSubscriptionType();
  if (!root) return { euro: 0, breakdown: [] };
  const fragments: Record<string, FragmentDefinitionNode> = {};
  for (const d of document.definitions) if (d.kind === Kind.FRAGMENT_DEFINITION) fragments[d.name.value] = d;
  const listSize = opts.defaultListSize ?? 5;
  const byField = new Map<string, number>();
  const add = (field: string, euro: number): void => {
    if (euro > 0) byField.set(field, (byField.get(field) ?? 0) + euro);
  };

  // Fragment cycles are invalid documents (refused by validation); the bounds are a second guard.
  const walk = (set: SelectionSetNode, parent: GraphQLCompositeType, times: number, parentArgs: Args, depth: number, seen: Set<string>): void => {
    if (times <= 0) return;
    if (depth > MAX_FIELD_DEPTH || ++expansions > MAX_EXPANSIONS) throw new EstimateError('the operation is too deeply nested to be priced');
    for (const sel of set.selections) {
      if (!included(sel, variables)) continue;
      if (sel.kind === Kind.INLINE_FRAGMENT) {
        const t = sel.typeCondition ? schema.getType(sel.typeCondition.name.value) : parent;
        if (t && isCompositeType(t)) walk(sel.selectionSet, t, times, parentArgs, depth, seen);
        continue;
      }
      if (sel.kind === Kind.FRAGMENT_SPREAD) {
        const frag = fragments[sel.name.value];
        const t = frag ? schema.getType(frag.typeCondition.name.value) : null;
        if (frag && t && isCompositeType(t)) walk(frag.selectionSet, t, times, parentArgs, depth, seen);
        continue;
      }
      if (!isObjectType(parent) && !isInterfaceType(parent)) continue;
      const def = parent.getFields()[sel.name.value];
      if (!def) continue;
      const coordinate = `${parent.name}.${def.name}`;
      let args: Args;
      try {
        args = getArgumentValues(def, sel, variables);
      } catch {
        args = {};
      }
      const priced = opts.pricing.fields[coordinate];
      // The same paid field with the same arguments on the same object (aliases, fragments) is
      // one call: loaders are keyed by the call.
      const callKey = `${coordinate}|${JSON.stringify(args)}`;
      if (priced?.euro && (parent === root || !seen.has(callKey))) add(coordinate, times * priced.euro(args));
      seen.add(callKey);
      const named = getNamedType(def.type);
      const items = isListType(getNullableType(def.type)) ? (priced?.maxItems ? priced.maxItems(args, parentArgs, listSize) : listSize) : 1;
      const below = times * items;
      const entity = opts.pricing.entities[named.name];
      if (entity) add(named.name, below * entity({ node: sel, coordinate, args, parentArgs, fragments, variables }));
      if (sel.selectionSet && isCompositeType(named)) walk(sel.selectionSet, named, below, args, depth + 1, new Set());
    }
  };
  walk(op.selectionSet, root, 1, {}, 0, new Set());
  const breakdown = [...byField].map(([field, euro]) => ({ field, euro: round4(euro) })).sort((a, b) => b.euro - a.euro);
  return { euro: ceil4([...byField.values()].reduce((a, b) => a + b, 0)), breakdown };
}
