/**
 * Buying a slow company dataset (IT-full, IT-aml, IT-marketing, IT-stakeholders), by the flow that
 * answers first for what the vendor does (`COMPANY_SLOW_PURCHASE`):
 *
 * - `get` (the default): the GET. The vendor holds it until the dataset is ready, up to 30 s, so a
 *   dataset ready within that comes in the GET's own answer: one round trip after it is ready, one
 *   paid call, no callback hop and no poll. Past 30 s the vendor answers 302 → `IT-check_id/{id}`:
 *   the dataset is bought, and the upstream client records the id in the pending store (another
 *   replica, or this one after a restart, resumes it; nothing is bought twice) and polls it (free)
 *   at the vendor's `Retry-After`. The GET's own timeout is above the vendor's wait (35 s,
 *   `upstream.ts`), so the layer does not give up before the 302, and a slow GET sent and left
 *   unanswered is never sent again (it may have bought the dataset).
 * - `callback`: the POST variant with the layer's signed callback, described below. It saves the
 *   poll granularity and the held connection for datasets that take longer than the vendor's wait,
 *   and costs a second hop (the delivery) for every other one.
 *
 * Measured with `bench/slow-purchase.ts` (the emulator prepares a dataset in the same time whichever
 * flow buys it): see docs/company.md ("Slow datasets: the GET first"). The GET wins wherever the dataset is
 * ready within the vendor's wait, which is why it is the default; `poll` is the older name of `get`.
 *
 * The POST + callback flow: `POST /<tier>/{id}` with the layer's signed callback
 * (`<PUBLIC_URL>/callbacks/company/datasets/<token>`, through the gateway) answers PENDING at once,
 * and the upstream POSTs the dataset to the callback when it is ready. Polling `IT-check_id/{id}` is
 * the fallback when the callback is late (`COMPANY_SLOW_CALLBACK_WAIT_MS`, default 30 s) or lost.
 *
 * - The purchase is charged once and never made twice by the layer, across the replicas sharing
 *   the stores (Redis): the upstream client's `buySlow` orders it under the GET's in-flight lease
 *   after re-checking the cache and the pending store, marks it pending before the POST is sent
 *   (an unknown outcome — timeout, 502/504 — stays marked, so a retry waits for the callback
 *   instead of paying again), keeps the mark as long as the callback URL lives (24 h) until the
 *   dataset is cached or a final IT-check_id answer or an invalidation clears it; concurrent reads
 *   join it (in process, and through the lease on replicas). An immediate answer is cached only when
 *   it passes the delivery's check (it names the company); a request's state is followed by id.
 * - A waiter learns of a callback delivered to another replica from the shared cache (checked
 *   while it waits), not after the whole wait.
 * - The dataset is cached under the GET's key (`Upstream.remember`, for the tenant that bought it),
 *   so later reads are cache hits, whichever replica the callback reached; only while its purchase
 *   is still marked pending (a delivery after a monitor check dropped it is not kept).
 * - A callback URL is signed (purpose `company-dataset`), names the tenant, tier and company, and is
 *   accepted once (the replay guard, shared on Redis). Only the upstream and the layer know it
 *   (HTTPS); a delivery must also name the company asked for. The body is trusted beyond that (a
 *   re-read would be the IT-check_id poll the callback saves).
 *
 * The loader calls `buyCompanyData` in place of `ctx.upstream.call` for a company endpoint: fast
 * endpoints, the `get` mode and a layer without a public URL go straight to the upstream client.
 */
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { SubgraphContext } from '../runtime/context.ts';
import type { ReplayGuard, Signer } from '../../platform/signing.ts';
import { refuseTooLarge, sendJson } from '../../platform/http.ts';
import { BodyTooLarge, readBody, safeDecode } from '../runtime/tracking/ingress.ts';
import { isObj } from '../../contract/values.ts';
import { CostMeter } from '../upstream/cost.ts';
import type { Endpoint } from '../upstream/endpoint.ts';
import type { CallOptions, Upstream } from '../upstream/upstream.ts';
import { COMPANY_ENDPOINTS } from './upstream.ts';
import { log } from '../../platform/log.ts';
import { settingsOf, type SettingsSource } from '../../platform/settings.ts';

/** `get`: the GET (302 → IT-check_id polls past the vendor's wait); `callback`: POST + callback. */
export type SlowPurchaseMode = 'get' | 'callback';

const PURPOSE = 'company-dataset';
/** A dataset callback URL outlives the longest wait of the upstream (its retries included). */
const CALLBACK_TTL_S = 24 * 3600;
/** Retries asked of the upstream for its delivery to the layer (the vendor's maximum). */
const UPSTREAM_RETRIES = 5;

/** The slow tiers, by their path's first segment (`IT-full`). */
const SLOW_TIERS: ReadonlyMap<string, Endpoint> = new Map(
  Object.values<Endpoint>(COMPANY_ENDPOINTS)
    .filter((ep) => ep.slow === true)
    .map((ep) => [ep.path.split('/')[1] ?? '', ep]),
);

/**
 * The asynchronous orders of the slow tiers (`POST /<tier>/{id}` with a callback), by tier: the
 * endpoints this module calls besides the company table's (the managed token's scopes are read
 * from here too, `service-token.ts`).
 */
export const SLOW_ORDERS: ReadonlyMap<string, Endpoint> = new Map(
  [...SLOW_TIERS].map(([tier, ep]) => [tier, { area: ep.area, method: 'POST', path: ep.path, ttl: 0, timeoutMs: 20_000 } satisfies Endpoint]),
);

interface Waiter {
  resolve(data: unknown): void;
}

interface TokenClaims {
  /** Nonce (single use). */
  n: string;
  /** Tenant that bought it. */
  t: string;
  /** Tier (`IT-full`). */
  e: string;
  /** The company code it was bought for. */
  i: string;
}

const encode = (c: TokenClaims): string => Buffer.from(JSON.stringify(c), 'utf8').toString('base64url');

function decode(payload: string): TokenClaims | null {
  try {
    const v = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as unknown;
    if (!isObj(v) || typeof v.n !== 'string' || typeof v.t !== 'string' || typeof v.e !== 'string' || typeof v.i !== 'string') return null;
    return { n: v.n, t: v.t, e: v.e, i: v.i };
  } catch {
    return null;
  }
}

/** The dataset a delivery carries: `{data: dataset}` (or the dataset itself). */
function datasetOf(body: unknown): unknown {
  return isObj(body) && isObj(body.data) ? body.data : body;
}

/** Whether a dataset is about the company asked for (its code appears among its values). */
function namesCompany(dataset: unknown, code: string): boolean {
  return isObj(dataset) && JSON.stringify(dataset).toUpperCase().includes(code.toUpperCase());
}

/** A request's state (the vendor's `Request`: `{state, id, …}`), not a dataset. */
const isRequestState = (data: unknown): boolean => isObj(data) && typeof data.id === 'string' && typeof data.state === 'string' && Object.keys(data).length <= 4;

export interface SlowPurchaseOptions {
  signer: () => Signer;
  replay: ReplayGuard;
  /** The gateway's public URL ('' when unknown). */
  publicUrl: () => string;
  env: SettingsSource;
}

export class SlowPurchases {
  readonly mode: SlowPurchaseMode;
  /** How long the callback is awaited before polling IT-check_id (ms). */
  readonly callbackWaitMs: number;
  private readonly waiters = new Map<string, Waiter>();

  constructor(private readonly opts: SlowPurchaseOptions) {
    const env = settingsOf(opts.env);
    // `poll` is the older name of `get` (the same flow; `platform/settings.ts` maps it).
    this.mode = env.COMPANY_SLOW_PURCHASE;
    // Below an hour (`platform/settings.ts` bounds it), well inside the callback URL's life: the
    // purchase stays marked pending while its callback URL lives, and a wait beyond it would buy again.
    this.callbackWaitMs = env.COMPANY_SLOW_CALLBACK_WAIT_MS;
  }

  /**
   * A company endpoint's data: a slow tier by POST + callback when it applies (through
   * `Upstream.buySlow`: cache, joining, the shared lease and the pending mark are the upstream
   * client's), else as the upstream client buys it.
   */
  async buy<T>(ctx: SubgraphContext, ep: Endpoint, opts: CallOptions): Promise<T> {
    const base = this.opts.publicUrl().replace(/\/+$/, '');
    const tier = ep.path.split('/')[1] ?? '';
    const code = opts.params?.id;
    if (this.mode !== 'callback' || !base || !ep.slow || !SLOW_TIERS.has(tier) || !code) return ctx.upstream.call<T>(ctx, ep, opts);
    const nonce = randomBytes(12).toString('base64url');
    let arrived!: (data: unknown) => void;
    const delivered = new Promise<unknown>((resolve) => (arrived = resolve));
    this.waiters.set(nonce, { resolve: arrived });
    try {
      return await ctx.upstream.buySlow<T>(ctx, ep, opts, {
        order: () => {
          const token = this.opts.signer().sign(PURPOSE, encode({ n: nonce, t: ctx.auth.tenant, e: tier, i: code }), CALLBACK_TTL_S);
          const post = SLOW_ORDERS.get(tier)!;
          const callback = { url: `${base}/callbacks/company/datasets/${token}`, method: 'JSON', field: 'data', headers: {}, retry: UPSTREAM_RETRIES };
          // Paid, sent once (the client never retries a POST): a lost answer is the caller's error (atRisk).
          return ctx.upstream.call<unknown>(ctx, post, { params: opts.params, body: { callback } });
        },
        // The same check as a delivery's: an answer that does not name the company is a request's state.
        isDataset: (data) => !isRequestState(data) && namesCompany(datasetOf(data), code),
        tag: nonce,
        delivered,
        waitMs: this.callbackWaitMs,
        markMs: CALLBACK_TTL_S * 1000,
      });
    } finally {
      this.waiters.delete(nonce);
    }
  }

  /** `POST /callbacks/datasets/<token>` (under the subgraph's `/company`). */
  async http(req: IncomingMessage, res: ServerResponse, rest: string, upstream: Upstream | null): Promise<void> {
    const refuse = (status: number, error: string): void => {
      if (!req.readableEnded) req.resume();
      sendJson(res, status, { error });
    };
    if (req.method !== 'POST') return refuse(405, 'method not allowed');
    const token = safeDecode(rest.split('/')[0] ?? '');
    const verified = token === null ? null : this.opts.signer().verify(PURPOSE, token);
    const claims = verified?.ok ? decode(verified.payload) : null;
    const ep = claims ? SLOW_TIERS.get(claims.e) : undefined;
    if (!verified?.ok || !claims || !ep) return refuse(403, 'forbidden');
    let raw: Buffer;
    try {
      raw = await readBody(req);
    } catch (err) {
      if (err instanceof BodyTooLarge) {
        refuseTooLarge(req, res);
        return;
      }
      throw err;
    }
    let body: unknown;
    try {
      const text = raw.toString('utf8');
      body = /application\/x-www-form-urlencoded/i.test(String(req.headers['content-type'] ?? ''))
        ? (JSON.parse(new URLSearchParams(text).get('data') ?? 'null') as unknown)
        : (JSON.parse(text) as unknown);
    } catch {
      return refuse(400, 'no dataset in the body');
    }
    const dataset = datasetOf(body);
    if (!namesCompany(dataset, claims.i)) return refuse(400, 'no dataset of the company asked for in the body');
    // Once per URL: a second delivery is a replay.
    if (!(await this.opts.replay.accept(claims.n, 'dataset', verified.expiresAt))) return refuse(403, 'forbidden');
    if (upstream) {
      const ctx = { auth: { token: '', tenant: claims.t }, meter: new CostMeter() };
      // Kept only while its purchase is still marked pending: not after a monitor check dropped it.
      await upstream.remember(ctx, ep, { params: { id: claims.i } }, dataset, claims.n).catch((err: unknown) => log.warn({ area: 'company', err }, 'dataset not cached'));
    }
    this.waiters.get(claims.n)?.resolve(dataset);
    sendJson(res, 200, { ok: true });
  }
}

/** The slow-purchase service of each upstream client (one per started company subgraph). */
const registry = new WeakMap<Upstream, SlowPurchases>();

/** Makes `purchases` serve the reads made through `upstream` (at subgraph start); returns the undo. */
export function attachSlowPurchases(upstream: Upstream, purchases: SlowPurchases): () => void {
  registry.set(upstream, purchases);
  return () => {
    if (registry.get(upstream) === purchases) registry.delete(upstream);
  };
}

/**
 * What the company loader calls in place of `ctx.upstream.call` for a company endpoint: a slow tier
 * by POST + callback in the `callback` mode when the layer can be called back, anything else (the
 * `get` mode's GET included) as the upstream client buys it.
 */
export function buyCompanyData<T = unknown>(ctx: SubgraphContext, ep: Endpoint, opts: CallOptions = {}): Promise<T> {
  const purchases = registry.get(ctx.upstream);
  return purchases && ep.slow ? purchases.buy<T>(ctx, ep, opts) : ctx.upstream.call<T>(ctx, ep, opts);
}
