/**
 * Gateway routes that belong to a subgraph: `/callbacks/<area>/…` (upstream callback ingress) and
 * `/files/<area>/…` (signed downloads) are streamed to `<subgraph>/<area>/callbacks/…` and
 * `<subgraph>/<area>/files/…`, where the owning subgraph verifies signatures and answers.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { pipeline } from 'node:stream/promises';
import { request } from 'undici';
import type { GatewayRoute } from './index.ts';

const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'upgrade', 'host', 'content-length']);

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

/** Routes `/<prefix>/<area>/rest` to `<subgraph base of area>/<area>/<prefix>/rest`. */
export function subgraphRoute(prefix: 'callbacks' | 'files', subgraphBaseUrls: Record<string, string>): GatewayRoute {
  return async (req: IncomingMessage, res: ServerResponse, path: string) => {
    const m = new RegExp(`^/${prefix}/([a-z]+)(/.*)?$`).exec(path);
    if (!m) return false;
    if (!SAFE_REST.test(m[2] ?? '') || /(^|\/)\.{1,2}(\/|$)/.test(m[2] ?? '')) {
      req.resume();
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not found"}');
      return true;
    }
    const area = m[1]!;
    const base = subgraphBaseUrls[area];
    if (!base) {
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
    const upstream = await request(target, {
      method: (req.method ?? 'GET') as 'GET',
      headers: { ...forwardHeaders(req.headers), 'x-forwarded-for': req.socket.remoteAddress ?? '' },
      body: hasBody ? req : undefined,
    });
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(upstream.headers)) if (v !== undefined && !HOP_BY_HOP.has(k)) headers[k] = Array.isArray(v) ? v.join(', ') : v;
    res.writeHead(upstream.statusCode, headers);
    await pipeline(upstream.body, res);
    return true;
  };
}
