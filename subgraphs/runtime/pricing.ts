/**
 * What an area tells the gateway's cost estimate (`gateway/estimate.ts`): the euro each of its
 * fields may spend upstream, from the shared price table, and how long its lists can be. An area
 * supplies a table; the walk over an operation is written once, in the gateway.
 */
import type { FieldNode, FragmentDefinitionNode } from 'graphql';
import type { Endpoint } from '../upstream/endpoint.ts';
import { priceOf } from '../../contract/prices.ts';

export type Args = Record<string, unknown>;

export interface PricedField {
  /** Euro of the paid calls one resolution of this field makes at most, from its arguments. */
  euro?(args: Args): number;
  /**
   * Most items this list field holds (its documented limit), from its own arguments and those of
   * the field above it; `assumed` is the estimate's size for lists without a documented limit
   * (used when there is none).
   */
  maxItems?(args: Args, parentArgs: Args, assumed: number): number;
}

/**
 * A selection an area will not price because it would not run it (e.g. purchases on more search
 * items than allowed): the estimate refuses the operation before any call, with this message.
 */
export class PricingRefused extends Error {
  override readonly name = 'PricingRefused';
}

/** One place an entity is returned, with the selection made on it. */
export interface EntityPosition {
  /** The field returning the entity. */
  node: FieldNode;
  /** `Type.field` of that field (e.g. `Query.companyById`, `CompanySearchResult.items`). */
  coordinate: string;
  args: Args;
  /** Arguments of the field above it (e.g. the search's `limit` for its items). */
  parentArgs: Args;
  fragments: Record<string, FragmentDefinitionNode>;
  variables: Args;
}

export interface PricingTable {
  /** By schema coordinate, `Type.field`. */
  fields: Record<string, PricedField>;
  /** Euro of loading one entity of a type, at most, for the selection made on it at one position. */
  entities: Record<string, (at: EntityPosition) => number>;
}

/** The endpoints the estimate's walk running now has priced (see `collectingEndpoints`). */
let collecting: Set<Endpoint> | null = null;

/**
 * Runs `walk` (synchronous) and returns with it the endpoints the tables priced meanwhile: the calls
 * the operation may make, for the account guard's scope pre-check of the whole operation
 * (`upstream/account-guard.ts`). Tables report them as they price them (`endpointPrice`,
 * `spends`), so they cannot drift from what is priced.
 */
export function collectingEndpoints<T>(walk: () => T): { result: T; endpoints: Endpoint[] } {
  const outer = collecting;
  const mine = new Set<Endpoint>();
  collecting = mine;
  try {
    return { result: walk(), endpoints: [...mine] };
  } finally {
    collecting = outer;
  }
}

/**
 * Tells the walk running now that the operation may call `ep`, for a table that prices it another
 * way than `endpointPrice` (the company planner weighs many sources, and buys only its plan's).
 */
export function spends(ep: Endpoint): void {
  collecting?.add(ep);
}

/** Euro of one successful call of an endpoint, from the shared price table (the walk learns the endpoint). */
export const endpointPrice = (ep: Endpoint): number => {
  spends(ep);
  return priceOf(ep.area, ep.method, ep.path);
};

/** Merges the areas' tables. */
export function mergePricing(tables: PricingTable[]): PricingTable {
  return {
    fields: Object.assign({}, ...tables.map((t) => t.fields)) as Record<string, PricedField>,
    entities: Object.assign({}, ...tables.map((t) => t.entities)) as PricingTable['entities'],
  };
}
