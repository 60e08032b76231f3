/**
 * The one way to talk to the REST suite: base URL per area, undici keep-alive pool, bearer auth,
 * per-tenant cache and in-flight de-duplication, per-endpoint timeouts, retries with back-off and
 * `Retry-After` for idempotent GETs only, the 302 → `IT-check_id` slow-request flow, envelope
 * decoding into data or `UpstreamError`, and a cost record for every call.
 */
import { Agent, request, errors as undiciErrors } from 'undici';
import type { Readable } from 'node:stream';
import type { UpstreamAuth } from '../runtime/context.ts';
import { MemoryCacheStore, InFlight, type CacheStore } from './cache.ts';
import type { UpstreamConfig } from './config.ts';
import { type CostMeter } from './cost.ts';
import { decodeEnvelope, parseRetryAfter, type RawAnswer } from './envelope.ts';
import { fillPath, type Endpoint } from './endpoint.ts';
import { UpstreamError } from './errors.ts';
import { endpointOf, priceOf } from './prices.ts';

export interface CallContext {
  auth: UpstreamAuth;
  meter: CostMeter;
}

export type QueryValue = string | number | boolean | null | undefined;

export interface CallOptions {
  params?: Record<string, string>;
  query?: Record<string, QueryValue>;
  /** JSON body (POST, PATCH, PUT). */
  body?: unknown;
}

export interface Download {
  contentType: string;
  /** The upstream's `Content-Disposition`, if any. */
  disposition: string | null;
  length: number | null;
  body: Readable;
}

interface Answer extends RawAnswer {
  location: string | null;
}

/** Waits `ms`, or rejects as soon as `signal` aborts (client closing). */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason as Error);
    const done = (): void => {
      signal.removeEventListener('abort', abort);
      resolve();
    };
    const timer = setTimeout(done, ms);
    const abort = (): void => {
      clearTimeout(timer);
      reject(signal.reason as Error);
    };
    signal.addEventListener('abort', abort, { once: true });
  });
}

/** How long a dataset the upstream is still preparing can be resumed by id instead of bought again. */
const PENDING_RESUME_MS = 10 * 60_000;

export function queryString(query: Record<string, QueryValue> | undefined): string {
  if (!query) return '';
  const qs = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) {
    if (v === undefined || v === null) continue;
    qs.append(k, typeof v === 'boolean' ? (v ? '1' : '0') : String(v));
  }
  const s = qs.toString();
  return s ? `?${s}` : '';
}

export class UpstreamClient {
  private readonly agent: Agent;
  private readonly inflight = new InFlight();
  /** Aborted by `close()`: ends waits, polls and requests in flight. */
  private readonly closing = new AbortController();
  /** Slow datasets paid for and still pending upstream, by cache key: resumed, never bought twice. */
  private readonly pending = new Map<string, { id: string; expires: number }>();

  constructor(
    readonly config: UpstreamConfig,
    private readonly cache: CacheStore = new MemoryCacheStore(config.cacheMaxEntries),
  ) {
    this.agent = new Agent({ keepAliveTimeout: 30_000, keepAliveMaxTimeout: 120_000, connections: 128, pipelining: 1 });
  }

  /** Calls an endpoint and returns its decoded `data` (the whole JSON body for `decode: 'raw'`). */
  async call<T = unknown>(ctx: CallContext, ep: Endpoint, opts: CallOptions = {}): Promise<T> {
    const path = fillPath(ep.path, opts.params);
    const qs = queryString(opts.query);
    this.requireToken(ctx, ep, path);
    if (ep.method !== 'GET') return (await this.fetchDecoded(ctx, ep, path, qs, opts.body)) as T;

    const key = this.cacheKey(ctx, ep, path, qs);
    const ttl = ep.ttl ?? 0;
    if (ttl > 0) {
      const hit = await this.cache.get(key);
      if (hit !== undefined) {
        ctx.meter.record({ area: ep.area, method: ep.method, path, status: 200, euro: 0, ms: 0, source: 'cache' });
        return hit as T;
      }
    }
    const { promise, joined } = this.inflight.run(key, async () => {
      const data = await this.fetchDecoded(ctx, ep, path, qs, undefined, key);
      if (ttl > 0) await this.cache.set(key, data, ttl);
      return data;
    });
    if (joined) ctx.meter.record({ area: ep.area, method: ep.method, path, status: 200, euro: 0, ms: 0, source: 'dedup' });
    return (await promise) as T;
  }

  /**
   * Whether a call would be answered by the cache right now (same tenant, endpoint, path and
   * query), without calling or metering anything: loaders use it to prefer data already paid for.
   */
  async isCached(ctx: CallContext, ep: Endpoint, opts: CallOptions = {}): Promise<boolean> {
    if (ep.method !== 'GET' || (ep.ttl ?? 0) <= 0) return false;
    return (await this.cache.get(this.cacheKey(ctx, ep, fillPath(ep.path, opts.params), queryString(opts.query)))) !== undefined;
  }

  private cacheKey(ctx: CallContext, ep: Endpoint, path: string, qs: string): string {
    return `${ctx.auth.tenant}|${ep.area}|${ep.decode ?? 'envelope'}|${path}${qs}`;
  }

  /** Streams a document (PDF, XML); an error answer is decoded into an `UpstreamError`. */
  async download(ctx: CallContext, ep: Endpoint, opts: CallOptions = {}): Promise<Download> {
    const path = fillPath(ep.path, opts.params);
    const qs = queryString(opts.query);
    this.requireToken(ctx, ep, path);
    const started = Date.now();
    // No overall deadline on a document: it may stream for long; the idle body timeout still holds.
    const res = await this.send(ctx, ep, path, qs, undefined, false, false);
    const status = res.statusCode;
    const contentType = String(res.headers['content-type'] ?? 'application/octet-stream');
    ctx.meter.record({ area: ep.area, method: ep.method, path, status, euro: status < 300 ? priceOf(ep.area, ep.method, path) : 0, ms: Date.now() - started, source: 'upstream' });
    if (status !== 200 || /json/.test(contentType)) {
      const text = await res.body.text();
      const answer: RawAnswer = { status, contentType, text, retryAfter: parseRetryAfter(res.headers['retry-after']) };
      if (status === 200) decodeEnvelope(ep.area, endpointOf(path), answer);
      decodeEnvelope(ep.area, endpointOf(path), { ...answer, status: status === 200 ? 502 : status });
      throw new UpstreamError('decode', 'no document in the answer', ep.area, endpointOf(path), status);
    }
    const len = Number(res.headers['content-length']);
    const disposition = res.headers['content-disposition'];
    return { contentType, disposition: typeof disposition === 'string' ? disposition : null, length: Number.isFinite(len) ? len : null, body: res.body };
  }

  /** Stops: waits and polls end at once, requests in flight are aborted, connections closed. */
  async close(): Promise<void> {
    this.closing.abort(new UpstreamError('network', 'the upstream client is shutting down', 'company', 'close', 0));
    await this.agent.destroy();
  }

  /** Drops every cached answer (all tenants). */
  async clearCache(): Promise<void> {
    await this.cache.clear();
  }

  private requireToken(ctx: CallContext, ep: Endpoint, path: string): void {
    if (!ctx.auth.token) {
      throw new UpstreamError('http', 'no Openapi token: set OPENAPI_TOKEN or send Authorization: Bearer <token>', ep.area, endpointOf(path), 401);
    }
  }

  private timeoutOf(ep: Endpoint): number {
    return this.config.forcedTimeoutMs ?? ep.timeoutMs ?? this.config.defaultTimeoutMs;
  }

  /** One HTTP exchange; network failures and timeouts become `UpstreamError`s. */
  private async send(ctx: CallContext, ep: Endpoint, path: string, qs: string, body: unknown, hasBody: boolean, deadline = true) {
    const timeout = this.timeoutOf(ep);
    const headers: Record<string, string> = { authorization: `Bearer ${ctx.auth.token}`, accept: 'application/json, application/pdf;q=0.9, */*;q=0.5' };
    if (hasBody) headers['content-type'] = 'application/json';
    try {
      return await request(`${this.config.baseUrls[ep.area]}${path}${qs}`, {
        dispatcher: this.agent,
        method: ep.method,
        headers,
        body: hasBody ? JSON.stringify(body ?? {}) : undefined,
        headersTimeout: timeout,
        bodyTimeout: timeout,
        signal: deadline ? AbortSignal.any([AbortSignal.timeout(timeout), this.closing.signal]) : this.closing.signal,
      });
    } catch (err) {
      throw this.transportError(err, ep, path, timeout);
    }
  }

  private transportError(err: unknown, ep: Endpoint, path: string, timeout: number): UpstreamError {
    const e = err as { name?: string; code?: string };
    const timedOut =
      err instanceof undiciErrors.HeadersTimeoutError ||
      err instanceof undiciErrors.BodyTimeoutError ||
      e.name === 'TimeoutError' ||
      e.name === 'AbortError' ||
      e.code === 'UND_ERR_HEADERS_TIMEOUT' ||
      e.code === 'UND_ERR_BODY_TIMEOUT';
    if (timedOut) return new UpstreamError('timeout', `no answer within ${timeout} ms`, ep.area, endpointOf(path), 0);
    return new UpstreamError('network', 'connection to the Openapi service failed', ep.area, endpointOf(path), 0);
  }

  /** One attempt: send, read, meter. */
  private async attempt(ctx: CallContext, ep: Endpoint, path: string, qs: string, body: unknown): Promise<Answer> {
    const price = priceOf(ep.area, ep.method, path);
    ctx.meter.reserve(price, `${ep.method} ${endpointOf(path)}`);
    const started = Date.now();
    let answer: Answer;
    try {
      const res = await this.send(ctx, ep, path, qs, body, ep.method !== 'GET' && ep.method !== 'DELETE');
      const text = await res.body.text();
      const location = res.headers.location;
      answer = {
        status: res.statusCode,
        contentType: String(res.headers['content-type'] ?? ''),
        text,
        retryAfter: parseRetryAfter(res.headers['retry-after']),
        location: typeof location === 'string' ? location : null,
      };
    } catch (err) {
      const ue = err instanceof UpstreamError ? err : this.transportError(err, ep, path, this.timeoutOf(ep));
      ctx.meter.release(price);
      ctx.meter.record({ area: ep.area, method: ep.method, path, status: 0, euro: 0, ms: Date.now() - started, source: 'upstream' });
      throw ue;
    }
    const paid = (answer.status >= 200 && answer.status < 300) || answer.status === 302;
    if (!paid) ctx.meter.release(price);
    ctx.meter.record({ area: ep.area, method: ep.method, path, status: answer.status, euro: paid ? price : 0, ms: Date.now() - started, source: 'upstream' });
    return answer;
  }

  /** Runs `fn`, again on retryable failures (`retries` times at most), with back-off and `Retry-After`. */
  private async withRetries<T>(retries: number, fn: () => Promise<T>): Promise<T> {
    for (let i = 0; ; i++) {
      try {
        return await fn();
      } catch (err) {
        if (!(err instanceof UpstreamError) || !err.retryable || i >= retries || this.closing.signal.aborted) throw err;
        if (err.retryAfter !== null && err.retryAfter > this.config.maxRetryAfterSeconds) throw err;
        const backoff = this.config.retryBaseMs * 2 ** i * (0.75 + Math.random() * 0.5);
        await sleep(Math.max(backoff, (err.retryAfter ?? 0) * 1000), this.closing.signal);
      }
    }
  }

  /**
   * The call with retries (GET only) and decoding; a 302 of a slow endpoint continues with the slow
   * flow. `pendingKey` (the cache key) remembers a dataset still pending upstream, so that a later
   * call resumes polling it instead of buying it again.
   */
  private async fetchDecoded(ctx: CallContext, ep: Endpoint, path: string, qs: string, body: unknown, pendingKey?: string): Promise<unknown> {
    if (pendingKey && ep.slow) {
      const resumed = this.pending.get(pendingKey);
      if (resumed && resumed.expires > Date.now()) return this.followSlow(ctx, ep, path, resumed.id, 0, pendingKey);
      this.pending.delete(pendingKey);
    }
    const retries = ep.method === 'GET' ? this.config.maxRetries : 0;
    const outcome = await this.withRetries(retries, async (): Promise<{ slow: Answer } | { data: unknown }> => {
      const answer = await this.attempt(ctx, ep, path, qs, body);
      if (answer.status === 302 && ep.slow) return { slow: answer };
      const decoded = decodeEnvelope(ep.area, endpointOf(path), answer);
      return { data: ep.decode === 'raw' ? decoded.body : decoded.data };
    });
    if ('data' in outcome) return outcome.data;
    // Paid: from here on the original GET is never repeated, only the (free) polls are.
    const pendingId = slowRequestId(outcome.slow);
    if (!pendingId) throw new UpstreamError('decode', '302 without a request id', ep.area, endpointOf(path), 302);
    return this.followSlow(ctx, ep, path, pendingId, outcome.slow.retryAfter, pendingKey);
  }

  /**
   * 302 + `Location` + `Retry-After` with a PENDING body: poll `IT-check_id/{id}` on our own base URL
   * (the token never goes to a host taken from a response) until the dataset arrives or the budget
   * ends; each poll is retried on its own. A dataset still pending is remembered for resumption.
   */
  private async followSlow(ctx: CallContext, ep: Endpoint, path: string, pendingId: string, firstRetryAfter: number | null, pendingKey?: string): Promise<unknown> {
    const check: Endpoint = { area: ep.area, method: 'GET', path: '/IT-check_id/{id}', timeoutMs: ep.timeoutMs };
    const checkPath = fillPath(check.path, { id: pendingId });
    const deadline = Date.now() + this.config.slowBudgetMs;
    let retryAfter = firstRetryAfter;
    for (;;) {
      const wait = Math.min(this.config.pollMaxMs, Math.max(this.config.pollMinMs, (retryAfter ?? 1) * 1000));
      if (Date.now() + wait > deadline) {
        if (pendingKey) this.pending.set(pendingKey, { id: pendingId, expires: Date.now() + PENDING_RESUME_MS });
        throw new UpstreamError('pending', `dataset ${pendingId} still pending`, ep.area, endpointOf(path), 302, null, retryAfter ?? 1);
      }
      await sleep(wait, this.closing.signal);
      const answer = await this.withRetries(this.config.maxRetries, async () => {
        const a = await this.attempt(ctx, check, checkPath, '', undefined);
        return { answer: a, decoded: decodeEnvelope(ep.area, 'IT-check_id', a) };
      });
      if (!isPending(answer.decoded.data)) {
        if (pendingKey) this.pending.delete(pendingKey);
        return answer.decoded.data;
      }
      retryAfter = answer.answer.retryAfter;
    }
  }
}

const PENDING_STATES = new Set(['PENDING', 'IN_PROGRESS', 'RUNNING']);

function isPending(data: unknown): boolean {
  if (typeof data !== 'object' || data === null) return false;
  const state = (data as { state?: unknown }).state;
  return typeof state === 'string' && PENDING_STATES.has(state.toUpperCase()) && Object.keys(data).length <= 3;
}

/** The pending request id, from the body or else from the `Location` path. */
function slowRequestId(answer: Answer): string | null {
  try {
    const body = JSON.parse(answer.text) as { data?: { id?: unknown } };
    if (typeof body.data?.id === 'string') return body.data.id;
  } catch {
    /* fall through to Location */
  }
  const m = answer.location?.match(/IT-check_id\/([^/?#]+)/);
  return m?.[1] ? decodeURIComponent(m[1]) : null;
}
