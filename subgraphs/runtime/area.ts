/**
 * What an area of the layer says about itself, in one place: its `index.ts` exports one descriptor
 * made with `defineArea`, and the registry (`subgraphs/index.ts`) lists the descriptors. Everything
 * shared reads the registry: the servers build the subgraphs from it, the managed token mints the
 * scopes of its endpoint tables, the gateway takes its cache policy, its shareable subscriptions and
 * the headers it forwards, the estimate its pricing, composition its schema. No shared module
 * imports an area (`test/architecture/unit/imports.test.ts`, `eslint.config.js`).
 */
import type { SettingsSource } from '../../platform/settings.ts';
import { Kind, type DocumentNode } from 'graphql';
import { AREAS, type Area } from '../../contract/areas.ts';
import { freeTierOf, priceOf, type FreeTier } from '../../contract/prices.ts';
import type { Endpoint } from '../upstream/endpoint.ts';
import type { PricingTable } from './pricing.ts';
import type { Subgraph } from './server.ts';

/** The gateway routes an area may be reached by: `/<prefix>/<area>/…`, streamed to its subgraph's `/<area>/<prefix>/…`. */
export type AreaRoute = 'callbacks' | 'files';

/** What building an area's subgraph is given. */
export interface AreaBuildContext {
  /** The settings of the process (the area reads its own, listed in `settings`). */
  env: SettingsSource;
  /** Every area of the registry (the account area lists the hosts the layer serves). */
  areas: readonly AreaDescriptor[];
}

/** How long the gateway may serve an area's fields from a cached whole answer. */
export interface AreaCachePolicy {
  /**
   * Seconds a field of this subgraph may be served from a cached answer: the shortest lifetime of
   * the area's cached upstream data (its endpoint table's `ttl`); 0 never.
   */
  responseTtlSeconds: number;
  /**
   * Fields (`Type.field`) whose upstream data is never cached (their endpoint's `ttl` is 0),
   * whatever `responseTtlSeconds` says: an answer holding one is never stored. The schema says it
   * where the field is (`@cacheControl(maxAge: 0)`); `defineArea` adds those to any listed here.
   * @default those of the schema
   */
  neverCached?: readonly string[];
}

/** One area of the layer: one subgraph, the vendor areas it calls, and every policy shared code reads. */
export interface AreaDescriptor<Name extends string = string> {
  /** The subgraph's name: its folder, its GraphQL path `/<name>/graphql`, `SUBGRAPH_<NAME>_URL`. */
  readonly name: Name;
  /** The vendor's areas it calls with a token (`contract/areas.ts`: cap, invoice, pecmassiva…). */
  readonly vendorAreas: readonly Area[];
  /** The subgraph's schema (`schema.graphql`), composed into `supergraph.graphql`. */
  readonly typeDefs: DocumentNode;
  /** Builds the subgraph (its resolvers, services and stores) for one process. */
  create(ctx: AreaBuildContext): Subgraph;
  /**
   * EVERY endpoint table of the area (endpoint records, family tables, maps of endpoints), as the
   * deployment's settings `vars` shape them: the managed token is minted with one scope per
   * endpoint found here (`endpointsOfArea`). A table left out is a missing scope, so
   * `test/architecture/unit/imports.test.ts` fails when a module of the area exports an endpoint not listed here.
   */
  endpointTables(vars: SettingsSource): readonly object[];
  /** The area's part of the gateway's cost estimate (`subgraphs/runtime/pricing.ts`). */
  readonly pricing: PricingTable;
  /** The gateway's whole-answer cache policy for this subgraph's fields. */
  readonly cache: AreaCachePolicy;
  /**
   * Subscriptions that follow ONE item, by root field, with the argument naming the item: the
   * gateway shares one upstream subscription between the callers of one topic (and a late joiner
   * gets the item's latest state). Subscriptions over many items are never listed. @default none
   */
  readonly sharedSubscriptions?: Readonly<Record<string, string>>;
  /** The tracking kit's families of the area (`subgraphs/runtime/tracking/`). @default none */
  readonly trackingFamilies?: readonly string[];
  /** Gateway routes streamed to this subgraph (callback ingress, signed downloads). @default none */
  readonly routes?: readonly AreaRoute[];
  /**
   * Request headers the gateway forwards to this subgraph only (credentials of the area, e.g. the
   * account's operator key); the gateway's caller session counts every area's (`gateway/caller-session.ts`),
   * so callers with different values never share an answer. @default none
   */
  readonly forwardedHeaders?: readonly string[];
  /**
   * How long one operation of the area may hold the layer's token value between its calls (ms), e.g.
   * a slow purchase waiting for its callback before it polls: a replaced managed token stays valid
   * that long (plus two minutes). @default 0
   */
  tokenHoldMs?(vars: SettingsSource): number;
  /**
   * The settings the area reads (names, or prefixes ending in `*`), each in `platform/settings.ts`;
   * every setting named with the area's prefix (or a vendor area's) must be listed here
   * (`test/architecture/unit/area-settings.test.ts`).
   */
  readonly settings: readonly string[];
}

/** Declares an area (checked once, when its module loads). */
export function defineArea<const Name extends string>(descriptor: AreaDescriptor<Name>): AreaDescriptor<Name> {
  if (!/^[a-z]+$/.test(descriptor.name)) throw new Error(`area name "${descriptor.name}" must be lower-case letters (it is a URL segment and a variable name)`);
  const unknown = descriptor.vendorAreas.filter((a) => !AREAS.includes(a));
  if (unknown.length > 0) throw new Error(`area ${descriptor.name}: unknown vendor areas ${unknown.join(', ')} (contract/areas.ts)`);
  if (descriptor.cache.responseTtlSeconds < 0) throw new Error(`area ${descriptor.name}: responseTtlSeconds must be 0 or more`);
  const neverCached = [...new Set([...(descriptor.cache.neverCached ?? []), ...neverCachedIn(descriptor.name, descriptor.typeDefs)])];
  return Object.freeze({ ...descriptor, cache: Object.freeze({ ...descriptor.cache, neverCached }) });
}

/** The fields of a schema marked `@cacheControl(maxAge: 0)` (`Type.field`); any other hint is refused. */
export function neverCachedIn(area: string, typeDefs: DocumentNode): string[] {
  const out: string[] = [];
  for (const def of typeDefs.definitions) {
    if (def.kind !== Kind.OBJECT_TYPE_DEFINITION && def.kind !== Kind.OBJECT_TYPE_EXTENSION) continue;
    for (const field of def.fields ?? []) {
      const hint = field.directives?.find((d) => d.name.value === 'cacheControl');
      if (!hint) continue;
      const maxAge = hint.arguments?.find((a) => a.name.value === 'maxAge')?.value;
      const coordinate = `${def.name.value}.${field.name.value}`;
      if (maxAge?.kind !== Kind.INT || maxAge.value !== '0') throw new Error(`area ${area}: ${coordinate} @cacheControl: only maxAge: 0 (never cached) is read`);
      out.push(coordinate);
    }
  }
  return out;
}

/** Every endpoint found in `value` (endpoint records, tables, family tables, maps), a few levels down. */
export function endpointsIn(value: unknown, depth = 3): Endpoint[] {
  if (typeof value !== 'object' || value === null || depth < 0) return [];
  if (value instanceof Map) return [...(value as Map<unknown, unknown>).values()].flatMap((x) => endpointsIn(x, depth - 1));
  const v = value as Record<string, unknown>;
  if (typeof v.area === 'string' && typeof v.method === 'string' && typeof v.path === 'string') return [v as unknown as Endpoint];
  return Object.values(v).flatMap((x) => endpointsIn(x, depth - 1));
}

/**
 * The endpoints an area calls with a token: every endpoint of its tables, less those of the
 * authorization area and those reached with HTTP Basic (the account's own credentials).
 */
export function endpointsOfArea(area: AreaDescriptor, vars: SettingsSource = {}): Endpoint[] {
  return area
    .endpointTables(vars)
    .flatMap((t) => endpointsIn(t, 2))
    .filter((e) => e.auth !== 'basic' && e.area !== 'oauth');
}

/** One endpoint's price and free tiers, as the contract's price table has them now. */
export interface EndpointPrice {
  endpoint: Endpoint;
  euro: number;
  freeTiers: readonly FreeTier[];
}

/** The prices and free tiers of an area's endpoints (`contract/prices.ts`, `OPENAPI_PRICES` applied). */
export function pricesOfArea(area: AreaDescriptor, vars: SettingsSource = {}): EndpointPrice[] {
  return endpointsOfArea(area, vars).map((endpoint) => ({
    endpoint,
    euro: priceOf(endpoint.area, endpoint.method, endpoint.path),
    freeTiers: freeTierOf(endpoint.area, endpoint.method, endpoint.path)?.tiers ?? [],
  }));
}

/** What the gateway reads of the areas: nothing that builds or connects anything. */
export type GatewayArea = Pick<AreaDescriptor, 'name' | 'cache' | 'sharedSubscriptions' | 'forwardedHeaders' | 'routes'>;
