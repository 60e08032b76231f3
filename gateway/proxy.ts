/**
 * Gateway routes that belong to a subgraph: `/callbacks/<area>/…` (upstream callback ingress) and
 * `/files/<area>/…` (signed downloads) are streamed to `<subgraph>/<area>/callbacks/…` and
 * `<subgraph>/<area>/files/…`, where the owning subgraph verifies signatures and answers.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Transform, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { request } from 'undici';
import type { GatewayRoute } from './index.ts';
import { log } from '../platform/log.ts';
import { closeAfterAnswer, refuseTooLarge } from '../platform/http.ts';

const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'upgrade', 'host', 'content-length']);

/** Largest request body forwarded by default: the callback ingress's own limit. */
const DEFAULT_MAX_BODY_BYTES = 2 * 1024 * 1024;

export interface SubgraphRouteOptions {
  /**
   * Largest request body forwarded, in bytes. A larger one is answered 413 by the gateway itself,
   * with `connection: close`: by `content-length` before anything is forwarded, or, for a chunked
   * body, as soon as the count passes the limit (the subgraph never sees the excess).
   * @default 2097152 (2 MiB, the risk callback ingress's limit)
   */
  maxBodyBytes?: number;
}

function forwardHeaders(headers: IncomingMessage['headers']): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) {
    if (v === undefined || HOP_BY_HOP.has(k)) continue;
    out[k] = Array.isArray(v) ? v.join(', ') : v;
  }
  return out;
}

/**
 * The part after `/<prefix>/<area>`: segments of URL-safe characters only (signed tokens, file
 * names), so nothing can climb out of the area's route (`..`, `%2e%2e`, `%2f`, backslashes).
 */
const SAFE_REST = /^(\/[A-Za-z0-9_~-][A-Za-z0-9._~-]*)*\/?$/;

/**
 * Routes `/<prefix>/<area>/rest` to `<subgraph base of area>/<area>/<prefix>/rest`.
 *
 * Nothing a client or the subgraph does ends in an unhandled error: a client that goes away (mid
 * request body or mid response) aborts the forwarded request, which destroys both streams, and is
 * not logged; a subgraph that cannot be reached gets 502 (one short log line); a subgraph that fails
 * mid response cuts the client's response short.
 */
export function subgraphRoute(prefix: 'callbacks' | 'files', subgraphBaseUrls: Record<string, string>, opts: SubgraphRouteOptions = {}): GatewayRoute {
  const maxBody = opts.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  return async (req: IncomingMessage, res: ServerResponse, path: string) => {
    const m = new RegExp(`^/${prefix}/([a-z]+)(/.*)?$`).exec(path);
    if (!m) return false;
    if (!SAFE_REST.test(m[2] ?? '') || /(^|\/)\.{1,2}(\/|$)/.test(m[2] ?? '')) {
      req.resume();
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not found"}');
      return true;
    }
    const area = m[1];
    const base = subgraphBaseUrls[area];
    if (!base) {
      req.resume();
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"unknown area"}');
      return true;
    }
    const query = (req.url ?? '').includes('?') ? (req.url ?? '').slice((req.url ?? '').indexOf('?')) : '';
    const hasBody = req.method !== 'GET' && req.method !== 'HEAD';
    const target = new URL(`${base}/${area}/${prefix}${m[2] ?? ''}${query}`);
    if (!target.pathname.startsWith(`/${area}/${prefix}`)) {
      req.resume();
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not found"}');
      return true;
    }
    const declared = Number(req.headers['content-length'] ?? 0);
    if (hasBody && declared > maxBody) {
      bodyTooLarge(req, res);
      return true;
    }

    // The client going away (before or during the answer) aborts the forwarded request: undici then
    // destroys the body it was sending and the answer it was reading, so neither side lingers.
    const abort = new AbortController();
    let clientLeft = false;
    // Set when the subgraph's answer fails first (it then cuts the client's answer short itself).
    let subgraphFailed = false;
    res.once('close', () => {
      if (res.writableFinished || subgraphFailed) return;
      clientLeft = true;
      abort.abort();
    });

    // A chunked body (or one whose length was not declared) is counted as it is forwarded.
    let tooLarge = false;
    let body: Transform | undefined;
    if (hasBody) {
      let size = 0;
      body = new Transform({
        transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback) {
          size += chunk.length;
          if (size <= maxBody) return done(null, chunk);
          tooLarge = true;
          done(new Error('request body too large'));
        },
      });
      // undici listens too; this one only keeps a failed body from counting as unhandled.
      body.on('error', () => undefined);
      // Not `pipeline`: on a failed body the request must stay open to carry the 413.
      req.pipe(body);
    }

    let upstream: Awaited<ReturnType<typeof request>>;
    try {
      upstream = await request(target, {
        method: (req.method ?? 'GET') as 'GET',
        headers: { ...forwardHeaders(req.headers), 'x-forwarded-for': req.socket.remoteAddress ?? '' },
        body,
        signal: abort.signal,
      });
    } catch (err) {
      if (tooLarge) bodyTooLarge(req, res);
      else if (!clientLeft) {
        log.warn(`[gateway] /${prefix}/${area}: subgraph unreachable (${err instanceof Error ? err.message : String(err)})`);
        req.resume();
        if (!res.headersSent) res.writeHead(502, { 'content-type': 'application/json', 'cache-control': 'no-store' });
        res.end('{"error":"bad gateway"}');
      }
      return true;
    }
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(upstream.headers)) if (v !== undefined && !HOP_BY_HOP.has(k)) headers[k] = Array.isArray(v) ? v.join(', ') : v;
    if (hasBody && !req.complete) {
      // Answered before the whole body was forwarded: the rest is discarded and the connection
      // closes after the answer (its unread rest could not be told from a next request).
      closeAfterAnswer(req, res);
      headers.connection = 'close';
    }
    if (clientLeft) {
      upstream.body.on('error', () => undefined).destroy();
      return true;
    }
    upstream.body.once('error', () => {
      if (!clientLeft) subgraphFailed = true;
    });
    res.writeHead(upstream.statusCode, headers);
    try {
      // Either side failing destroys the other.
      await pipeline(upstream.body, res);
    } catch (err) {
      if (subgraphFailed) log.warn(`[gateway] /${prefix}/${area}: answer cut short by the subgraph (${err instanceof Error ? err.message : String(err)})`);
    }
    return true;
  };
}

/**
 * 413 with `connection: close`: the rest of the body is read and discarded, and the connection closes
 * in stages (`closeAfterAnswer`), so the sender, still writing, reads the answer rather than a reset.
 */
function bodyTooLarge(req: IncomingMessage, res: ServerResponse): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  refuseTooLarge(req, res);
}
