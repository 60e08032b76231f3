/**
 * Compression through the gateway, as clients see it on the wire (undici's `request` does not
 * decompress): brotli or gzip as `Accept-Encoding` allows, bodies decoding to the very JSON an
 * uncompressed answer carries; small answers as they are; the GraphiQL page compressed (and
 * revalidated by ETag); SSE and graphql-ws subscriptions unaffected.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { getIntrospectionQuery } from 'graphql';
import { request } from 'undici';
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { compressBody, negotiateEncoding } from '../../../gateway/compression.ts';
import { graphiqlRoute, graphiqlSettings, renderGraphiQLPage } from '../../../gateway/graphiql.ts';
import { EXAMPLES } from '../../../gateway/examples.ts';
import type { GatewayRoute } from '../../../gateway/index.ts';
import { comparable } from '../../support/answers.ts';
import { startTestStack, type TestStack } from '../../support/stack.ts';

let t: TestStack;

beforeAll(async () => {
  t = await startTestStack();
  // Reports stay PROCESSING until the test moves them.
  await t.control('risk/timing', { completeAfterMs: 0 });
}, 120_000);

afterAll(async () => {
  await t?.close();
});

interface Raw {
  status: number;
  encoding: string | undefined;
  vary: string;
  bytes: Buffer;
}

async function post(body: unknown, acceptEncoding?: string): Promise<Raw> {
  const res = await request(t.stack.gateway.graphqlUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json', ...(acceptEncoding === undefined ? {} : { 'accept-encoding': acceptEncoding }) },
    body: JSON.stringify(body),
  });
  return {
    status: res.statusCode,
    encoding: res.headers['content-encoding'] as string | undefined,
    vary: String(res.headers.vary ?? ''),
    bytes: Buffer.from(await res.body.arrayBuffer()),
  };
}

function decode(raw: Raw): string {
  if (raw.encoding === 'br') return brotliDecompressSync(raw.bytes).toString('utf8');
  if (raw.encoding === 'gzip') return gunzipSync(raw.bytes).toString('utf8');
  if (raw.encoding === undefined) return raw.bytes.toString('utf8');
  throw new Error(`unexpected content-encoding ${raw.encoding}`);
}

describe('JSON answers', () => {
  const introspection = { query: getIntrospectionQuery() };

  it('are compressed with brotli or gzip as the client accepts, and decode to the same JSON', async () => {
    const plain = await post(introspection);
    expect(plain.status).toBe(200);
    expect(plain.encoding).toBeUndefined();
    const json = JSON.parse(plain.bytes.toString('utf8')) as { data?: { __schema?: unknown } };
    expect(json.data?.__schema).toBeTruthy();
    expect(plain.bytes.byteLength).toBeGreaterThan(100_000);

    for (const [accept, expected] of [
      ['br', 'br'],
      ['gzip', 'gzip'],
      ['gzip, deflate, br, zstd', 'br'], // what browsers send
      ['br;q=0, gzip;q=0.8', 'gzip'],
      ['identity', undefined],
      ['', undefined],
    ] as const) {
      const raw = await post(introspection, accept);
      expect(raw.status, accept).toBe(200);
      expect(raw.encoding, accept).toBe(expected);
      expect(raw.vary.toLowerCase(), accept).toContain('accept-encoding');
      // Each answer is an operation of its own (its `extensions.cost.operationId` is new).
      expect(comparable(JSON.parse(decode(raw))), accept).toEqual(comparable(json));
      if (expected) expect(raw.bytes.byteLength, accept).toBeLessThan(plain.bytes.byteLength / 5);
    }
  });

  it('under 1 KB go out uncompressed', async () => {
    const raw = await post({ query: '{ __typename }' }, 'br, gzip');
    expect(raw.status).toBe(200);
    expect(raw.encoding).toBeUndefined();
    expect(raw.bytes.byteLength).toBeLessThan(1024);
    expect(JSON.parse(raw.bytes.toString('utf8'))).toMatchObject({ data: { __typename: 'Query' } });
  });

  it('negotiation: q-values, wildcard, none', () => {
    expect(negotiateEncoding('*')).toBe('br');
    expect(negotiateEncoding('*;q=0.5, br;q=0')).toBe('gzip');
    expect(negotiateEncoding('gzip;q=0, br;q=0')).toBeNull();
    expect(negotiateEncoding('deflate')).toBeNull();
    expect(negotiateEncoding(undefined)).toBeNull();
  });
});

describe('the GraphiQL page', () => {
  async function page(headers: Record<string, string>): Promise<Raw & { etag: string }> {
    const res = await request(t.stack.gateway.graphqlUrl, { headers: { accept: 'text/html', ...headers } });
    return {
      status: res.statusCode,
      encoding: res.headers['content-encoding'] as string | undefined,
      vary: String(res.headers.vary ?? ''),
      etag: String(res.headers.etag ?? ''),
      bytes: Buffer.from(await res.body.arrayBuffer()),
    };
  }

  it('is served compressed, the same bytes each time, and revalidated by its ETag', async () => {
    const plain = await page({});
    expect(plain.status).toBe(200);
    expect(plain.encoding).toBeUndefined();
    expect(plain.bytes.byteLength).toBeGreaterThan(8_000_000);
    const html = plain.bytes.toString('utf8');
    expect(html).toContain('<title>openapi-supergraph</title>');
    // Built in a child process (graphiql-build.ts): the very page this process renders.
    expect(html).toBe(await renderGraphiQLPage({ examples: EXAMPLES }));
    const head = await request(t.stack.gateway.graphqlUrl, { method: 'HEAD', headers: { accept: 'text/html' } });
    await head.body.dump();
    expect(Number(head.headers['content-length'])).toBe(plain.bytes.byteLength);

    const br = await page({ 'accept-encoding': 'gzip, deflate, br' });
    expect(br.encoding).toBe('br');
    expect(br.bytes.byteLength).toBeLessThan(3_000_000);
    expect(decode(br)).toBe(html);
    const gz = await page({ 'accept-encoding': 'gzip' });
    expect(gz.encoding).toBe('gzip');
    expect(gz.bytes.byteLength).toBeLessThan(3_000_000);
    expect(decode(gz)).toBe(html);
    // Compressed once: a second visit gets the very same bytes.
    const again = await page({ 'accept-encoding': 'br' });
    expect(again.bytes.equals(br.bytes)).toBe(true);

    // One ETag per encoding; If-None-Match read as a list, weak tags and * included.
    expect(br.etag).toMatch(/^".+"$/);
    expect(new Set([plain.etag, br.etag, gz.etag]).size).toBe(3);
    for (const ifNoneMatch of [br.etag, `"other", W/${br.etag}`, '*']) {
      const revalidated = await page({ 'accept-encoding': 'br', 'if-none-match': ifNoneMatch });
      expect(revalidated.status, ifNoneMatch).toBe(304);
      expect(revalidated.bytes.byteLength).toBe(0);
    }
    expect((await page({ 'accept-encoding': 'gzip', 'if-none-match': br.etag })).status).toBe(200);
  });

  it('is never framed by another site, its type never sniffed, typed headers never kept', async () => {
    const res = await request(t.stack.gateway.graphqlUrl, { headers: { accept: 'text/html', 'accept-encoding': 'br' } });
    await res.body.arrayBuffer();
    expect(res.headers['content-security-policy']).toBe("frame-ancestors 'none'");
    expect(res.headers['x-frame-options']).toBe('DENY');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(graphiqlSettings({ examples: EXAMPLES }).shouldPersistHeaders).toBe(false);
  });

  it('each encoding is compressed once, however many visits (concurrent or not); none when compression is off', async () => {
    const calls: string[] = [];
    const compressor: typeof compressBody = (body, encoding, q) => {
      calls.push(encoding);
      return compressBody(body, encoding, q);
    };
    const serve = async (route: GatewayRoute, run: (url: string) => Promise<void>): Promise<void> => {
      const server = createServer((req, res) => void route(req, res, new URL(req.url ?? '/', 'http://x').pathname));
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      try {
        await run(`http://127.0.0.1:${(server.address() as AddressInfo).port}/graphql`);
      } finally {
        await new Promise<void>((resolve) => server.close(() => resolve()));
      }
    };
    const visit = async (url: string, acceptEncoding: string): Promise<string | undefined> => {
      const res = await request(url, { headers: { accept: 'text/html', 'accept-encoding': acceptEncoding } });
      await res.body.arrayBuffer();
      return res.headers['content-encoding'] as string | undefined;
    };
    await serve(graphiqlRoute({ examples: EXAMPLES, compressor }), async (url) => {
      await Promise.all([visit(url, 'br'), visit(url, 'br'), visit(url, 'gzip')]);
      expect(await visit(url, 'br')).toBe('br');
      expect(await visit(url, 'gzip')).toBe('gzip');
    });
    expect(calls.sort()).toEqual(['br', 'gzip']);
    calls.length = 0;
    await serve(graphiqlRoute({ examples: EXAMPLES, compressor, compress: false }), async (url) => {
      expect(await visit(url, 'br, gzip')).toBeUndefined();
    });
    expect(calls).toEqual([]);
  });
});

describe('subscriptions', () => {
  const ORDER = `mutation { orderPatrimonialReport(input: { name: "MARIO", surname: "ROSSI", taxCode: "RSSMRA80A01H501U" }) { id } }`;
  const WATCH = 'subscription($id: ID!) { riskRequestUpdated(id: $id) { id state } }';

  async function order(): Promise<string> {
    const res = await t.gql<{ orderPatrimonialReport: { id: string } }>(ORDER);
    expect(res.errors).toBeUndefined();
    return res.data!.orderPatrimonialReport.id;
  }

  it('over SSE stream uncompressed even when the client accepts brotli', async () => {
    const id = await order();
    const ctl = new AbortController();
    const res = await request(t.stack.gateway.graphqlUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream', 'accept-encoding': 'br, gzip' },
      body: JSON.stringify({ query: WATCH, variables: { id } }),
      signal: ctl.signal,
    });
    try {
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toMatch(/text\/event-stream/);
      // The runtime marks event streams `content-encoding: none` (so that proxies leave them alone).
      expect(res.headers['content-encoding'] ?? 'none').toBe('none');
      let text = '';
      for await (const chunk of res.body) {
        text += (chunk as Buffer).toString('utf8');
        if (text.includes('PROCESSING')) break;
      }
      expect(text).toMatch(/data: \{"data":\{"riskRequestUpdated":\{"id":"[^"]+","state":"PROCESSING"\}\}\}/);
    } finally {
      ctl.abort();
    }
  });

  it('over graphql-ws still deliver', async () => {
    const id = await order();
    const client = createClient({ url: t.stack.gateway.wsUrl, webSocketImpl: WebSocket, retryAttempts: 0 });
    try {
      const events = client.iterate<{ riskRequestUpdated: { id: string; state: string } }>({ query: WATCH, variables: { id } });
      const first = await events.next();
      expect(first.value).toEqual({ data: { riskRequestUpdated: { id, state: 'PROCESSING' } } });
      await events.return?.();
    } finally {
      await client.dispose();
    }
  });
});
