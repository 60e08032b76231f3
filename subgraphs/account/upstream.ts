/**
 * The authorization area's REST endpoints (OAuth v2, `oauth.openapi.com`, REFERENCE §3): the one
 * table of paths. Every call but the rotation authenticates with the account's e-mail and API key
 * (HTTP Basic, `OPENAPI_EMAIL` / `OPENAPI_APIKEY`); a rotation sends the token's refresh token as
 * bearer. Nothing is cached but the scope list (it changes when the vendor adds an API).
 */
import { defineEndpoints, type Endpoint } from '../upstream/endpoint.ts';

const basic = (method: Endpoint['method'], path: string, ttl = 0): Endpoint => ({ area: 'oauth', method, path, ttl, auth: 'basic' });
/** A token's own endpoints: its value is a path parameter, never shown (`Endpoint.secretParams`). */
const ofToken = (method: Endpoint['method']): Endpoint => ({ ...basic(method, '/tokens/{token}'), secretParams: ['token'] });

export const OAUTH = defineEndpoints({
  tokens: basic('GET', '/tokens'),
  token: ofToken('GET'),
  createToken: basic('POST', '/tokens'),
  updateToken: ofToken('PATCH'),
  deleteToken: ofToken('DELETE'),
  /** Rotation: `PATCH /tokens/{token}` with the refresh token as bearer and `{}`. */
  rotateToken: { area: 'oauth', method: 'PATCH', path: '/tokens/{token}', secretParams: ['token'] },
  scopes: basic('GET', '/scopes', 3600),
  scope: basic('GET', '/scopes/{id}', 3600),
  wallet: basic('GET', '/wallet'),
  transactions: basic('GET', '/wallet/transactions'),
  subscriptions: basic('GET', '/subscriptions'),
  subscription: basic('GET', '/subscriptions/{id}'),
  stats: basic('GET', '/stats'),
  statsIps: basic('GET', '/stats/ips'),
  statsApis: basic('GET', '/stats/apis'),
  statsApi: basic('GET', '/stats/apis/{domain}'),
  errors: basic('GET', '/errors'),
  callbacks: basic('GET', '/callbacks'),
  callback: basic('GET', '/callbacks/{id}'),
});

export interface TokenDetail {
  token: string;
  name?: string;
  createdAt?: string;
  expireAt?: string;
  updatedAt?: string;
  scopes?: string[];
  refreshToken?: string;
  limits?: Record<string, unknown>;
  stats?: Record<string, unknown>;
}
