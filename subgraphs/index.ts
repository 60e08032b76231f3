import type { SettingsSource } from '../platform/settings.ts';
/**
 * The registry: every area of the layer, one line each (its descriptor, `defineArea` in its
 * `index.ts`). Shared code never imports an area; it is given what it needs from here by the
 * process entry points (`stack.ts`, `services/*`, `scripts/compose.ts`): the subgraphs to build,
 * the managed token's scopes, the estimate's pricing, the gateway's cache policy, shareable
 * subscriptions and forwarded headers, and the schemas composition reads.
 */
import { endpointsOfArea, type AreaDescriptor, type GatewayArea } from './runtime/area.ts';
import type { Endpoint } from './upstream/endpoint.ts';
import { mergePricing, type PricingTable } from './runtime/pricing.ts';
import type { Subgraph } from './runtime/server.ts';
import { companyArea } from './company/index.ts';
import { riskArea } from './risk/index.ts';
import { postalArea } from './postal/index.ts';
import { pecArea } from './pec/index.ts';
import { invoicingArea } from './invoicing/index.ts';
import { accountArea } from './account/index.ts';

/** Every area, in the order the servers build them. */
export const AREA_REGISTRY = [companyArea, riskArea, postalArea, pecArea, invoicingArea, accountArea] as const satisfies readonly AreaDescriptor[];

export type SubgraphName = (typeof AREA_REGISTRY)[number]['name'];

/** The subgraphs of the supergraph, by name (listing them builds nothing and connects nothing). */
export const SUBGRAPH_NAMES: readonly SubgraphName[] = AREA_REGISTRY.map((a) => a.name);

/** The areas named, in the registry's order; an unknown name throws. */
export function areasNamed(names: readonly string[]): AreaDescriptor[] {
  const unknown = names.filter((n) => !SUBGRAPH_NAMES.some((s) => s === n));
  if (unknown.length > 0) throw new Error(`unknown subgraph ${unknown.join(', ')}: the subgraphs are ${SUBGRAPH_NAMES.join(', ')}`);
  return AREA_REGISTRY.filter((a) => names.includes(a.name));
}

/**
 * The subgraphs named (all by default), configured from `env`. Only those are built: a stateful
 * subgraph on Redis opens its connections when built and closes them when its server stops.
 */
export function createSubgraphs(env: SettingsSource, names: readonly string[] = SUBGRAPH_NAMES): Subgraph[] {
  return AREA_REGISTRY.filter((a) => names.includes(a.name)).map((a) => a.create({ env, areas: AREA_REGISTRY }));
}

/**
 * The endpoints the named areas call with a token, from every endpoint table of theirs (`vars`: the
 * deployment's settings, e.g. `PEC_PATHS`): what the managed token's scopes are minted from
 * (`scopesFor` of `upstream/service-token.ts`).
 */
export function tokenEndpoints(names: readonly string[], vars: SettingsSource = {}): Endpoint[] {
  return areasNamed(names).flatMap((a) => endpointsOfArea(a, vars));
}

/** The longest any area's operation may hold the layer's token value (ms; `tokenHoldMs`). */
export function tokenHoldMs(vars: SettingsSource): number {
  return Math.max(0, ...AREA_REGISTRY.map((a: AreaDescriptor) => a.tokenHoldMs?.(vars) ?? 0));
}

/** Every area's pricing table, for the gateway's cost estimate (`gateway/estimate.ts`). */
export const PRICING: PricingTable = mergePricing(AREA_REGISTRY.map((a) => a.pricing));

/** What the gateway reads of every area (cache policy, shareable subscriptions, forwarded headers, routes). */
export const GATEWAY_AREAS: readonly GatewayArea[] = AREA_REGISTRY;

/** The subgraphs composed into `supergraph.graphql`: every area's schema, by name. */
export const SUPERGRAPH_SUBGRAPHS = AREA_REGISTRY.map((a) => ({ name: a.name, typeDefs: a.typeDefs }));
