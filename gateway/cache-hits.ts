/**
 * Response-cache hits answered at the HTTP edge: a plain JSON POST of a query whose answer the
 * response cache holds for the caller's session is answered by the gateway's HTTP handler, before
 * the runtime builds a Fetch request, reads parameters, runs its plugins or parses anything.
 *
 * It answers exactly what the runtime answers for that hit, from the same cache entry under the same
 * key (`response-cache.ts`: the caller's session, the document, the operation name, the variables):
 * the stored answer with its `extensions.cost` reported as answered from the cache (`replayedCost`),
 * the same status, content type (as `Accept` asks), `Vary`, `x-request-id` and compression, and the
 * same metrics (`openapi_operations_total`, `openapi_answers_replayed_total`). Anything else goes to
 * the runtime as before: a miss, other methods and paths, bodies with `extensions` or other keys,
 * requests with an `Origin` (CORS), asking for the estimate alone, `Accept` types other than
 * JSON, and every request when traces are on (each answer names its trace) or in trusted-documents
 * mode (a document's text is not accepted there).
 *
 * Why: a warm hit went through the Fetch adapter, the runtime's request pipeline and every plugin
 * hook (request id, CSRF, logging, metrics, persisted documents, in-flight sharing, the cache's own
 * lookup, cost, result processing, compression) to send a few hundred bytes; the alternative with its
 * response cache answered at 2× our throughput.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ExecutionResult } from 'graphql';
import type { LayerResponseCache } from './response-cache.ts';
import { ESTIMATE_ONLY_HEADER, replayedCost } from './cost.ts';
import { compressBody, negotiateEncoding, varyOnEncoding, type CompressionOptions } from './compression.ts';
import { countAnsweredWithoutExecution, type OperationNames } from './metrics.ts';
import { countReplayedAnswer } from '../platform/metrics.ts';

export interface CacheHitsOptions {
  /** The response cache, and its session of a caller (the key its answers are under). */
  cache: Pick<LayerResponseCache, 'cachedAnswer' | 'sessionOf'>;
  /** The GraphQL endpoint's path. @default '/graphql' */
  endpoint?: string;
  /** As the gateway compresses answers (`compression.ts`); false: never. */
  compression: CompressionOptions | false;
  /** The operation labels of the gateway's metrics. */
  names: OperationNames;
}

/** The keys of a GraphQL request body the edge answers (any other, `extensions` included, goes to the runtime). */
const PARAM_KEYS = new Set(['query', 'variables', 'operationName']);

interface PlainParams {
  query: string;
  variables?: Record<string, unknown> | null;
  operationName?: string | null;
}

function plainParams(body: unknown): PlainParams | null {
  if (typeof body !== 'object' || body === null || Array.isArray(body) || Buffer.isBuffer(body)) return null;
  const b = body as Record<string, unknown>;
  for (const k of Object.keys(b)) if (!PARAM_KEYS.has(k)) return null;
  if (typeof b.query !== 'string' || b.query === '') return null;
  if (b.operationName !== undefined && b.operationName !== null && typeof b.operationName !== 'string') return null;
  if (b.variables !== undefined && b.variables !== null && (typeof b.variables !== 'object' || Array.isArray(b.variables))) return null;
  return b as unknown as PlainParams;
}

/** `isMatchingMediaType` of graphql-yoga's result processor (a processor's type against an accepted one). */
const matches = (processorType: string, accepted: string): boolean => {
  const [pre, suf] = processorType.split('/');
  const [aPre, aSuf] = accepted.split('/');
  return (aPre === '*' || aPre === pre) && (aSuf === '*' || aSuf === suf);
};
/** graphql-yoga's result processors for an operation over HTTP, in its order. */
const PROCESSORS: readonly (readonly string[])[] = [['text/event-stream'], ['multipart/mixed'], ['application/graphql-response+json', 'application/json']];

/**
 * The media type graphql-yoga answers a single result with for this `Accept` (its
 * `use-result-processor.ts`: the last match wins), when it is one of the regular JSON types; null
 * otherwise (the runtime answers).
 */
export function regularMediaType(accept: string | undefined): string | null {
  const asked: string[] = [];
  for (const item of (accept || '*/*').replace(/\s/g, '').toLowerCase().split(',')) {
    const [type, ...params] = item.split(';');
    if ((params.find((p) => p.includes('charset=')) ?? 'charset=utf-8') !== 'charset=utf-8') continue;
    asked.push(type);
  }
  asked.reverse();
  let chosen: string | null = null;
  for (const types of PROCESSORS) for (const a of asked) for (const t of types) if (matches(t, a)) chosen = t;
  return chosen === 'application/json' || chosen === 'application/graphql-response+json' ? chosen : null;
}

/** One header's value as the Fetch adapter reads it (`Headers.get`). */
const headerOf = (req: IncomingMessage, name: string): string | null => {
  const v = req.headers[name];
  return v === undefined ? null : Array.isArray(v) ? v.join(', ') : v;
};

/**
 * The stored answer as the runtime sends it on a hit: its cost replayed as answered from the cache
 * (`cost.ts`), without yoga's `extensions.http` (its ETag, which the gateway never sends).
 */
export function hitBody(stored: ExecutionResult, operationId: string): string {
  const extensions: Record<string, unknown> = { ...(stored.extensions ?? {}), cost: { ...replayedCost(stored.extensions?.cost, 'cache'), operationId } };
  delete extensions.http;
  return JSON.stringify({ ...stored, extensions });
}

/** Stands for the operation's id in a body built once: each answer gets its own id in its place. */
const OPERATION_ID_SLOT = '00000000-0000-4000-8000-0000000000id';

/**
 * The edge's handler: answers a response-cache hit and returns true, or returns false (nothing
 * written, the request's body as the guard left it) for the runtime to answer.
 */
export function cacheHitsAtTheEdge(opts: CacheHitsOptions): (req: IncomingMessage & { body?: unknown }, res: ServerResponse) => Promise<boolean> {
  const endpoint = opts.endpoint ?? '/graphql';
  const minBytes = opts.compression === false ? Infinity : (opts.compression.minBytes ?? 1024);
  /**
   * Each stored answer's body, built once (the in-memory cache hands back the stored object), with
   * a slot for the operation's id: every answer is an operation of its own (`operationCost`). Kept
   * as bytes, so a hit copies them around a new id rather than encoding the whole answer again.
   */
  const bodies = new WeakMap<ExecutionResult, { head: Buffer; tail: Buffer }>();
  return async (req, res) => {
    if (req.method !== 'POST' || req.url !== endpoint) return false;
    const h = req.headers;
    if (h.origin !== undefined || h[ESTIMATE_ONLY_HEADER] !== undefined || !(h['content-type'] ?? '').toLowerCase().startsWith('application/json')) return false;
    const params = plainParams(req.body);
    if (!params) return false;
    const mediaType = regularMediaType(h.accept);
    if (!mediaType) return false;
    const session = opts.cache.sessionOf({ headers: { get: (name: string) => headerOf(req, name) } });
    const stored = await opts.cache.cachedAnswer(session, params.query, params.operationName, params.variables);
    if (!stored || (stored.errors?.length ?? 0) > 0) return false;
    countReplayedAnswer('cache');
    countAnsweredWithoutExecution(opts.names, params, stored);
    let parts = bodies.get(stored);
    if (!parts) {
      const text = hitBody(stored, OPERATION_ID_SLOT);
      // The extensions come last, so the last occurrence is the slot (not something in the data).
      const at = text.lastIndexOf(OPERATION_ID_SLOT);
      bodies.set(stored, (parts = { head: Buffer.from(text.slice(0, at), 'utf8'), tail: Buffer.from(text.slice(at + OPERATION_ID_SLOT.length), 'utf8') }));
    }
    let body: Buffer = Buffer.concat([parts.head, Buffer.from(randomUUID(), 'latin1'), parts.tail]);
    const headers: Record<string, string> = {
      'content-type': `${mediaType}; charset=utf-8`,
      'x-request-id': headerOf(req, 'x-request-id') || randomUUID(),
    };
    if (opts.compression !== false) {
      headers.vary = varyOnEncoding(null);
      const encoding = body.byteLength >= minBytes ? negotiateEncoding(headerOf(req, 'accept-encoding')) : null;
      if (encoding) {
        body = await compressBody(body, encoding, opts.compression);
        headers['content-encoding'] = encoding;
      }
    }
    headers['content-length'] = String(body.byteLength);
    res.writeHead(200, headers).end(body);
    return true;
  };
}
