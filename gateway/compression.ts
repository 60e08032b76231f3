/**
 * Response compression: brotli or gzip, as the client's `Accept-Encoding` allows (q-values
 * honoured, brotli preferred), for answers of at least `minBytes` whose type compresses (JSON,
 * GraphQL responses, HTML, text). Event streams (SSE subscriptions) and incremental multipart
 * answers pass untouched, as do answers that already carry a `Content-Encoding`.
 *
 * Why not the runtime's `contentEncoding: true`: it compresses every answer whatever its size, reads
 * `Accept-Encoding` by exact match of comma-split items (`gzip;q=1` or ` br` after a space never
 * match), and brotli goes through the web `CompressionStream`, at the slowest quality where offered.
 * Here each answer is compressed once, off the main thread (node:zlib), at a quality fit for
 * per-request work. The GraphiQL page, which never changes, is compressed once in `graphiql.ts`.
 */
import { promisify } from 'node:util';
import { brotliCompress, constants, gzip } from 'node:zlib';
import type { GatewayPlugin } from '@graphql-hive/gateway-runtime';

export type ContentEncoding = 'br' | 'gzip';

export interface CompressionOptions {
  /** Answers smaller than this go out as they are (compressing them saves nothing). @default 1024 */
  minBytes?: number;
  /** Brotli quality for answers (0–11; 11 is far too slow per request). @default 4 */
  brotliQuality?: number;
  /** Gzip level (1–9). @default 6 */
  gzipLevel?: number;
}

const brotli = promisify(brotliCompress);
const gzipAsync = promisify(gzip);

/** Compresses `body` with `encoding` (node:zlib, in the thread pool). */
export function compressBody(body: Uint8Array, encoding: ContentEncoding, quality: { brotliQuality?: number; gzipLevel?: number } = {}): Promise<Buffer> {
  return encoding === 'br'
    ? brotli(body, { params: { [constants.BROTLI_PARAM_QUALITY]: quality.brotliQuality ?? 4, [constants.BROTLI_PARAM_SIZE_HINT]: body.byteLength } })
    : gzipAsync(body, { level: quality.gzipLevel ?? 6 });
}

/**
 * The encoding to answer with for an `Accept-Encoding` header: brotli, else gzip, among those the
 * client accepts with a non-zero q (`*` accepts both unless listed with q=0); null for none.
 */
export function negotiateEncoding(acceptEncoding: string | null | undefined): ContentEncoding | null {
  if (!acceptEncoding) return null;
  const q = new Map<string, number>();
  for (const item of acceptEncoding.split(',')) {
    const [name, ...params] = item.trim().toLowerCase().split(';');
    if (!name) continue;
    const qParam = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    const value = qParam ? Number(qParam.slice(2)) : 1;
    q.set(name.trim(), Number.isFinite(value) ? value : 0);
  }
  const accepted = (encoding: ContentEncoding): number => q.get(encoding) ?? (encoding === 'gzip' ? q.get('x-gzip') : undefined) ?? q.get('*') ?? 0;
  const br = accepted('br');
  const gz = accepted('gzip');
  if (br > 0 && br >= gz) return 'br';
  if (gz > 0) return 'gzip';
  return null;
}

/** Content types worth compressing (never `text/event-stream` nor `multipart/*`, which stream). */
export function compressibleType(contentType: string | null): boolean {
  if (!contentType) return false;
  const type = contentType.split(';')[0].trim().toLowerCase();
  if (type === 'text/event-stream') return false;
  return type.startsWith('text/') || type === 'application/json' || type.endsWith('+json') || type === 'application/javascript' || type === 'application/xml';
}

/** Adds `Accept-Encoding` to a `Vary` header value (the answer depends on it). */
export function varyOnEncoding(vary: string | null): string {
  if (!vary) return 'Accept-Encoding';
  return vary.split(',').some((v) => v.trim().toLowerCase() === 'accept-encoding' || v.trim() === '*') ? vary : `${vary}, Accept-Encoding`;
}

/** Gateway plugin: compresses the runtime's answers (see the module's comment). */
export function useCompression(opts: CompressionOptions = {}): GatewayPlugin {
  const minBytes = opts.minBytes ?? 1024;
  return {
    async onResponse(payload) {
      const { request, response, fetchAPI } = payload;
      // graphql-ws traffic reaches plugins with no Fetch request: nothing to compress there.
      if (!(request as Request | undefined)?.headers) return;
      if (!response.body || response.headers.has('content-encoding') || !compressibleType(response.headers.get('content-type'))) return;
      // The answer depends on Accept-Encoding whether or not this one is compressed (shared caches).
      response.headers.set('vary', varyOnEncoding(response.headers.get('vary')));
      const declared = Number(response.headers.get('content-length') ?? NaN);
      if (request.method === 'HEAD' || (Number.isFinite(declared) && declared < minBytes)) return;
      const encoding = negotiateEncoding(request.headers.get('accept-encoding'));
      if (!encoding) return;
      const body = new Uint8Array(await response.arrayBuffer());
      const headers = new fetchAPI.Headers(response.headers);
      if (body.byteLength < minBytes) {
        payload.setResponse(new fetchAPI.Response(body, { status: response.status, statusText: response.statusText, headers }));
        return;
      }
      const compressed = await compressBody(body, encoding, opts);
      headers.set('content-encoding', encoding);
      headers.set('content-length', String(compressed.byteLength));
      payload.setResponse(new fetchAPI.Response(new Uint8Array(compressed), { status: response.status, statusText: response.statusText, headers }));
    },
  };
}
