/**
 * The PEC subgraph: certified mailboxes and company-register notifications with their live status
 * (`mailboxUpdated`, `pecNotificationUpdated`), signed downloads of the forms and the upstream
 * callback ingress (`/pec/callbacks/…`, `/pec/files/…`, reached through the gateway's
 * `/callbacks/pec/…` and `/files/pec/…`).
 */
import { readFileSync } from 'node:fs';
import { parse } from 'graphql';
import type { Subgraph } from '../runtime/server.ts';
import { layerSecret } from '../runtime/signing.ts';
import { trackingStoresFromEnv } from '../runtime/tracking/stores.ts';
import { storeChoiceFromEnv } from '../../platform/store-choice.ts';
import { redisPrefixFromEnv } from '../runtime/redis.ts';
import { BulkService } from './bulk.ts';
import { bulkStores } from './bulk-store.ts';
import { PEC_POLICY } from './policy.ts';
import { createResolvers } from './resolvers/index.ts';
import { PecService, type PecServiceOptions } from './service.ts';
import type { PecFamily } from './upstream.ts';
import { settingsOf } from '../../platform/settings.ts';

const typeDefs = parse(readFileSync(new URL('./schema.graphql', import.meta.url), 'utf8'));

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
