/**
 * The invoicing subgraph: company configurations (also on the `Company` entity), Italian invoices
 * from structured input or FatturaPA XML, the invoice list, live status subscriptions, and the
 * upstream notification ingress (`/invoicing/callbacks/…`, reached through the gateway's
 * `/callbacks/invoicing/…`).
 */
import { readFileSync } from 'node:fs';
import { parse } from 'graphql';
import { defineArea } from '../runtime/area.ts';
import type { Subgraph } from '../runtime/server.ts';
import { trackedSubgraph } from '../runtime/tracking/subgraph.ts';
import { INVOICING_AREA } from './policy.ts';
import { invoicingPricing } from './pricing.ts';
import { FAMILIES, INVOICING } from './upstream.ts';
import { createResolvers } from './resolvers/index.ts';
import { InvoicingService, type InvoicingServiceOptions } from './service.ts';
import type { SettingsSource } from '../../platform/settings.ts';

const typeDefs = parse(readFileSync(new URL('./schema.graphql', import.meta.url), 'utf8'), { noLocation: true });

/**
 * An invoicing subgraph with its own service and poller. Its tracked work lives on Redis when the
 * `env` given has `REDIS_URL` (keys under `REDIS_PREFIX`), else in the embedded store (`DATA_DIR`),
 * or in memory with `STORE=memory`; stores
 * passed in `opts` win. Every `INVOICING_*` setting is read from that `env`.
 */
export function createInvoicingSubgraph(opts: InvoicingServiceOptions & { env: SettingsSource }): Subgraph & { service: InvoicingService } {
  return trackedSubgraph({ area: INVOICING_AREA, typeDefs, service: (o) => new InvoicingService(o), resolvers: createResolvers }, opts);
}

/** The invoicing area (see the module doc), as the registry (`subgraphs/index.ts`) lists it. */
export const invoicingArea = defineArea({
  name: 'invoicing',
  vendorAreas: ['invoice'],
  typeDefs,
  create: ({ env }) => createInvoicingSubgraph({ env }),
  endpointTables: () => [INVOICING, FAMILIES],
  pricing: invoicingPricing,
  // Read upstream every time.
  cache: { responseTtlSeconds: 0 },
  sharedSubscriptions: { invoiceUpdated: 'id', receiptUpdated: 'id' },
  trackingFamilies: Object.keys(FAMILIES),
  routes: ['callbacks', 'files'],
  settings: ['INVOICING_*'],
});
