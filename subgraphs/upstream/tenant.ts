/** Tenancy: everything cached or stored is keyed by a non-reversible hash of the upstream token. */
import { createHash } from 'node:crypto';

export const tenantOf = (token: string): string => createHash('sha256').update(`openapi-supergraph:${token}`).digest('base64url').slice(0, 22);
