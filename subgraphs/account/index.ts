/**
 * The account subgraph: the Openapi account behind the layer (tokens, scopes, wallet and its
 * transactions, subscriptions, usage statistics, the error log, callbacks) and token management as
 * mutations. The account's credentials are configuration (`OPENAPI_EMAIL`, `OPENAPI_APIKEY`, read
 * by the upstream configuration; the API key is a registered secret, never logged). An operator's
 * view: only for callers sending the operator key `OPENAPI_ACCOUNT_API_KEY` (see `access.ts`);
 * `OPENAPI_ACCOUNT_API=off` switches it off.
 */
import { readFileSync } from 'node:fs';
import { parse } from 'graphql';
import type { Area } from '../../contract/areas.ts';
import { defineArea } from '../runtime/area.ts';
import type { Subgraph } from '../runtime/server.ts';
import { createResolvers } from './resolvers.ts';
import { ACCOUNT_KEY_HEADER, accountAccess } from './access.ts';
import type { SettingsSource } from '../../platform/settings.ts';
import { accountPricing } from './pricing.ts';

const typeDefs = parse(readFileSync(new URL('./schema.graphql', import.meta.url), 'utf8'), { noLocation: true });

/** Who may use the account fields (see `access.ts`). */
export { accountAccess } from './access.ts';

/**
 * `servedAreas`: the vendor areas the layer serves (every area of the registry), the hosts a token
 * made here may be given scopes on.
 */
export function createAccountSubgraph(opts: { env: SettingsSource; servedAreas: readonly Area[] }): Subgraph {
  return { name: 'account', typeDefs, resolvers: createResolvers({ access: accountAccess(opts.env), servedAreas: opts.servedAreas }) };
}

/** The account area (see the module doc), as the registry (`subgraphs/index.ts`) lists it. */
export const accountArea = defineArea({
  name: 'account',
  // Reached with HTTP Basic (the account's e-mail and API key), never with a token.
  vendorAreas: [],
  typeDefs,
  create: ({ env, areas }) => createAccountSubgraph({ env, servedAreas: areas.flatMap((a) => a.vendorAreas) }),
  // Every call is HTTP Basic on the authorization area: no scope to mint.
  endpointTables: () => [],
  pricing: accountPricing,
  // Wallet, tokens: the operator's, never cached.
  cache: { responseTtlSeconds: 0 },
  // The operator's key reaches this subgraph and no other.
  forwardedHeaders: [ACCOUNT_KEY_HEADER],
  settings: ['OPENAPI_ACCOUNT_API', 'OPENAPI_ACCOUNT_API_KEY', 'OPENAPI_EMAIL', 'OPENAPI_APIKEY'],
});
