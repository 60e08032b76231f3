/**
 * The one way to talk to the REST suite: base URL per area, undici keep-alive pool, bearer auth,
 * per-tenant cache and in-flight de-duplication (in process, and across replicas through in-flight
 * markers), request rates held before each attempt, per-endpoint timeouts, retries with back-off
 * and `Retry-After` for idempotent GETs only, the 302 → `IT-check_id` slow-request flow and its
 * variant ordered another way with a delivery awaited (`buySlow`: the POST + callback of slow
 * company datasets, under the same lease and pending marks), envelope decoding into data or
 * `UpstreamError`, and a cost record for every call.
 *
 * Its shared state (cache, markers, pending slow datasets, rate bookings) is given to the
 * constructor: in memory by default, on Redis when built by `upstreamStores` with `REDIS_URL`.
 */
import { setMaxListeners } from 'node:events';
import { AccountGuard } from './account-guard.ts';
import type { GuardStore } from './guard-store.ts';
import { Agent, request, errors as undiciErrors } from 'undici';
import type { CallContext, CallOptions, Download, QueryValue, SlowVariant, Upstream } from './upstream.ts';
import { InFlight, MemoryCacheStore, MemoryInFlightMarkers, MemoryPendingStore, type CacheStore, type InFlightMarkers, type PendingStore } from './cache.ts';
import { upstreamPath, type UpstreamConfig } from './config.ts';
import { CostLimitError, CostMeter } from './cost.ts';
import { decodeEnvelope, parseRetryAfter, type RawAnswer } from './envelope.ts';
import { fillPath, shownPath, type Endpoint } from './endpoint.ts';
import type { FreeTierCounter } from './cost.ts';
import type { CostLedger } from './ledger.ts';
import { tenantOf } from './tenant.ts';
import { mayHaveBeenCarriedOut, UpstreamError } from './errors.ts';
import { MemoryRateLimitStore, RateLimitedError, RateLimiter } from './rate-limits.ts';
import { sleep } from './sleep.ts';
import { announceChange } from '../../platform/changes.ts';
import { endpointOf, periodOf, priceOf } from '../../contract/prices.ts';
import { log } from '../../platform/log.ts';
import { chargesOf, newUnknownCallId, Settler, type SettlementStore, type WalletCharge, type WalletHistory } from './settlement.ts';

export type { CallContext, CallOptions, Download, QueryValue, SlowVariant } from './upstream.ts';

/** What a call that is not a GET sends beyond its URL (see `CallOptions`). */
interface Payload {
  json?: unknown;
  raw?: CallOptions['raw'];
  headers?: CallOptions['headers'];
  price?: number;
  surcharge?: CallOptions['surcharge'];
}

interface Answer extends RawAnswer {
  location: string | null;
  /** Euro at risk when the answer does not say whether the call was carried out (502/504 on a POST). */
  atRisk?: number;
}

/** How long a dataset the upstream is still preparing can be resumed by id instead of bought again. */
const PENDING_RESUME_MS = 10 * 60_000;
/**
 * The pending mark of a slow dataset ordered another way (`buySlow`) whose order has no answer yet,
 * or never got one (timeout, 502/504): paid perhaps, its request id unknown. A read waits for its
 * delivery instead of buying it again.
 */
const ORDERED = '?ordered';
/**
 * The pending mark of a slow dataset's GET sent and not answered yet (set before sending, cleared
 * on a definite answer): kept after a no-answer (timeout, reset, 502/504), when the GET may have
 * bought the dataset, so that no process buys it again while it stands (`PENDING_RESUME_MS`).
 */
const SENT = '?sent';
/**
 * A sent mark names the unknown call it would be kept as (`?sent <call id>`): settling that call
 * clears the mark only while it is still that one, never a newer purchase's.
 */
interface SentMark {
  key: string;
  callId: string;
}
/** A pending mark of an order (`buySlow`) names the order's tag beside the request id: `<id> <tag>`. */
const markOf = (id: string, tag: string): string => `${id} ${tag}`;
const idOfMark = (mark: string): string => mark.split(' ')[0] ?? mark;
const tagOfMark = (mark: string): string | null => mark.split(' ')[1] ?? null;
/** How often a read waiting for a delivery looks at the shared cache (ms, at least). */
const DELIVERY_CHECK_MS = 100;

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

/** The shared state of an `UpstreamClient`; each defaults to a store of its own in memory. */
export interface UpstreamClientStores {
  /** Answers by tenant, endpoint, path and query. @default MemoryCacheStore(config.cacheMaxEntries) */
  cache?: CacheStore;
  /** Identical calls in flight across replicas (or clients sharing the store). @default MemoryInFlightMarkers */
  markers?: InFlightMarkers;
  /** Slow datasets paid for and still pending upstream. @default MemoryPendingStore */
  pending?: PendingStore;
  /** Request rates. @default a RateLimiter over a MemoryRateLimitStore with config.rateLimits */
  limiter?: RateLimiter;
  /**
   * The shared cost ledger: the free tiers of the account's own calls (HTTP Basic: account reads,
   * the precheck's reads, token mints) are counted on it under the account's tenant, whichever
   * meter (an operation's, or the layer's own) makes them. @default counted on the operation's ledger only
   */
  ledger?: CostLedger;
  /** The precheck guard's knowledge of an account (by its tenant), shared by replicas. @default one process's memory */
  guard?: (account: string) => GuardStore;
  /**
   * Paid calls whose outcome is unknown, kept to be settled later from the account's wallet history
   * (`settlement.ts`). @default none kept (nothing is settled)
   */
  settlements?: SettlementStore;
  /** The clock of the settler. @default Date.now */
  clock?: () => number;
}

/** The account's wallet history (authorization area, HTTP Basic). */
const WALLET_TRANSACTIONS: Endpoint = { area: 'oauth', method: 'GET', path: '/wallet/transactions', auth: 'basic' };
/** Pages of the wallet history read per settlement pass, at most. */
const MAX_HISTORY_PAGES = 50;

const isCacheStore = (s: UpstreamClientStores | CacheStore): s is CacheStore => typeof (s as Partial<CacheStore>).get === 'function';

/** What the in-process promise of a GET yields: the value, and who bought it. */
interface Shared {
  value: unknown;
  /**
   * `self`: bought by this call. `dedup`: by another replica's identical call, waited for. `cache`:
   * found in the cache once the lead was taken (another replica had just finished).
   */
  via: 'self' | 'dedup' | 'cache';
}

/** The cache "tenant" of answers every account gets alike (`Endpoint.publicData`). */
const PUBLIC_TENANT = '*public*';

export class UpstreamClient implements Upstream {
  private readonly agent: Agent;
  /** Scope and wallet pre-checks (`OPENAPI_PRECHECK=on` with account credentials), else null. */
  readonly guard: AccountGuard | null;
  private readonly inflight = new InFlight();
  /** Aborted by `close()`: ends waits, polls and requests in flight. */
  private readonly closing = new AbortController();
  private readonly cache: CacheStore;
  private readonly markers: InFlightMarkers;
  /** Slow datasets paid for and still pending upstream, by cache key: resumed, never bought twice. */
  private readonly pending: PendingStore;
  private readonly limiter: RateLimiter;
  /** Where the account's own calls (HTTP Basic) count against their free tiers: the account's tenant. */
  private readonly accountFreeTiers: FreeTierCounter | null;
  /** Where unknown outcomes are kept for settlement, and paid calls counted; null: not kept. */
  private readonly settlements: SettlementStore | null;
  /** Settles unknown outcomes from the account's wallet history (`settlement.ts`); null without a store. */
  readonly settler: Settler | null;

  /**
   * @param stores the shared state (see `upstreamStores` in `stores.ts`); a bare `CacheStore` is
   * still accepted as the cache.
   */
  constructor(
    readonly config: UpstreamConfig,
    stores: UpstreamClientStores | CacheStore = {},
  ) {
    const s: UpstreamClientStores = isCacheStore(stores) ? { cache: stores } : stores;
    // Every request, wait and poll in flight listens to `closing` (and removes its listener when it
    // ends): as many listeners as calls at once, which is no leak; Node's warning is kept for a real one.
    setMaxListeners(10_000, this.closing.signal);
    this.cache = s.cache ?? new MemoryCacheStore(config.cacheMaxEntries);
    this.markers = s.markers ?? new MemoryInFlightMarkers();
    this.pending = s.pending ?? new MemoryPendingStore(config.cacheMaxEntries);
    this.limiter = s.limiter ?? new RateLimiter(new MemoryRateLimitStore(), config.rateLimits, config.rateMaxWaitMs);
    const email = config.accountCredentials?.email;
    this.guard = config.precheck && email ? new AccountGuard(this, config.env, s.guard ? { store: s.guard(tenantOf(`account:${email.toLowerCase()}`)) } : {}) : null;
    this.accountFreeTiers = s.ledger && email ? { ledger: s.ledger, tenant: tenantOf(`account:${email.toLowerCase()}`) } : null;
    this.settlements = s.settlements ?? null;
    this.settler = s.settlements
      ? new Settler(s.settlements, email ? this.walletHistory(tenantOf(`account:${email.toLowerCase()}`)) : null, { lateMs: config.settleLateMs, now: s.clock })
      : null;
    // A slow GET settled as never charged bought nothing: its sent mark goes, the next read may buy.
    // A call settled as never charged spent nothing: the day's reservation it held goes too (the
    // budget and `spending` then count what the wallet was charged), if it is still the same day.
    const ledger = s.ledger ?? null;
    const now = s.clock ?? Date.now;
    this.settler?.onSettled(async (call) => {
      if (call.state !== 'not_charged') return;
      if (call.pendingKey) await this.clearSent(call.pendingKey, call.id);
      if (ledger && periodOf('day', call.sentAt) === periodOf('day', now())) await ledger.release({ operationId: call.operationId, tenant: call.tenant }, call.price, call.area);
    });
    this.agent = new Agent({
      keepAliveTimeout: 30_000,
      keepAliveMaxTimeout: 120_000,
      connections: 128,
      pipelining: 1,
      connect: { timeout: config.forcedTimeoutMs ?? config.defaultTimeoutMs },
    });
  }

  /** Calls an endpoint and returns its decoded `data` (the whole JSON body for `decode: 'raw'`). */
  async call<T = unknown>(ctx: CallContext, ep: Endpoint, opts: CallOptions = {}): Promise<T> {
    return this.callVia<T>(ctx, ep, opts, undefined);
  }

  /**
   * A slow GET's answer bought, when it must be bought, by `variant` (the POST + callback variant)
   * instead of the GET: see `Upstream.buySlow`. Anything but a cached slow GET is a plain `call`.
   */
  async buySlow<T = unknown>(ctx: CallContext, ep: Endpoint, opts: CallOptions, variant: SlowVariant): Promise<T> {
    if (ep.method !== 'GET' || !ep.slow || (ep.ttl ?? 0) <= 0 || opts.price !== undefined || opts.headers !== undefined) return this.call<T>(ctx, ep, opts);
    return this.callVia<T>(ctx, ep, opts, variant);
  }

  private async callVia<T>(ctx: CallContext, ep: Endpoint, opts: CallOptions, variant: SlowVariant | undefined): Promise<T> {
    const path = fillPath(ep.path, opts.params);
    const qs = queryString(opts.query);
    this.requireToken(ctx, ep, path);
    if (ep.method !== 'GET')
      return (await this.fetchDecoded(ctx, ep, path, qs, { json: opts.body, raw: opts.raw, headers: opts.headers, price: opts.price, surcharge: opts.surcharge })) as T;

    // A GET with its own price (a paid change read by GET, e.g. a PEC renewal) or its own headers
    // (credentials): never cached, never joined with another call, never retried when priced.
    if (opts.price !== undefined || opts.headers !== undefined) return (await this.fetchDecoded(ctx, ep, path, qs, { headers: opts.headers, price: opts.price })) as T;

    const key = this.cacheKey(ctx, ep, path, qs);
    const ttl = ep.ttl ?? 0;
    const cached = ttl > 0 ? await this.cache.get(key) : undefined;
    if (cached?.fresh) {
      ctx.meter.record(
        { area: ep.area, method: ep.method, path: shownPath(ep, path), status: isNotFoundMark(cached.value) ? cached.value.notFound.status : 200, euro: 0, ms: 0, source: 'cache' },
        ep.path,
      );
      return answerOf<T>(cached.value, ep);
    }
    // One promise per key in this process; across replicas, one leader per key (`fetchShared`).
    const { promise, joined } = this.inflight.run(key, () => this.fetchShared(ctx, ep, path, qs, key, ttl, variant));
    try {
      let value: unknown;
      try {
        const out = await promise;
        value = out.value;
        if (joined || out.via !== 'self') {
          const source = joined || out.via === 'dedup' ? 'dedup' : 'cache';
          ctx.meter.record(
            { area: ep.area, method: ep.method, path: shownPath(ep, path), status: isNotFoundMark(value) ? value.notFound.status : 200, euro: 0, ms: 0, source },
            ep.path,
          );
        }
      } catch (err) {
        // The call this one joined was refused by the other operation's budget: try on this one's.
        if (joined && err instanceof CostLimitError) return this.callVia<T>(ctx, ep, opts, variant);
        if (joined)
          ctx.meter.record(
            { area: ep.area, method: ep.method, path: shownPath(ep, path), status: err instanceof UpstreamError ? err.status : 0, euro: 0, ms: 0, source: 'dedup' },
            ep.path,
          );
        throw err;
      }
      return answerOf<T>(value, ep);
    } catch (err) {
      // The upstream failed and an expired copy of the same data for the same tenant is at hand.
      if (cached && !isNotFoundMark(cached.value) && isOutage(err) && cached.staleForMs <= this.config.maxStaleSeconds * 1000) {
        ctx.meter.record({ area: ep.area, method: ep.method, path: shownPath(ep, path), status: 200, euro: 0, ms: 0, source: 'stale' }, ep.path);
        return cached.value as T;
      }
      throw err;
    }
  }

  /**
   * A GET's answer, bought once across the replicas sharing the markers: the first to take the
   * marker of `key` buys it and writes it to the cache (a "not found" too) before letting go; the
   * others wait for the marker to go and take the answer from the cache (a dedup hit), or,
   * when it went without one (the leader failed, or died and its lease expired), try to lead
   * themselves. The lease lasts the endpoint's timeout and the leader renews it while it works; a
   * follower waits at most as long as the leader's call may take (attempts, rate waits, back-offs,
   * and the slow flow's budget), then goes on alone (a paid slow dataset is then resumed from the
   * pending store, not bought again). Uncached endpoints are joined in process only. With a
   * `variant`, the leader that finds the answer neither cached nor pending orders it that way
   * (`order`), under the same lease: one order across the replicas.
   */
  private async fetchShared(ctx: CallContext, ep: Endpoint, path: string, qs: string, key: string, ttl: number, variant?: SlowVariant): Promise<Shared> {
    if (ttl <= 0) return { value: await this.fetchDecoded(ctx, ep, path, qs, undefined, key), via: 'self' };
    const leaseMs = this.timeoutOf(ep) + 1_000;
    const deadline = Date.now() + this.longestCallMs(ep);
    while (Date.now() < deadline) {
      const lease = await this.markers.acquire(key, leaseMs);
      if (lease) {
        const keepAlive = setInterval(() => void lease.extend().catch(() => undefined), Math.max(50, Math.floor(leaseMs / 3)));
        keepAlive.unref();
        try {
          // Another replica may have finished between this call's cache read and its lease.
          const hit = await this.cache.get(key);
          if (hit?.fresh) return { value: hit.value, via: 'cache' };
          if (variant && !(await this.pending.get(key))) return { value: await this.order(ctx, ep, path, key, ttl, variant), via: 'self' };
          return { value: await this.fetchAndStore(ctx, ep, path, qs, key, ttl), via: 'self' };
        } finally {
          clearInterval(keepAlive);
          await lease.release().catch(() => undefined);
        }
      }
      await this.markers.wait(key, Math.max(0, deadline - Date.now()), this.closing.signal);
      const hit = await this.cache.get(key);
      if (hit?.fresh) return { value: hit.value, via: 'dedup' };
    }
    return { value: await this.fetchAndStore(ctx, ep, path, qs, key, ttl), via: 'self' };
  }

  /** Buys a cached GET's answer and stores it, or stores its "not found" and throws it. */
  private async fetchAndStore(ctx: CallContext, ep: Endpoint, path: string, qs: string, key: string, ttl: number): Promise<unknown> {
    try {
      const data = await this.fetchDecoded(ctx, ep, path, qs, undefined, key);
      // Paid for: a cache that cannot be written (a Redis blip) must not turn the answer into an error.
      await this.cache.set(key, data, ttl, this.config.maxStaleSeconds).catch((err: unknown) => log.warn(`[upstream] answer not cached: ${(err as Error).message}`));
      return data;
    } catch (err) {
      // "Not found" is an answer too: remembered for a short while, so it is not bought again.
      if (this.config.notFoundTtlSeconds > 0 && err instanceof UpstreamError && err.graphqlCode === 'UPSTREAM_NOT_FOUND') {
        await this.cache.set(key, notFoundMark(err), Math.min(ttl, this.config.notFoundTtlSeconds)).catch(() => undefined);
      }
      throw err;
    }
  }

  /**
   * The longest one call of `ep` may take: every attempt with its timeout and rate wait, the
   * back-offs between them, and the slow flow's budget for a slow endpoint.
   */
  private longestCallMs(ep: Endpoint): number {
    const c = this.config;
    let ms = (c.maxRetries + 1) * (this.timeoutOf(ep) + c.rateMaxWaitMs);
    for (let i = 0; i < c.maxRetries; i++) ms += Math.max(c.retryBaseMs * 2 ** i * 1.25, c.maxRetryAfterSeconds * 1000);
    return ms + (ep.slow ? c.slowBudgetMs : 0) + 1_000;
  }

  /**
   * Whether a call would be answered by the cache right now (same tenant, endpoint, path and
   * query), without calling or metering anything: loaders use it to prefer data already paid for.
   */
  async isCached(ctx: CallContext, ep: Endpoint, opts: CallOptions = {}): Promise<boolean> {
    if (ep.method !== 'GET' || (ep.ttl ?? 0) <= 0) return false;
    const hit = await this.cache.get(this.cacheKey(ctx, ep, fillPath(ep.path, opts.params), queryString(opts.query)));
    return hit?.fresh === true && !isNotFoundMark(hit.value);
  }

  /** Drops the tenant's cached answer of one GET (see `Upstream.forget`). */
  async forget(ctx: CallContext, ep: Endpoint, opts: CallOptions = {}): Promise<void> {
    if (ep.method !== 'GET') return;
    const key = this.cacheKey(ctx, ep, fillPath(ep.path, opts.params), queryString(opts.query));
    await this.cache.delete(key);
    // A request still pending upstream would deliver the data as it was: bought again too.
    if (ep.slow) await this.pending.delete(key);
  }

  /** Caches data bought another way as the tenant's answer of one GET (see `Upstream.remember`). */
  async remember(ctx: CallContext, ep: Endpoint, opts: CallOptions, data: unknown, order?: string): Promise<boolean> {
    const ttl = ep.ttl ?? 0;
    if (ep.method !== 'GET' || ttl <= 0) return false;
    const key = this.cacheKey(ctx, ep, fillPath(ep.path, opts.params), queryString(opts.query));
    if (order !== undefined) {
      // The delivery of an order no longer marked (dropped by `forget`, superseded, or settled): not kept.
      const mark = await this.pending.get(key);
      if (!mark || tagOfMark(mark.id) !== order) return false;
    }
    await this.cache.set(key, data, ttl, this.config.maxStaleSeconds);
    if (ep.slow) await this.pending.delete(key);
    return true;
  }

  private cacheKey(ctx: CallContext, ep: Endpoint, path: string, qs: string): string {
    return `${ep.publicData ? PUBLIC_TENANT : ctx.auth.tenant}|${ep.area}|${ep.decode ?? 'envelope'}|${path}${qs}`;
  }

  /** Streams a document (PDF, XML); an error answer is decoded into an `UpstreamError`. */
  async download(ctx: CallContext, ep: Endpoint, opts: CallOptions = {}): Promise<Download> {
    const path = fillPath(ep.path, opts.params);
    const qs = queryString(opts.query);
    this.requireToken(ctx, ep, path);
    await this.limiter.take({ area: ep.area, method: ep.method, path, tenant: ctx.auth.tenant }, this.closing.signal);
    const price = priceOf(ep.area, ep.method, path);
    await ctx.meter.reserve(price, `${ep.method} ${endpointOf(path)}`, ep.area);
    const started = Date.now();
    // No overall deadline on a document: it may stream for long; the idle body timeout still holds.
    let res;
    try {
      res = await this.send(ctx, ep, path, qs, undefined, false, false);
    } catch (err) {
      const unknown = price > 0 && mayHaveBeenCarriedOut(err);
      if (unknown && err instanceof UpstreamError) err.atRisk = price;
      else await ctx.meter.release(price, ep.area);
      ctx.meter.record(
        { area: ep.area, method: ep.method, path: shownPath(ep, path), status: 0, euro: 0, ms: Date.now() - started, source: 'upstream', ...(unknown ? { atRisk: price } : {}) },
        ep.path,
      );
      throw err;
    }
    const status = res.statusCode;
    const contentType = String(res.headers['content-type'] ?? 'application/octet-stream');
    const charged = status >= 200 && status < 300;
    if (!charged) await ctx.meter.release(price, ep.area);
    ctx.meter.record({ area: ep.area, method: ep.method, path: shownPath(ep, path), status, euro: charged ? price : 0, ms: Date.now() - started, source: 'upstream' }, ep.path);
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
    this.settler?.stop();
    this.closing.abort(new UpstreamError('network', 'the upstream client is shutting down', 'company', 'close', 0));
    await this.agent.destroy();
  }

  /** Drops every cached answer (all tenants). */
  async clearCache(): Promise<void> {
    await this.cache.clear();
    // Whole answers built on what was cleared go too (the gateway's response cache in this process).
    announceChange({ kind: 'cleared' });
  }

  private requireToken(ctx: CallContext, ep: Endpoint, path: string): void {
    if (ep.auth === 'basic') {
      if (!this.config.accountCredentials) {
        throw new UpstreamError('http', 'no Openapi account credentials: set OPENAPI_EMAIL and OPENAPI_APIKEY', ep.area, endpointOf(path), 401);
      }
      return;
    }
    if (!ctx.auth.token) {
      throw new UpstreamError('http', 'no Openapi token: set OPENAPI_TOKEN or send Authorization: Bearer <token>', ep.area, endpointOf(path), 401);
    }
  }

  private timeoutOf(ep: Endpoint): number {
    const forced = this.config.forcedTimeoutMs;
    // A slow GET is held by the vendor up to its wait (30 s) and paid when it answers: a forced
    // timeout shorter than the endpoint's own would give up on datasets already bought.
    if (ep.slow && ep.method === 'GET' && forced !== null && ep.timeoutMs !== undefined) return Math.max(forced, ep.timeoutMs);
    return forced ?? ep.timeoutMs ?? this.config.defaultTimeoutMs;
  }

  /** One HTTP exchange; network failures and timeouts become `UpstreamError`s. */
  private async send(ctx: CallContext, ep: Endpoint, path: string, qs: string, payload: Payload | undefined, hasBody: boolean, deadline = true) {
    const timeout = this.timeoutOf(ep);
    const account = ep.auth === 'basic' ? this.config.accountCredentials : null;
    const authorization = account ? `Basic ${Buffer.from(`${account.email}:${account.apikey}`).toString('base64')}` : `Bearer ${ctx.auth.token}`;
    const headers: Record<string, string> = { authorization, accept: 'application/json, application/pdf;q=0.9, */*;q=0.5' };
    if (hasBody) headers['content-type'] = payload?.raw ? payload.raw.contentType : 'application/json';
    for (const [name, value] of Object.entries(ep.headers ?? {})) if (name.toLowerCase() !== 'authorization') headers[name.toLowerCase()] = value;
    for (const [name, value] of Object.entries(payload?.headers ?? {})) if (name.toLowerCase() !== 'authorization') headers[name.toLowerCase()] = value;
    const ends = deadline ? this.deadline(timeout) : null;
    try {
      const res = await request(`${this.config.baseUrls[ep.area]}${upstreamPath(this.config, ep.area, path)}${qs}`, {
        dispatcher: this.agent,
        method: ep.method,
        headers,
        body: hasBody ? (payload?.raw ? payload.raw.body : JSON.stringify(payload?.json ?? {})) : undefined,
        headersTimeout: timeout,
        bodyTimeout: timeout,
        signal: ends?.signal ?? this.closing.signal,
      });
      // The body is read under the same deadline; its end lets the deadline go.
      if (ends) res.body.once('close', ends.done);
      return res;
    } catch (err) {
      ends?.done();
      const ue = this.transportError(err, ep, path, timeout);
      ue.neverSent = neverSent(err);
      throw ue;
    }
  }

  /**
   * One exchange's signal: aborted `timeoutMs` from now (a `TimeoutError`, as `AbortSignal.timeout`'s)
   * or when the client closes. Not `AbortSignal.any([AbortSignal.timeout(ms), closing])`: on Node 20
   * that kept every call's signal (~2.4 KB) until its timer fired, and ~0.4 KB more for the client's
   * life, referenced from `closing` (measured: 20,000 calls). `done` frees it at once.
   */
  private deadline(timeoutMs: number): { signal: AbortSignal; done: () => void } {
    const ac = new AbortController();
    const closing = this.closing.signal;
    const onClose = (): void => ac.abort(closing.reason);
    const done = (): void => {
      clearTimeout(timer);
      closing.removeEventListener('abort', onClose);
    };
    const timer = setTimeout(() => {
      done();
      ac.abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError'));
    }, timeoutMs);
    timer.unref();
    if (closing.aborted) onClose();
    else closing.addEventListener('abort', onClose, { once: true });
    return { signal: ac.signal, done };
  }

  /**
   * The account (its tenant) whose wallet pays a call and whose history the layer can read: the
   * account's own calls, a token the account owns (precheck), or the service token with the
   * account's credentials; else null (a caller's own token: its wallet cannot be read).
   */
  private payerOf(ctx: CallContext, ep: Endpoint, byAccount: boolean): string | null {
    const account = this.accountFreeTiers?.tenant ?? (this.config.accountCredentials ? tenantOf(`account:${this.config.accountCredentials.email.toLowerCase()}`) : null);
    if (!account || !this.settlements) return null;
    // The account's own calls, a token it owns, or the layer's managed token (kept under the account's tenant).
    if (byAccount || ep.auth === 'basic' || ctx.auth.tenant === account) return account;
    return this.config.serviceToken !== null && ctx.auth.token === this.config.serviceToken ? account : null;
  }

  /** Keeps a paid call whose outcome is unknown, to be settled later (`settlement.ts`). */
  private async keepUnknown(ctx: CallContext, ep: Endpoint, path: string, price: number, sentAt: number, payer: string | null, sentMark?: SentMark): Promise<void> {
    if (!this.settlements || price <= 0) return;
    await this.settlements
      .add({
        id: sentMark?.callId ?? newUnknownCallId(),
        operationId: ctx.meter.operationId ?? 'unknown',
        tenant: ctx.auth.tenant,
        account: payer,
        area: ep.area,
        method: ep.method,
        path: shownPath(ep, path),
        price,
        sentAt,
        endedAt: Date.now(),
        state: 'open',
        ...(sentMark !== undefined ? { pendingKey: sentMark.key } : {}),
      })
      .catch((err: unknown) => log.warn(`[settlement] unknown outcome not kept: ${(err as Error).message}`));
  }

  /** The account's wallet history, read page by page (newest first) back to `since`. */
  private walletHistory(account: string): WalletHistory {
    return {
      account,
      chargesSince: async (since: number): Promise<WalletCharge[]> => {
        const ctx: CallContext = { auth: { token: '', tenant: account }, meter: new CostMeter() };
        // By id: a charge made while the pages are read shifts them, and one may be read twice.
        const out = new Map<string, WalletCharge>();
        for (let page = 0; page < MAX_HISTORY_PAGES; page++) {
          const items = await this.call<unknown>(ctx, WALLET_TRANSACTIONS, { query: { limit: 100, skip: page * 100 } });
          const list = Array.isArray(items) ? items : [];
          for (const c of chargesOf(list)) if (c.at >= since) out.set(c.id, c);
          const oldest = list.length > 0 ? Date.parse(String((list[list.length - 1] as { createdAt?: unknown }).createdAt)) : NaN;
          if (list.length < 100 || !(oldest >= since)) return [...out.values()];
        }
        // Not read back far enough: counting on part of the history would settle charged calls as not.
        throw new Error(`the wallet history holds more than ${MAX_HISTORY_PAGES * 100} transactions since the oldest call to settle`);
      },
    };
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

  /** One attempt: wait for the rate, send, read, meter. */
  private async attempt(ctx: CallContext, ep: Endpoint, path: string, qs: string, payload: Payload | undefined, sentMark?: SentMark): Promise<Answer> {
    // Held, not hit: queued until the area's rate allows it, or refused here (RATE_LIMITED, never sent).
    await this.limiter.take({ area: ep.area, method: ep.method, path, tenant: ctx.auth.tenant }, this.closing.signal);
    // Inside the endpoint's free tier (counted per tenant on the shared ledger), the call costs nothing.
    // The token's scopes and the wallet, when the account is known (`OPENAPI_PRECHECK`): refused here, never sent.
    await this.guard?.checkScope(ctx, ep, path);
    // The account's own calls count under the account's tenant (the vendor counts per account).
    // So do the calls of a token the account owns (precheck on): free tiers are the account's, not a token's.
    const byAccount = ep.auth === 'basic' || (this.guard !== null && (await this.guard.ownedByAccount(ctx, ep)));
    const claim = await ctx.meter.claimFreeTier(ep.area, ep.method, path, payload?.price ?? priceOf(ep.area, ep.method, path), byAccount ? this.accountFreeTiers : null);
    const listed = claim.price;
    // Covered by an active subscription: its price per request, paid from it, not from the wallet
    // (a charge on top, a custom signature, still due from the wallet); else the wallet's reading.
    const charge = this.guard
      ? await this.guard.charge(ctx, ep, path, listed, payload?.surcharge?.subscribed ?? 0).catch(async (err: unknown) => {
          await claim.giveBack();
          throw err;
        })
      : { price: listed, giveBack: async () => undefined };
    const price = charge.price;
    try {
      await ctx.meter.reserve(price, `${ep.method} ${endpointOf(path)}`, ep.area);
    } catch (err) {
      // Refused before sending (budget): the vendor never counts it, nor takes the subscription's request or the wallet's money.
      await claim.giveBack();
      await charge.giveBack();
      throw err;
    }
    const started = Date.now();
    // The account whose wallet pays this call, when the layer can read it (settlement).
    const payer = this.payerOf(ctx, ep, byAccount);
    let answer: Answer;
    try {
      const res = await this.send(ctx, ep, path, qs, payload, ep.method !== 'GET' && ep.method !== 'DELETE');
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
      if (!(err instanceof UpstreamError)) ue.neverSent = neverSent(err);
      // A request that never left (no connection) cost nothing. One that was sent and got no
      // answer may have been carried out and charged: its reservation stays, and it is reported.
      const unknown = price > 0 && mayHaveBeenCarriedOut(ue);
      if (unknown) ue.atRisk = price;
      else {
        await ctx.meter.release(price, ep.area);
        await charge.giveBack();
      }
      // Never left: no free call used either.
      if (ue.neverSent) await claim.giveBack();
      if (unknown) await this.keepUnknown(ctx, ep, path, price, started, payer, sentMark);
      ctx.meter.record(
        { area: ep.area, method: ep.method, path: shownPath(ep, path), status: 0, euro: 0, ms: Date.now() - started, source: 'upstream', ...(unknown ? { atRisk: price } : {}) },
        ep.path,
      );
      throw ue;
    }
    const paid = (answer.status >= 200 && answer.status < 300) || answer.status === 302;
    // A 502/504 on a call that creates something, or on a slow GET (which buys the dataset it
    // waits for): a proxy lost the service's answer, the price is at risk.
    const lost = !paid && price > 0 && (ep.method !== 'GET' || ep.slow === true) && (answer.status === 502 || answer.status === 504);
    if (!paid && !lost) {
      await ctx.meter.release(price, ep.area);
      await charge.giveBack();
    }
    if (lost) {
      answer.atRisk = price;
      await this.keepUnknown(ctx, ep, path, price, started, payer, sentMark);
    } else if (paid && price > 0 && payer) {
      await this.settlements?.countPaid(payer, ep.area, price, Date.now()).catch((err: unknown) => log.warn(`[settlement] paid call not counted: ${(err as Error).message}`));
    }
    ctx.meter.record(
      {
        area: ep.area,
        method: ep.method,
        path: shownPath(ep, path),
        status: answer.status,
        euro: paid ? price : 0,
        ms: Date.now() - started,
        source: 'upstream',
        ...(lost ? { atRisk: price } : {}),
      },
      ep.path,
    );
    return answer;
  }

  /**
   * Drops the sent mark of `key` (a slow GET's purchase, the unknown call `callId`, settled as never
   * charged), only if it is still that call's mark: a newer purchase's mark stays (atomic).
   */
  private async clearSent(key: string, callId: string): Promise<void> {
    try {
      await this.pending.deleteIf(key, markOf(SENT, callId));
    } catch (err) {
      log.warn(`[settlement] sent mark not cleared: ${(err as Error).message}`);
    }
  }

  /** Runs `fn`, again on retryable failures (`retries` times at most), with back-off and `Retry-After`. */
  private async withRetries<T>(retries: number, fn: () => Promise<T>, retryIf?: (err: UpstreamError) => boolean): Promise<T> {
    for (let i = 0; ; i++) {
      try {
        return await fn();
      } catch (err) {
        if (!(err instanceof UpstreamError) || !err.retryable || i >= retries || this.closing.signal.aborted || (retryIf && !retryIf(err))) throw err;
        // Refused by our own rate limiter after the longest allowed wait: waiting again would pass it.
        if (err instanceof RateLimitedError) throw err;
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
  private async fetchDecoded(ctx: CallContext, ep: Endpoint, path: string, qs: string, payload: Payload | undefined, pendingKey?: string): Promise<unknown> {
    if (pendingKey && ep.slow) {
      const stored = await this.pending.get(pendingKey);
      const resumed = stored ? { id: idOfMark(stored.id) } : undefined;
      if (resumed?.id === SENT) {
        // Sent before (here, by a replica, or before a restart) and not answered: perhaps bought.
        const err = new UpstreamError(
          'pending',
          'this dataset was bought by a GET that got no answer; it is not bought again for now',
          ep.area,
          endpointOf(path),
          0,
          null,
          PENDING_RESUME_MS / 1000,
        );
        err.markedUnknown = true;
        throw err;
      }
      if (resumed?.id === ORDERED) {
        // Ordered another way, no request id known: its delivery, else the id once known.
        const got = await this.awaitOrdered(ep, path, pendingKey);
        if ('value' in got) return got.value;
        if ('id' in got) return this.followSlow(ctx, ep, path, got.id, 0, pendingKey, null);
      } else if (resumed) return this.followSlow(ctx, ep, path, resumed.id, 0, pendingKey, null);
    }
    const retries = ep.method === 'GET' && payload?.price === undefined ? this.config.maxRetries : 0;
    // A slow GET sent and not answered (timeout, reset, 502/504) may have bought the dataset, its
    // request id unknown: sent again, it would be bought twice. Only a sure failure is retried.
    const retryIf = ep.slow ? (err: UpstreamError): boolean => !mayHaveBeenCarriedOut(err) : undefined;
    // A slow GET that buys is marked sent before it leaves: durable, seen by every replica and after
    // a restart; cleared on a definite answer, kept when none came.
    const marked = pendingKey !== undefined && ep.slow === true && ep.method === 'GET' && payload === undefined;
    const sent: SentMark | undefined = marked ? { key: pendingKey, callId: newUnknownCallId() } : undefined;
    if (sent) await this.pending.set(sent.key, markOf(SENT, sent.callId), PENDING_RESUME_MS);
    const outcome = await this.withRetries(
      retries,
      async (): Promise<{ slow: Answer } | { data: unknown }> => {
        const answer = await this.attempt(ctx, ep, path, qs, payload, sent);
        if (answer.status === 302 && ep.slow) return { slow: answer };
        let decoded;
        try {
          decoded = decodeEnvelope(ep.area, endpointOf(path), answer);
        } catch (err) {
          if (err instanceof UpstreamError && answer.atRisk) err.atRisk = answer.atRisk;
          throw err;
        }
        return { data: ep.decode === 'raw' ? decoded.body : decoded.data };
      },
      retryIf,
    ).catch(async (err: unknown) => {
      if (sent && !mayHaveBeenCarriedOut(err)) await this.pending.deleteIf(sent.key, markOf(SENT, sent.callId)).catch(() => undefined);
      throw err;
    });
    if ('data' in outcome) {
      if (sent) await this.pending.deleteIf(sent.key, markOf(SENT, sent.callId)).catch(() => undefined);
      return outcome.data;
    }
    // Paid: from here on the original GET is never repeated, only the (free) polls are.
    const pendingId = slowRequestId(outcome.slow);
    if (!pendingId) throw new UpstreamError('decode', '302 without a request id', ep.area, endpointOf(path), 302);
    // Remembered at once: whatever happens to the polls, the next call resumes it, never buys it again.
    if (pendingKey) await this.pending.set(pendingKey, pendingId, PENDING_RESUME_MS);
    return this.followSlow(ctx, ep, path, pendingId, outcome.slow.retryAfter, pendingKey, PENDING_RESUME_MS);
  }

  /**
   * Orders a slow GET's answer by `variant` (the caller holds the key's lease, and neither the
   * cache nor the pending store has it): marked `ORDERED` before sending, so a retry after an order
   * whose outcome is unknown waits for its delivery instead of paying again; an answer that is the
   * dataset (`variant.isDataset`) is cached; one with a request id is marked pending under it (as
   * long as a delivery may come) unless the delivery came first, then its delivery is awaited for
   * `variant.waitMs` (here, or through the shared cache from a replica) before polling it.
   */
  private async order(ctx: CallContext, ep: Endpoint, path: string, key: string, ttl: number, variant: SlowVariant): Promise<unknown> {
    const markMs = Math.max(variant.markMs, variant.waitMs + this.config.slowBudgetMs);
    await this.pending.set(key, markOf(ORDERED, variant.tag), markMs);
    let answer: unknown;
    try {
      answer = await variant.order();
    } catch (err) {
      // Not carried out: nothing will be delivered. Carried out perhaps (at risk): the mark stays.
      if (!(err instanceof UpstreamError && err.atRisk)) await this.pending.delete(key).catch(() => undefined);
      throw err;
    }
    if (variant.isDataset(answer)) {
      await this.cache.set(key, answer, ttl, this.config.maxStaleSeconds).catch((err: unknown) => log.warn(`[upstream] answer not cached: ${(err as Error).message}`));
      await this.pending.delete(key);
      return answer;
    }
    const id = typeof answer === 'object' && answer !== null && typeof (answer as { id?: unknown }).id === 'string' ? (answer as { id: string }).id : null;
    // Paid, with nothing to follow: the mark stays for a delivery that may still come.
    if (!id) throw new UpstreamError('decode', 'the order answered neither the dataset nor a request id', ep.area, endpointOf(path), 200);
    // The delivery may have come before this answer (it caches, then clears the mark): no mark then.
    const early = await this.cache.get(key);
    if (early?.fresh) return early.value;
    await this.pending.set(key, markOf(id, variant.tag), markMs);
    const late = await this.cache.get(key);
    if (late?.fresh) {
      await this.pending.delete(key);
      return late.value;
    }
    if (isPending(answer)) {
      const got = await this.awaitDelivery(key, variant.waitMs, variant.delivered);
      if (got) return got.value;
    }
    // Late, lost, or ready at once (DONE): polled (free) until it is there.
    const data = await this.followSlow(ctx, ep, path, id, 0, key, null);
    await this.cache.set(key, data, ttl, this.config.maxStaleSeconds).catch((err: unknown) => log.warn(`[upstream] answer not cached: ${(err as Error).message}`));
    return data;
  }

  /**
   * The delivery of an order for `key`: from `delivered` (this process), or found in the shared
   * cache (a replica took it), within `waitMs`; undefined when it did not come in time.
   */
  private async awaitDelivery(key: string, waitMs: number, delivered?: Promise<unknown>): Promise<{ value: unknown } | undefined> {
    let got: { value: unknown } | undefined;
    const arrived = delivered?.then((value) => (got = { value }));
    const deadline = Date.now() + waitMs;
    for (;;) {
      if (got) return got;
      const hit = await this.cache.get(key);
      if (hit?.fresh) return { value: hit.value };
      const left = deadline - Date.now();
      if (left <= 0) return undefined;
      const pause = sleep(Math.min(left, Math.max(DELIVERY_CHECK_MS, this.config.pollMinMs)), this.closing.signal);
      await (arrived ? Promise.race([arrived, pause]) : pause);
    }
  }

  /**
   * A read of a slow dataset ordered another way whose request id is not known (`ORDERED`): waits
   * (the slow budget at most) for its delivery in the shared cache, or for the id once the order
   * answers (then polled), or for the mark to go (the order failed, nothing was bought: `{}`, the
   * read buys it); still unknown at the end, a "still pending" error (nothing bought twice).
   */
  private async awaitOrdered(ep: Endpoint, path: string, key: string): Promise<{ value: unknown } | { id: string } | Record<string, never>> {
    const deadline = Date.now() + this.config.slowBudgetMs;
    for (;;) {
      const hit = await this.cache.get(key);
      if (hit?.fresh) return { value: hit.value };
      const mark = await this.pending.get(key);
      if (!mark) return {};
      if (idOfMark(mark.id) !== ORDERED) return { id: idOfMark(mark.id) };
      const left = deadline - Date.now();
      if (left <= 0) throw new UpstreamError('pending', 'dataset ordered, its delivery still awaited', ep.area, endpointOf(path), 302, null, 1);
      await sleep(Math.min(left, Math.max(DELIVERY_CHECK_MS, this.config.pollMinMs)), this.closing.signal);
    }
  }

  /**
   * 302 + `Location` + `Retry-After` with a PENDING body: poll `IT-check_id/{id}` on our own base URL
   * (the token never goes to a host taken from a response) until the dataset arrives or the budget
   * ends; each poll is retried on its own. A dataset still pending is remembered for resumption.
   */
  private async followSlow(
    ctx: CallContext,
    ep: Endpoint,
    path: string,
    pendingId: string,
    firstRetryAfter: number | null,
    pendingKey: string | undefined,
    markMs: number | null,
  ): Promise<unknown> {
    const check: Endpoint = { area: ep.area, method: 'GET', path: '/IT-check_id/{id}', timeoutMs: ep.timeoutMs };
    const checkPath = fillPath(check.path, { id: pendingId });
    const deadline = Date.now() + this.config.slowBudgetMs;
    let retryAfter = firstRetryAfter;
    for (;;) {
      const wait = Math.min(this.config.pollMaxMs, Math.max(this.config.pollMinMs, (retryAfter ?? 1) * 1000));
      if (Date.now() + wait > deadline) {
        if (pendingKey && markMs !== null) await this.pending.set(pendingKey, pendingId, markMs);
        throw new UpstreamError('pending', `dataset ${pendingId} still pending`, ep.area, endpointOf(path), 302, null, retryAfter ?? 1);
      }
      await sleep(wait, this.closing.signal);
      let answer;
      try {
        answer = await this.withRetries(this.config.maxRetries, async () => {
          const a = await this.attempt(ctx, check, checkPath, '', undefined);
          return { answer: a, decoded: decodeEnvelope(ep.area, 'IT-check_id', a) };
        });
      } catch (err) {
        // The upstream no longer knows the id: nothing left to resume. Any other failure keeps it.
        if (pendingKey && err instanceof UpstreamError && err.graphqlCode === 'UPSTREAM_NOT_FOUND') await this.pending.delete(pendingKey);
        throw err;
      }
      if (!isPending(answer.decoded.data)) {
        if (pendingKey) await this.pending.delete(pendingKey);
        return answer.decoded.data;
      }
      if (pendingKey && markMs !== null) await this.pending.set(pendingKey, pendingId, markMs);
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

/** What the cache keeps of a "not found" answer (the error, to be thrown again). */
interface NotFoundMark {
  notFound: { status: number; upstreamCode: number | null; message: string };
}

const notFoundMark = (err: UpstreamError): NotFoundMark => ({ notFound: { status: err.status, upstreamCode: err.upstreamCode, message: err.message } });

function isNotFoundMark(v: unknown): v is NotFoundMark {
  return typeof v === 'object' && v !== null && 'notFound' in v && Object.keys(v).length === 1;
}

/** A cached value as the caller gets it: the data, or the remembered "not found" thrown again. */
function answerOf<T>(value: unknown, ep: Endpoint): T {
  if (isNotFoundMark(value)) {
    const nf = value.notFound;
    throw new UpstreamError('http', nf.message, ep.area, endpointOf(ep.path), nf.status, nf.upstreamCode);
  }
  return value as T;
}

/** Failures of the service (not answers about the data) that a stale copy may cover. */
function isOutage(err: unknown): boolean {
  if (!(err instanceof UpstreamError)) return false;
  if (err.kind === 'network' || err.kind === 'timeout') return true;
  return err.kind === 'http' && (err.status >= 500 || err.status === 429 || err.status === 408);
}

/** Transport errors that happen before a request is written: the upstream never saw it. */
function neverSent(err: unknown): boolean {
  const code = (err as { code?: string; cause?: { code?: string } }).code ?? (err as { cause?: { code?: string } }).cause?.code;
  return code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'UND_ERR_CONNECT_TIMEOUT' || code === 'EHOSTUNREACH' || code === 'ENETUNREACH';
}
