/**
 * The account subgraph: the Openapi account behind the layer (tokens, scopes, wallet and its
 * transactions, subscriptions, usage statistics, the error log, callbacks) and token management as
 * mutations. The account's credentials are configuration (`OPENAPI_EMAIL`, `OPENAPI_APIKEY`, read
 * by the upstream configuration; the API key is a registered secret, never logged). An operator's
 * view: `OPENAPI_ACCOUNT_API` (`on`/`off`) switches it; on by default only with the emulator.
 */
import { readFileSync } from 'node:fs';
import { parse } from 'graphql';
import type { Subgraph } from '../runtime/server.ts';
import { createResolvers } from './resolvers.ts';

const typeDefs = parse(readFileSync(new URL('./schema.graphql', import.meta.url), 'utf8'));

/** Whether the account fields answer: `OPENAPI_ACCOUNT_API`, else on only with the emulator. */
export function accountApiEnabled(env: NodeJS.ProcessEnv): boolean {
  const v = env.OPENAPI_ACCOUNT_API?.trim().toLowerCase();
  if (v) return ['on', '1', 'true', 'yes'].includes(v);
  return (env.OPENAPI_ENV?.trim() || 'emulator') === 'emulator';
}

export function createAccountSubgraph(opts: { env: NodeJS.ProcessEnv }): Subgraph {
  return { name: 'account', typeDefs, resolvers: createResolvers({ enabled: accountApiEnabled(opts.env) }) };
}
