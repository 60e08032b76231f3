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
