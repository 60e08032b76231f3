/**
 * The PEC subgraph: certified mailboxes and company-register notifications with their live status
 * (`mailboxUpdated`, `pecNotificationUpdated`), signed downloads of the forms and the upstream
 * callback ingress (`/pec/callbacks/…`, `/pec/files/…`, reached through the gateway's
 * `/callbacks/pec/…` and `/files/pec/…`).
 */
import { readFileSync } from 'node:fs';
import { parse } from 'graphql';
import { defineArea } from '../runtime/area.ts';
import type { Subgraph } from '../runtime/server.ts';
import { layerSecret } from '../../platform/signing.ts';
import { trackingStoresFromEnv } from '../runtime/tracking/stores.ts';
import { storeChoiceFromEnv } from '../../platform/store-choice.ts';
import { redisPrefixFromEnv } from '../../platform/redis.ts';
import { BULK, BulkService } from './bulk.ts';
import { bulkStores } from './bulk-store.ts';
import { PEC_POLICY } from './policy.ts';
import { createResolvers } from './resolvers/index.ts';
import { PecService, type PecServiceOptions } from './service.ts';
import { FAMILIES, familiesOf, pecEndpoints, type PecFamily } from './upstream.ts';
import { settingsOf } from '../../platform/settings.ts';
import { pecPricing } from './pricing.ts';

const typeDefs = parse(readFileSync(new URL('./schema.graphql', import.meta.url), 'utf8'), { noLocation: true });

/**
 * A PEC subgraph with its own service and poller; its tracked work lives on Redis when the `env`
 * has `REDIS_URL` (keys under `REDIS_PREFIX`), else in the embedded store (`DATA_DIR`), or in memory
 * with `STORE=memory`. Every `PEC_*` setting is read from `env`.
 */
export function createPecSubgraph(opts: PecServiceOptions): Subgraph & { service: PecService; bulk: BulkService } {
  const env = settingsOf(opts.env);
  const shared = opts.store ? null : trackingStoresFromEnv<PecFamily>(env, 'pec', PEC_POLICY);
  const service = new PecService({ ...(shared ?? {}), ...opts });
  // Bulk sendings: their queue and receipts, in the embedded database or on Redis (resumed after a restart).
  const choice = storeChoiceFromEnv(env);
  const bulkShared = bulkStores({
    redisUrl: choice.kind === 'redis' ? choice.url : undefined,
    sqliteFile: choice.kind === 'sqlite' ? choice.file : undefined,
    secret: layerSecret(env),
    prefix: redisPrefixFromEnv(env),
  });
  const bulk = new BulkService(env, bulkShared);
  return {
    name: 'pec',
    typeDefs,
    resolvers: createResolvers(service, bulk),
    http: (req, res, path) => service.http(req, res, path),
    start: async (deps) => {
      const stop = service.start(deps);
      const stopBulk = bulk.start(deps);
      return async () => {
        await stopBulk();
        await bulkShared.close();
        await stop();
        await shared?.close();
      };
    },
    service,
    bulk,
  };
}

/** The PEC area (see the module doc) with the bulk mailboxes, as the registry (`subgraphs/index.ts`) lists it. */
export const pecArea = defineArea({
  name: 'pec',
  vendorAreas: ['pec', 'pecmassiva'],
  typeDefs,
  create: ({ env }) => createPecSubgraph({ env }),
  // The endpoint table (a deployment's `PEC_PATHS` applied), its families, the bulk mailbox's table.
  endpointTables: (vars) => {
    const eps = pecEndpoints(vars);
    return [eps, familiesOf(eps), BULK];
  },
  pricing: pecPricing,
  // 30 s (`verifica_pec`; mailboxes are invalidated by events). Mailboxes, company-register
  // notifications and bulk sendings are read upstream every time (only `verifica_pec` and
  // `domini_pec` are cached): `@cacheControl(maxAge: 0)` in the schema.
  cache: { responseTtlSeconds: 30 },
  sharedSubscriptions: { mailboxUpdated: 'id', pecNotificationUpdated: 'id', sendingUpdated: 'id' },
  trackingFamilies: Object.keys(FAMILIES),
  routes: ['callbacks', 'files'],
  settings: ['PEC_*', 'PECMASSIVA_*'],
});
