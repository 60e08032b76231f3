import { SCOPE_FORMAT, scopeOf } from '../../contract/scopes.ts';
import type { Endpoint } from '../upstream/endpoint.ts';

/**
 * The client operation a subgraph request belongs to. The gateway gives every client operation an
 * id and sends it on each of its subgraph requests; subgraphs charge that operation's entry of the
 * shared cost ledger (`upstream/ledger.ts`), so one budget holds across the whole query plan.
 */
export const OPERATION_HEADER = 'x-openapi-operation';

/**
 * The operation's worst-case euro, as the gateway estimated it before running it: the account guard
 * refuses an operation the wallet cannot cover before any call (`upstream/account-guard.ts`).
 */
export const ESTIMATE_HEADER = 'x-openapi-estimate';

/** What an operation id looks like (a UUID); anything else is ignored and a fresh one made. */
export const OPERATION_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * The scopes the whole operation may need, as the gateway's estimate found its endpoints: the
 * account guard checks them all at the operation's first call and refuses an operation needing a
 * scope the token lacks before any call (`upstream/account-guard.ts`). Space-separated scopes in
 * their production form (`GET:cap.openapi.it/cap`); the guard reads them for its environment.
 * Set (overwritten) by the gateway on every subgraph request, like the estimate.
 */
export const SCOPES_HEADER = 'x-openapi-scopes';

/** Most scopes read from the header (an operation's distinct endpoints are far fewer). */
const MAX_SCOPES = 200;

/**
 * The header's value for the endpoints an operation may call: each one's scope once, in the order
 * priced. The account's own calls (Basic, the authorization area) are not the token's to grant.
 */
export function scopesHeaderOf(endpoints: readonly Endpoint[]): string {
  const scopes = new Set<string>();
  for (const ep of endpoints) if (ep.auth !== 'basic' && ep.area !== 'oauth') scopes.add(scopeOf('production', ep.area, ep.method, ep.path));
  return [...scopes].join(' ');
}

/** The scopes of the header (those written as scopes, `SCOPE_FORMAT`); null when it is absent. */
export function scopesFromHeader(value: string | null): string[] | null {
  if (value === null) return null;
  return value
    .split(/\s+/)
    .filter((s) => SCOPE_FORMAT.test(s))
    .slice(0, MAX_SCOPES);
}
