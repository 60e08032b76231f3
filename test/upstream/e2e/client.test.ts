import { afterEach, describe, expect, it } from 'vitest';
import { UpstreamClient } from '../../../subgraphs/upstream/client.ts';
import { loadUpstreamConfig } from '../../../subgraphs/upstream/config.ts';
import { CostMeter } from '../../../subgraphs/upstream/cost.ts';
import { decodeEnvelope, parseRetryAfter } from '../../../subgraphs/upstream/envelope.ts';
import type { Endpoint } from '../../../subgraphs/upstream/endpoint.ts';
import { UpstreamError } from '../../../subgraphs/upstream/errors.ts';
import { tenantOf } from '../../../subgraphs/upstream/tenant.ts';
import { json, startStub, type Stub } from '../../support/stub.ts';
import { signal, waitFor } from '../../support/wait.ts';

const ans = (status: number, body: unknown, contentType = 'application/json') => ({
  status,
  contentType,
  text: typeof body === 'string' ? body : JSON.stringify(body),
  retryAfter: null,
});

function decodeError(status: number, body: unknown, contentType?: string): UpstreamError {
  try {
    decodeEnvelope('company', 'IT-start', ans(status, body, contentType));
  } catch (err) {
    if (err instanceof UpstreamError) return err;
    throw err;
  }
  throw new Error('expected an UpstreamError');
}

describe('envelope decoding', () => {
  it('returns data of a standard success envelope', () => {
    const d = decodeEnvelope('company', 'IT-start', ans(200, { data: [{ vatCode: '1' }], success: true, message: '', error: null }));
    expect(d.data).toEqual([{ vatCode: '1' }]);
  });

  it('keeps the HTTP status and the upstream error number of an error envelope', () => {
    const e = decodeError(406, { success: false, message: 'cf/piva not valid', error: 215, data: null });
    expect([e.status, e.upstreamCode, e.message, e.graphqlCode]).toEqual([406, 215, 'cf/piva not valid', 'UPSTREAM_REJECTED']);
  });

  it('maps statuses to stable codes', () => {
    expect(decodeError(401, { success: false, message: 'Wrong Token', error: 125, data: null }).graphqlCode).toBe('UNAUTHENTICATED');
    expect(decodeError(402, { success: false, message: 'Insufficient Credit', error: 610, data: null }).graphqlCode).toBe('PAYMENT_REQUIRED');
    expect(decodeError(404, { success: false, message: 'no company', error: 302, data: null }).graphqlCode).toBe('UPSTREAM_NOT_FOUND');
    expect(decodeError(503, 'Service Unavailable', 'text/plain').graphqlCode).toBe('UPSTREAM_UNAVAILABLE');
    expect(decodeError(429, { message: 'slow down' }).graphqlCode).toBe('RATE_LIMITED');
    expect(decodeError(204, '').graphqlCode).toBe('UPSTREAM_NOT_FOUND');
  });

  it('lets the HTTP status win over success:true on an error status (invoice 404s)', () => {
    const e = decodeError(404, { success: true, message: 'Fiscal ID not found', error: 111, data: 'null' });
    expect([e.status, e.upstreamCode]).toEqual([404, 111]);
  });

  it('treats a 200 with success:false as an error', () => {
    expect(decodeError(200, { success: false, message: 'nope', error: 9, data: null }).upstreamCode).toBe(9);
  });

  it('returns the whole body when there is no data field (v1 token, PEC Massiva 201, SDI uuid)', () => {
    const token = { scopes: ['GET:x'], expire: 1, token: 't', success: true, message: '', error: null };
    expect(decodeEnvelope('oauth', 'token', ans(200, token)).data).toEqual(token);
    const sent = { success: true, sent: 1, message: '', message_id: '2020' };
    expect(decodeEnvelope('pecmassiva', 'send', ans(201, sent)).data).toEqual(sent);
    expect(decodeEnvelope('invoice', 'x', ans(201, { uuid: 'u' })).data).toEqual({ uuid: 'u' });
  });

  it('normalises the invoice "null" string', () => {
    expect(decodeEnvelope('invoice', 'x', ans(200, { data: 'null', success: true })).data).toBeNull();
  });

  it('strips markup from a non-JSON error body and bounds it', () => {
    const e = decodeError(500, `<html><body>${'x'.repeat(500)}</body></html>`, 'text/html');
    expect(e.message).not.toContain('<');
    expect(e.message.length).toBeLessThanOrEqual(200);
  });

  it('refuses a 2xx that is not JSON', () => {
    expect(decodeError(200, 'garbage', 'text/plain').kind).toBe('decode');
  });

  it('parses Retry-After in seconds and as an HTTP date', () => {
    expect(parseRetryAfter('3')).toBe(3);
    expect(parseRetryAfter(new Date(Date.now() + 10_000).toUTCString())).toBeGreaterThanOrEqual(8);
    expect(parseRetryAfter(undefined)).toBeNull();
  });
});

describe('UpstreamClient', () => {
  let stub: Stub | undefined;
  let client: UpstreamClient | undefined;
  afterEach(async () => {
    await client?.close();
    await stub?.close();
    client = undefined;
    stub = undefined;
  });

  const ctxFor = (token = 'tok-a') => ({ auth: { token, tenant: tenantOf(token) }, meter: new CostMeter() });
  const make = (url: string, extra: NodeJS.ProcessEnv = {}) =>
    new UpstreamClient(loadUpstreamConfig({ OPENAPI_ENV: 'sandbox', OPENAPI_COMPANY_URL: url, OPENAPI_RETRY_BASE_MS: '5', OPENAPI_POLL_MIN_MS: '10', ...extra }));
  const start: Endpoint = { area: 'company', method: 'GET', path: '/IT-start/{id}', ttl: 60 };
  const ok = (data: unknown) => ({ data, success: true, message: '', error: null });

  it('sends the bearer token, meters the call and prices it from the table', async () => {
    stub = await startStub((_req, res) => json(res, 200, ok([{ vatCode: '12485671007' }])));
    client = make(stub.url);
    const ctx = ctxFor();
    await client.call(ctx, start, { params: { id: '12485671007' } });
    expect(stub.requests[0].headers.authorization).toBe('Bearer tok-a');
    expect(stub.requests[0].path).toBe('/IT-start/12485671007');
    expect(ctx.meter.summary()).toMatchObject({ upstreamCalls: 1, cacheHits: 0, euro: 0.05 });
  });

  it('caches per tenant and de-duplicates concurrent identical calls', async () => {
    // The stub holds its answer until the test lets it go: both calls are made while it is in flight.
    const release = signal();
    stub = await startStub(async (_req, res) => {
      await release.wait('the test to release the answer');
      json(res, 200, ok([{ vatCode: '1' }]));
    });
    client = make(stub.url);
    const a = ctxFor('tok-a');
    const b = ctxFor('tok-a');
    const both = Promise.all([client.call(a, start, { params: { id: '1' } }), client.call(b, start, { params: { id: '1' } })]);
    await waitFor(() => stub!.requests.length === 1, 'the first call in flight');
    release.fire();
    await both;
    expect(stub.requests).toHaveLength(1);
    expect(a.meter.summary().upstreamCalls + b.meter.summary().upstreamCalls).toBe(1);
    expect(a.meter.summary().dedupHits + b.meter.summary().dedupHits).toBe(1);

    const again = ctxFor('tok-a');
    await client.call(again, start, { params: { id: '1' } });
    expect(again.meter.summary()).toMatchObject({ upstreamCalls: 0, cacheHits: 1, euro: 0 });
    expect(stub.requests).toHaveLength(1);

    await client.call(ctxFor('tok-b'), start, { params: { id: '1' } });
    expect(stub.requests).toHaveLength(2);
  });

  it('retries idempotent GETs on 503 honouring Retry-After, never POSTs', async () => {
    let n = 0;
    stub = await startStub((req, res) => {
      n++;
      if (req.method === 'GET' && n < 3) json(res, 503, { success: false, message: 'busy', error: 1, data: null }, { 'retry-after': '0' });
      else if (req.method === 'POST') json(res, 503, { success: false, message: 'busy', error: 1, data: null });
      else json(res, 200, ok([{}]));
    });
    client = make(stub.url);
    const ctx = ctxFor();
    await client.call(ctx, { ...start, ttl: 0 }, { params: { id: '1' } });
    expect(stub.requests).toHaveLength(3);
    expect(ctx.meter.summary().upstreamCalls).toBe(3);

    const post: Endpoint = { area: 'company', method: 'POST', path: '/IT-full/{id}' };
    await expect(client.call(ctxFor(), post, { params: { id: '1' }, body: {} })).rejects.toMatchObject({ status: 503, graphqlCode: 'UPSTREAM_UNAVAILABLE' });
    expect(stub.requests.filter((r) => r.method === 'POST')).toHaveLength(1);
  });

  it('gives RATE_LIMITED with retryAfter when the wait is too long to honour', async () => {
    stub = await startStub((_req, res) => json(res, 429, { success: false, message: 'too many', error: 7, data: null }, { 'retry-after': '120' }));
    client = make(stub.url);
    await expect(client.call(ctxFor(), start, { params: { id: '1' } })).rejects.toMatchObject({ graphqlCode: 'RATE_LIMITED', retryAfter: 120 });
    expect(stub.requests).toHaveLength(1);
  });

  it('times out per endpoint, retries, then reports UPSTREAM_TIMEOUT', async () => {
    // An upstream that never answers (the stub closes its connections at the end).
    stub = await startStub(() => undefined);
    client = make(stub.url, { OPENAPI_MAX_RETRIES: '1' });
    await expect(client.call(ctxFor(), { ...start, timeoutMs: 300 }, { params: { id: '1' } })).rejects.toMatchObject({ kind: 'timeout', graphqlCode: 'UPSTREAM_TIMEOUT' });
    expect(stub.requests).toHaveLength(2);
  });

  it('follows 302 + Retry-After by polling IT-check_id on its own base URL', async () => {
    let polls = 0;
    stub = await startStub((req, res) => {
      if (req.path.startsWith('/IT-full/')) {
        json(res, 302, ok({ state: 'PENDING', id: 'abc123' }), { location: 'https://evil.example/IT-check_id/abc123', 'retry-after': '0' });
      } else if (req.path === '/IT-check_id/abc123') {
        polls++;
        json(res, 200, polls < 2 ? ok({ state: 'PENDING', id: 'abc123' }) : ok({ companyDetails: { vatCode: '1' } }));
      } else json(res, 404, { success: false, message: 'no', error: 244, data: null });
    });
    client = make(stub.url);
    const ctx = ctxFor();
    const data = await client.call(ctx, { area: 'company', method: 'GET', path: '/IT-full/{id}', slow: true }, { params: { id: '1' } });
    expect(data).toEqual({ companyDetails: { vatCode: '1' } });
    expect(stub.requests.map((r) => r.path)).toEqual(['/IT-full/1', '/IT-check_id/abc123', '/IT-check_id/abc123']);
    expect(ctx.meter.summary()).toMatchObject({ upstreamCalls: 3, euro: 1.5 });
  });

  it('retries a failed poll on its own and never buys the slow dataset twice', async () => {
    let polls = 0;
    stub = await startStub((req, res) => {
      if (req.path.startsWith('/IT-stakeholders/')) json(res, 302, ok({ state: 'PENDING', id: 'q1' }), { 'retry-after': '0' });
      else if (++polls === 1) json(res, 503, { success: false, message: 'busy', error: 1, data: null });
      else json(res, 200, ok({ managers: [] }));
    });
    client = make(stub.url);
    const ctx = ctxFor();
    expect(await client.call(ctx, { area: 'company', method: 'GET', path: '/IT-stakeholders/{id}', slow: true }, { params: { id: '1' } })).toEqual({ managers: [] });
    expect(stub.requests.map((r) => r.path)).toEqual(['/IT-stakeholders/1', '/IT-check_id/q1', '/IT-check_id/q1']);
    expect(ctx.meter.summary().euro).toBe(0.5);
  });

  it('resumes a dataset still pending on the next call instead of buying it again', async () => {
    let ready = false;
    stub = await startStub((req, res) => {
      if (req.path.startsWith('/IT-aml/')) json(res, 302, ok({ state: 'PENDING', id: 'r1' }), { 'retry-after': '0' });
      else json(res, 200, ready ? ok({ rae: 'x' }) : ok({ state: 'PENDING', id: 'r1' }));
    });
    client = make(stub.url, { OPENAPI_SLOW_BUDGET_MS: '100' });
    const aml: Endpoint = { area: 'company', method: 'GET', path: '/IT-aml/{id}', slow: true, ttl: 60 };
    const first = ctxFor();
    await expect(client.call(first, aml, { params: { id: '1' } })).rejects.toMatchObject({ graphqlCode: 'UPSTREAM_PENDING' });
    expect(first.meter.summary().euro).toBe(0.9);
    ready = true;
    const second = ctxFor();
    expect(await client.call(second, aml, { params: { id: '1' } })).toEqual({ rae: 'x' });
    expect(second.meter.summary().euro).toBe(0);
    expect(stub.requests.filter((r) => r.path.startsWith('/IT-aml/'))).toHaveLength(1);
  });

  it('ends waits and requests in flight at once when closed', async () => {
    stub = await startStub((req, res) => {
      if (req.path.startsWith('/IT-full/')) json(res, 302, ok({ state: 'PENDING', id: 'c1' }), { 'retry-after': '30' });
      else json(res, 200, ok({ state: 'PENDING', id: 'c1' }));
    });
    client = make(stub.url, { OPENAPI_POLL_MAX_MS: '30000' });
    const pending = client.call(ctxFor(), { area: 'company', method: 'GET', path: '/IT-full/{id}', slow: true }, { params: { id: '1' } }).catch((e: unknown) => e);
    await waitFor(() => stub!.requests.length >= 1, 'the slow dataset requested');
    const t0 = Date.now();
    await client.close();
    expect(await pending).toBeInstanceOf(UpstreamError);
    expect(Date.now() - t0).toBeLessThan(5000);
    client = undefined;
  });

  it('streams a slow document past the endpoint timeout (only idle time counts)', async () => {
    stub = await startStub(async (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/pdf' });
      // 800 ms in all, twice the timeout; no gap comes near it.
      for (let i = 0; i < 8; i++) {
        res.write('%PDF-chunk\n');
        // Not synchronisation: the gaps between chunks are the slow upstream under test.
        await new Promise((r) => setTimeout(r, 100));
      }
      res.end();
    });
    client = make(stub.url, { OPENAPI_RISK_URL: stub.url });
    const doc = await client.download(ctxFor(), { area: 'risk', method: 'GET', path: '/IT-report-persona/{id}/download', timeoutMs: 400 }, { params: { id: 'x' } });
    let bytes = 0;
    for await (const chunk of doc.body) bytes += (chunk as Buffer).length;
    expect(bytes).toBe(8 * '%PDF-chunk\n'.length);
  });

  it('gives up the slow flow after its budget with UPSTREAM_PENDING', async () => {
    stub = await startStub((req, res) => {
      if (req.path.startsWith('/IT-aml/')) json(res, 302, ok({ state: 'PENDING', id: 'p1' }), { 'retry-after': '0' });
      else json(res, 200, ok({ state: 'PENDING', id: 'p1' }));
    });
    client = make(stub.url, { OPENAPI_SLOW_BUDGET_MS: '100' });
    await expect(client.call(ctxFor(), { area: 'company', method: 'GET', path: '/IT-aml/{id}', slow: true }, { params: { id: '1' } })).rejects.toMatchObject({
      graphqlCode: 'UPSTREAM_PENDING',
    });
  });

  it('reports a refused connection as UPSTREAM_UNAVAILABLE and never leaks the token', async () => {
    client = make('http://127.0.0.1:1', { OPENAPI_MAX_RETRIES: '0' });
    const err = await client.call(ctxFor('secret-token-xyz'), start, { params: { id: '1' } }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UpstreamError);
    expect((err as UpstreamError).graphqlCode).toBe('UPSTREAM_UNAVAILABLE');
    expect(JSON.stringify(err) + String(err)).not.toContain('secret-token-xyz');
  });

  it('refuses to call without a token', async () => {
    client = make('http://127.0.0.1:1');
    await expect(client.call({ auth: { token: '', tenant: 'anonymous' }, meter: new CostMeter() }, start, { params: { id: '1' } })).rejects.toMatchObject({
      graphqlCode: 'UNAUTHENTICATED',
    });
  });
});

describe('configuration', () => {
  it('derives sandbox and production hosts, and per-area overrides', () => {
    const sandbox = loadUpstreamConfig({ OPENAPI_ENV: 'sandbox' });
    expect(sandbox.baseUrls.company).toBe('https://test.company.openapi.com');
    expect(sandbox.baseUrls.pecmassiva).toBe('https://test.ws.pecmassiva.com');
    const prod = loadUpstreamConfig({ OPENAPI_ENV: 'production', OPENAPI_RISK_URL: 'http://proxy/risk/' });
    expect(prod.baseUrls.company).toBe('https://company.openapi.com');
    expect(prod.baseUrls.risk).toBe('http://proxy/risk');
    expect(loadUpstreamConfig({}, 'http://127.0.0.1:9').baseUrls.cap).toBe('http://127.0.0.1:9/cap');
    expect(() => loadUpstreamConfig({ OPENAPI_ENV: 'staging' })).toThrow(/OPENAPI_ENV/);
    expect(loadUpstreamConfig({ OPENAPI_ENV: 'sandbox', OPENAPI_TIMEOUT_MS: '0' }).forcedTimeoutMs).toBeNull();
    expect(loadUpstreamConfig({ OPENAPI_ENV: 'sandbox', OPENAPI_TIMEOUT_MS: '1500' }).forcedTimeoutMs).toBe(1500);
  });
});
