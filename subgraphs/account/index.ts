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
import type { Subgraph } from '../runtime/server.ts';
import { createResolvers } from './resolvers.ts';
import { accountAccess } from './access.ts';
import type { SettingsSource } from '../../platform/settings.ts';

const typeDefs = parse(readFileSync(new URL('./schema.graphql', import.meta.url), 'utf8'));

/** Who may use the account fields (see `access.ts`). */
export { accountAccess } from './access.ts';

export function createAccountSubgraph(opts: { env: SettingsSource }): Subgraph {
  return { name: 'account', typeDefs, resolvers: createResolvers({ access: accountAccess(opts.env) }) };
}
