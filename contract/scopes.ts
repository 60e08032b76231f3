/**
 * Token scopes as the vendor writes them (REFERENCE §2): `METHOD:host/path`, `*` a wildcard in any
 * part (`*:test.cap.openapi.it/*`), a path without wildcard granting itself and what lies below it
 * at a segment. One reading for the layer (its scope pre-check, the scopes it mints) and the
 * emulator (what a bearer token may call, what a token may be created with).
 */
import { AREA_HOSTS, type Area } from './areas.ts';
import { endpointOf } from './prices.ts';

/** What a scope looks like (`METHOD:host/path`, `*` wildcards), as the vendor accepts it in a token. */
export const SCOPE_FORMAT = /^(\*|GET|POST|PUT|PATCH|DELETE):[A-Za-z0-9.*-]+\/[A-Za-z0-9_.*/-]*$/;

/** A glob with `*` wildcards as a whole-string, case-insensitive pattern. */
export function globPattern(glob: string): RegExp {
  return new RegExp(
    `^${glob
      .split('*')
      .map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
      .join('.*')}$`,
    'i',
  );
}

const stripSlash = (p: string): string => (p.length > 1 ? p.replace(/\/+$/, '') : p);

/**
 * The scope a call needs: `METHOD:host/endpoint`, the endpoint being the path's first segment
 * (`GET:test.cap.openapi.it/cap` in the sandbox, `GET:cap.openapi.it/cap` in production).
 */
export function scopeOf(env: string, area: Area, method: string, path: string): string {
  const host = env === 'production' ? AREA_HOSTS[area] : `test.${AREA_HOSTS[area]}`;
  return `${method.toUpperCase()}:${host}/${endpointOf(path)}`;
}

/** The sandbox form of a scope (`GET:company.openapi.com/IT-start` → `GET:test.company.openapi.com/IT-start`). */
export function sandboxScope(scope: string): string {
  const colon = scope.indexOf(':');
  const host = scope.slice(colon + 1).split('/')[0] ?? '';
  return host.startsWith('test.') || host.includes('*') ? scope : `${scope.slice(0, colon + 1)}test.${scope.slice(colon + 1)}`;
}

/** True when one of `scopes` grants `method` on `host` at `path` (method, host and path, `*` wildcards, path prefixes at a segment). */
export function scopeAllows(scopes: readonly string[], method: string, host: string, path: string): boolean {
  const want = stripSlash(path);
  return scopes.some((scope) => {
    const colon = scope.indexOf(':');
    if (colon < 0) return false;
    const m = scope.slice(0, colon);
    if (m !== '*' && m.toUpperCase() !== method.toUpperCase()) return false;
    const rest = scope.slice(colon + 1);
    const slash = rest.indexOf('/');
    const scopeHost = slash < 0 ? rest : rest.slice(0, slash);
    const scopePath = slash < 0 ? '/*' : stripSlash(rest.slice(slash));
    if (!globPattern(scopeHost).test(host)) return false;
    return scopePath.includes('*') ? globPattern(scopePath).test(want) : want === scopePath || want.startsWith(`${scopePath}/`);
  });
}

/** True when one of `scopes` grants the scope `METHOD:host/path` (as `scopeOf` writes it). */
export function scopeGranted(scopes: readonly string[], scope: string): boolean {
  const colon = scope.indexOf(':');
  const rest = scope.slice(colon + 1);
  const slash = rest.indexOf('/');
  return scopeAllows(scopes, scope.slice(0, colon), slash < 0 ? rest : rest.slice(0, slash), slash < 0 ? '/' : rest.slice(slash));
}
