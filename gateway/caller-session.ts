/**
 * Who is asking, for everything the gateway shares between operations (the response cache's
 * session, identical queries in flight, shared subscriptions): two operations may share an answer
 * only when EVERY credential that changes the answer is the same. Those are the headers the gateway
 * forwards to the subgraphs: `Authorization` (the layer's tenant of the caller's token) and the
 * credentials the areas' descriptors list (`forwardedHeaders`, e.g. the account area's operator key),
 * which the entry point hands in with the areas (`callerSessions(credentialHeadersOf(areas))`).
 * All are hashed, never kept in clear.
 *
 * A session is `<tenant>` or `<tenant>.<hash of the other credentials>`: its first part is the tenant
 * the layer's changes name (`tenantOfSession`), so a tenant's change drops every session of that tenant.
 */
import { createHash } from 'node:crypto';
import { headerOf } from './forwarded-headers.ts';
import { authorizationOf } from './authorization.ts';
import type { GatewayArea } from '../subgraphs/runtime/area.ts';
import { tenantOf } from '../subgraphs/upstream/tenant.ts';

/** Session of callers without any credential (the layer's own token answers them). */
export const ANONYMOUS = 'anonymous';

/** The tenant of an `Authorization` value, as the subgraphs' tenancy computes it (a hash, never the token). */
function tenantOfAuthorization(authorization: string | null | undefined): string {
  const raw = authorization?.trim() ?? '';
  if (raw === '') return ANONYMOUS;
  const bearer = /^bearer\s+(\S+)$/i.exec(raw);
  return bearer ? tenantOf(bearer[1]) : `x${tenantOf(raw)}`;
}

/** The caller's session of an operation's context, or of a bare Fetch request (`callerSessions`). */
export type CallerSessionOf = (contextOrRequest: unknown) => string;

/** The credentials besides `Authorization` that the areas have the gateway forward (`forwardedHeaders`: sorted, once each). */
export function credentialHeadersOf(areas: readonly GatewayArea[]): string[] {
  return [...new Set(areas.flatMap((a) => a.forwardedHeaders ?? []))].sort();
}

/**
 * The caller's session of an operation's context (HTTP: its Fetch request's headers; graphql-ws:
 * the connection params merged into `headers`), or of a bare Fetch request: the tenant of its
 * `Authorization`, and a hash of the `credentialHeaders` it carries (`credentialHeadersOf` the areas).
 */
export function callerSessions(credentialHeaders: readonly string[]): CallerSessionOf {
  const names = [...credentialHeaders];
  return (contextOrRequest) => {
    const context = isFetchRequest(contextOrRequest) ? { request: contextOrRequest } : contextOrRequest;
    const tenant = tenantOfAuthorization(authorizationOf(context));
    const present = names.flatMap((name) => {
      const value = headerOf(context, name);
      return value === null || value === '' ? [] : [[name, value] as const];
    });
    if (present.length === 0) return tenant;
    const h = createHash('sha256').update('openapi-supergraph:credentials');
    for (const [name, value] of present) h.update('\u0000').update(name).update('\u0000').update(value);
    return `${tenant}.${h.digest('base64url').slice(0, 22)}`;
  };
}

/** The tenant a session belongs to (what the layer's changes are about). */
export function tenantOfSession(session: string): string {
  const dot = session.indexOf('.');
  return dot < 0 ? session : session.slice(0, dot);
}

export const isFetchRequest = (r: unknown): r is Request => typeof (r as { headers?: { get?: unknown } } | null)?.headers?.get === 'function';

/** Literal text in `stableJson`'s work stack (client values are plain JSON, never one of these). */
class Text {
  constructor(readonly text: string) {}
}

/**
 * JSON with object keys sorted (variables given in another order are the same question). Iterative
 * (a work stack, no recursion): the values are the client's, and their depth is not this function's
 * to trust.
 */
export function stableJson(value: unknown): string {
  const out: string[] = [];
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (v instanceof Text) out.push(v.text);
    else if (Array.isArray(v)) {
      out.push('[');
      stack.push(new Text(']'));
      for (let i = v.length - 1; i >= 0; i--) {
        stack.push(v[i] as unknown);
        if (i > 0) stack.push(new Text(','));
      }
    } else if (v !== null && typeof v === 'object') {
      const record = v as Record<string, unknown>;
      const keys = Object.keys(record).sort();
      out.push('{');
      stack.push(new Text('}'));
      for (let i = keys.length - 1; i >= 0; i--) {
        stack.push(record[keys[i]]);
        stack.push(new Text(`${i > 0 ? ',' : ''}${JSON.stringify(keys[i])}:`));
      }
    } else out.push(JSON.stringify(v) ?? 'null');
  }
  return out.join('');
}

/** A short one-way hash of a key's parts (keys never hold a document, variables or a credential in clear). */
export function keyHash(...parts: string[]): string {
  const h = createHash('sha256');
  for (const p of parts) h.update(p).update('\u0000');
  return h.digest('base64url');
}
