/**
 * The company subgraph: Italian companies (IT-start … IT-full, search, legal forms), companies
 * outside Italy (EU, country and worldwide endpoints) and company monitoring with pushed changes
 * (`companyChanged`, relays to the caller's callback, the upstream callback ingress
 * `/company/callbacks/…`, reached through the gateway's `/callbacks/company/…`), and slow datasets
 * bought by POST + callback (`/callbacks/company/datasets/…`, `slow-purchase.ts`). Owns the `Company`
 * entity, keyed by the hidden `lookupCode` alone (`@inaccessible`: the VAT number, else the tax
 * code, else the Openapi id, whatever is known without a purchase); other subgraphs extend it.
 */
import { readFileSync } from 'node:fs';
import { parse, type DocumentNode } from 'graphql';
import { defineArea } from '../runtime/area.ts';
import type { Subgraph } from '../runtime/server.ts';
import { trackingStoresFromEnv } from '../runtime/tracking/stores.ts';
import type { Resolvers } from './__generated__/resolvers-types.ts';
import { COMPANY_FAMILIES, COMPANY_POLICY, type CompanyFamilyName } from './policy.ts';
import { companyPricing } from './pricing.ts';
import { monitorResolvers } from './resolvers/monitor.ts';
import { resolvers } from './resolvers.ts';
import { CompanyService, type CompanyServiceOptions } from './service.ts';
import { attachSlowPurchases, SlowPurchases, SLOW_ORDERS } from './slow-purchase.ts';
import { COMPANY_ENDPOINTS } from './upstream.ts';
import type { Upstream } from '../upstream/upstream.ts';
import { settingsOf, type SettingsSource } from '../../platform/settings.ts';

const typeDefs: DocumentNode = parse(readFileSync(new URL('./schema.graphql', import.meta.url), 'utf8'), { noLocation: true });

/** The resolver map over one service: the stateless resolvers plus monitoring. */
function resolversOf(service: CompanyService): Resolvers {
  const monitors = monitorResolvers(service);
  return {
    ...resolvers,
    Query: { ...resolvers.Query, ...monitors.Query },
    Mutation: { ...resolvers.Mutation, ...monitors.Mutation },
    Subscription: monitors.Subscription,
  };
}

/**
 * A company subgraph with its own monitor service and poller. Its tracked monitors (store,
 * reservations, idempotency keys, replay guard, poller leases, event bus) live on Redis when the
 * `env` given has `REDIS_URL` (keys under `REDIS_PREFIX`), else in the embedded store (`DATA_DIR`),
 * or in memory with `STORE=memory`. Stores
 * passed in `opts` win. Every `COMPANY_*` setting is read from that `env`.
 */
export function createCompanySubgraph(
  opts: CompanyServiceOptions & { env: SettingsSource },
): Subgraph & { name: 'company'; typeDefs: DocumentNode; resolvers: Resolvers; service: CompanyService } {
  const env = settingsOf(opts.env);
  const shared = opts.store ? null : trackingStoresFromEnv<CompanyFamilyName>(env, 'company', COMPANY_POLICY);
  const service = new CompanyService({ ...(shared ?? {}), ...opts });
  // Slow datasets by POST + callback (`slow-purchase.ts`), on the service's signer and replay guard.
  const purchases = new SlowPurchases({ signer: () => service.signer, replay: service.replay, publicUrl: () => service.publicUrl(), env });
  let upstream: Upstream | null = null;
  return {
    name: 'company',
    typeDefs,
    resolvers: resolversOf(service),
    http: async (req, res, path) => {
      if (path.startsWith('/callbacks/datasets/')) {
        await purchases.http(req, res, path.slice('/callbacks/datasets/'.length), upstream);
        return true;
      }
      return service.http(req, res, path);
    },
    start: async (deps) => {
      const stop = service.start(deps);
      upstream = deps.upstream;
      const detach = attachSlowPurchases(deps.upstream, purchases);
      return async () => {
        detach();
        upstream = null;
        await stop();
        await shared?.close();
      };
    },
    service,
  };
}

/**
 * The schema and resolvers of a company subgraph over an in-memory monitor service that is never
 * started (no poller, no callbacks): for tests that execute the schema directly.
 */
export const companySubgraph: { name: 'company'; typeDefs: DocumentNode; resolvers: Resolvers } = {
  name: 'company',
  typeDefs,
  resolvers: resolversOf(new CompanyService({ env: {} })),
};

/** The company area (see the module doc), as the registry (`subgraphs/index.ts`) lists it. */
export const companyArea = defineArea({
  name: 'company',
  vendorAreas: ['company'],
  typeDefs,
  create: ({ env }) => createCompanySubgraph({ env }),
  // The endpoint table, the monitor family, the slow tiers' POST orders.
  endpointTables: () => [COMPANY_ENDPOINTS, COMPANY_FAMILIES, SLOW_ORDERS],
  pricing: companyPricing,
  // An hour (`IT-closed`, searches; the tiers a day; monitors are invalidated by events). Company
  // monitors (`/monitor`, `/monitor/{id}`) are read upstream every time: `@cacheControl(maxAge: 0)`
  // in the schema.
  cache: { responseTtlSeconds: 3600 },
  sharedSubscriptions: { companyChanged: 'monitorId' },
  trackingFamilies: Object.keys(COMPANY_FAMILIES),
  routes: ['callbacks', 'files'],
  // A slow purchase waits `COMPANY_SLOW_CALLBACK_WAIT_MS` for its callback, then polls with the same token.
  tokenHoldMs: (vars) => {
    const wait = Number(vars.COMPANY_SLOW_CALLBACK_WAIT_MS);
    return Number.isFinite(wait) && wait > 0 ? wait : 0;
  },
  settings: ['COMPANY_*'],
});
