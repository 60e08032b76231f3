/**
 * The caller's credential, read in one place for the gateway and the subgraph server.
 *
 * - Over HTTP it is the `Authorization` header, `Bearer <token>`.
 * - Over graphql-ws it is in the connection params: `{authorization}`, `{Authorization}`,
 *   `{headers: {authorization}}` or `{headers: {Authorization}}`, with the same value.
 *
 * A credential that is present but malformed (`Basic …`, `Token …`, a bare token, an empty
 * `Bearer`, or connection params carrying something credential-like in another shape) is refused
 * with `UNAUTHENTICATED` and a message naming the expected form; only an absent credential may fall
 * back to another account. Silently falling back would turn a client bug into a call on the wrong
 * account, noticed only in production.
 */
import { GraphQLError } from 'graphql';

/** The expected form over HTTP. */
export const HTTP_FORM = 'Authorization: Bearer <token>';
/** The expected form in graphql-ws connection params. */
export const WS_FORM = '{ "authorization": "Bearer <token>" }';

const BEARER = /^\s*Bearer\s+(\S+)\s*$/i;

/** What a caller sent. */
export type Credential =
  | { kind: 'absent' }
  | { kind: 'bearer'; token: string }
  /** `what` says, in a few words, what was wrong (never the value itself: it may be a secret). */
  | { kind: 'malformed'; what: string };

/** Schemes named back in the error message (anything else might be a token, so it is not echoed). */
const KNOWN_SCHEMES = /^(Basic|Digest|Token|ApiKey|Api-Key|JWT|Negotiate|NTLM|HOBA|Mutual|DPoP|MAC|OAuth)$/i;

/** Reads an `Authorization` value: absent (null/undefined), a bearer token, or malformed. */
export function parseAuthorization(authorization: string | null | undefined): Credential {
  if (authorization === null || authorization === undefined) return { kind: 'absent' };
  const m = BEARER.exec(authorization);
  if (m) return { kind: 'bearer', token: m[1] };
  const words = authorization.trim().split(/\s+/).filter(Boolean);
  if (words.length === 0) return { kind: 'malformed', what: 'it is empty' };
  if (/^Bearer$/i.test(words[0])) return { kind: 'malformed', what: words.length === 1 ? 'the Bearer token is empty' : 'the Bearer token contains spaces' };
  if (KNOWN_SCHEMES.test(words[0])) return { kind: 'malformed', what: `the ${words[0]} scheme is not accepted` };
  return { kind: 'malformed', what: words.length === 1 ? 'there is no scheme (a bare token?)' : 'the scheme is not Bearer' };
}

/**
 * The `UNAUTHENTICATED` error for a malformed credential: `where` names the part of the request
 * (`Authorization`, `connection params`), `what` what is wrong with it, and the message names the
 * expected form (HTTP, graphql-ws, or both when it is not known which way the caller came).
 */
export function malformedCredentialError(where: string, what: string, form: 'http' | 'ws' | 'any' = 'any'): GraphQLError {
  const expected =
    form === 'http'
      ? `\`${HTTP_FORM}\``
      : form === 'ws'
        ? `\`${WS_FORM}\` as graphql-ws connection params`
        : `\`${HTTP_FORM}\` (over graphql-ws: connection params \`${WS_FORM}\`)`;
  return new GraphQLError(`Malformed credential in ${where}: ${what}. Send ${expected}.`, {
    extensions: { code: 'UNAUTHENTICATED' },
  });
}

/** Keys that look like a credential (top level or inside `headers`). */
const CREDENTIAL_LIKE = /auth|token|bearer|credential|api.?key|password/i;
const KNOWN = new Set(['authorization', 'Authorization']);

/** What graphql-ws connection params carry. */
export type ParamsCredential = { kind: 'absent' } | { kind: 'present'; authorization: string } | { kind: 'malformed'; what: string };

/**
 * Reads graphql-ws connection params. The known shapes give the `Authorization` value (not yet
 * checked, an empty one included: see `parseAuthorization`); a known key whose value is not a string, or a
 * credential-like key in any other shape, is malformed; anything else (or `{}`) is absent.
 */
export function credentialOfParams(params: Record<string, unknown> | null | undefined): ParamsCredential {
  if (!params) return { kind: 'absent' };
  const found: Array<[string, unknown]> = [];
  const strays: string[] = [];
  for (const [k, v] of Object.entries(params)) {
    if (KNOWN.has(k)) found.push([k, v]);
    else if (k === 'headers') continue;
    else if (CREDENTIAL_LIKE.test(k)) strays.push(k);
  }
  const headers = params.headers;
  if (headers !== undefined && headers !== null) {
    if (typeof headers !== 'object' || Array.isArray(headers)) {
      return { kind: 'malformed', what: '`headers` is not an object' };
    }
    for (const [k, v] of Object.entries(headers as Record<string, unknown>)) {
      if (KNOWN.has(k)) found.push([`headers.${k}`, v]);
      else if (CREDENTIAL_LIKE.test(k)) strays.push(`headers.${k}`);
    }
  }
  if (strays.length) return { kind: 'malformed', what: `unexpected key ${strays.map((k) => JSON.stringify(k.slice(0, 40))).join(', ')}` };
  const bad = found.find(([, v]) => typeof v !== 'string');
  if (bad) return { kind: 'malformed', what: `\`${bad[0]}\` is not a string (${bad[1] === null ? 'null' : Array.isArray(bad[1]) ? 'array' : typeof bad[1]})` };
  const values = new Set(found.map(([, v]) => v as string));
  if (values.size > 1) return { kind: 'malformed', what: `${found.map(([k]) => `\`${k}\``).join(' and ')} differ` };
  const [value] = values;
  return value === undefined ? { kind: 'absent' } : { kind: 'present', authorization: value };
}

/**
 * The `Authorization` value of graphql-ws connection params, or null when they carry none.
 * Throws the `UNAUTHENTICATED` error when they carry a credential in an unknown shape.
 */
export function authorizationOfParams(params: Record<string, unknown> | null | undefined): string | null {
  const c = credentialOfParams(params);
  if (c.kind === 'malformed') throw malformedCredentialError('connection params', c.what, 'ws');
  return c.kind === 'present' ? c.authorization : null;
}
