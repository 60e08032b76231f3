/**
 * Gateway plugin: CSRF prevention. A page on any site can make a browser send a form post
 * (urlencoded, multipart, text/plain) or a GET without a CORS preflight; such a request must carry
 * one of `requestHeaders`, which no form can set and which makes `fetch` preflight (answered only
 * for the gateway's CORS origins). Without one it is refused before it is parsed: 403, one error
 * whose message says which header to send, `extensions.code: CSRF_HEADER_REQUIRED` and
 * `extensions.requestHeaders` (the accepted names). JSON posts (what GraphiQL and non-browser
 * clients send) pass as they are.
 *
 * The runtime's own `csrfPrevention` option answers "Required CSRF header(s) not present", which
 * does not say what to send; this plugin replaces it.
 */
import type { GatewayPlugin } from '@graphql-hive/gateway-runtime';
import { GraphQLError } from 'graphql';

/** `extensions.code` of the refusal. */
export const CSRF_ERROR_CODE = 'CSRF_HEADER_REQUIRED';

/** The headers the gateway accepts, the one to send first (any value, e.g. `1`). */
export const CSRF_HEADERS = ['x-graphql-csrf', 'graphql-preflight', 'apollo-require-preflight', 'x-apollo-operation-name', 'x-graphql-yoga-csrf'] as const;

export interface CsrfPreventionOptions {
  /**
   * Header names that mark a request as sent by a script (any value); the first is the one the
   * refusal tells clients to send. @default CSRF_HEADERS
   */
  requestHeaders?: readonly string[];
}

/** Content types a browser sends without a preflight (HTML forms and `text/plain`). */
const SIMPLE_CONTENT_TYPES = ['application/x-www-form-urlencoded', 'multipart/form-data', 'text/plain'];

/** True when a browser would have preflighted a request with this content type (JSON and the like). */
function preflighted(contentType: string | null): boolean {
  if (!contentType) return false;
  const type = contentType.toLowerCase();
  return !SIMPLE_CONTENT_TYPES.some((simple) => type.startsWith(simple));
}

/** The refusal's message: which header to send, and the others accepted. */
export function csrfMessage(headers: readonly string[]): string {
  const [first, ...others] = headers;
  const alternatives = others.length > 0 ? ` (or one of ${others.join(', ')})` : '';
  return (
    `CSRF protection: a GET, form or text/plain request must carry a header no HTML form can set. ` +
    `Send the header ${first}: 1${alternatives}, or post JSON (content-type: application/json).`
  );
}

export function useCsrfPrevention(opts: CsrfPreventionOptions = {}): GatewayPlugin {
  const headers = opts.requestHeaders ?? CSRF_HEADERS;
  if (headers.length === 0) throw new Error('useCsrfPrevention: requestHeaders must name at least one header');
  const message = csrfMessage(headers);
  return {
    onRequestParse({ request }) {
      if (preflighted(request.headers.get('content-type'))) return;
      if (headers.some((name) => request.headers.has(name))) return;
      throw new GraphQLError(message, { extensions: { code: CSRF_ERROR_CODE, requestHeaders: [...headers], http: { status: 403 } } });
    },
  };
}
