/**
 * What subgraphs see of the REST suite: the `Upstream` interface (implemented by `UpstreamClient`)
 * and who pays for a call. Subgraphs depend on this, never on the concrete client.
 */
import type { CostMeter } from './cost.ts';
import type { Endpoint } from './endpoint.ts';
import type { UpstreamConfig } from './config.ts';
import type { Settler } from './settlement.ts';
import type { Readable } from 'node:stream';

/** Who pays upstream: the bearer token sent to the REST suite and the tenant derived from it. */
export interface UpstreamAuth {
  /** Bearer token for the REST suite (the service token, or the caller's, passed through). */
  token: string;
  /** Stable, non-reversible id of the token's owner: everything cached or stored is keyed by it. */
  tenant: string;
  /**
   * The layer's own token (a service token, or the fallback when the caller sends none): every such
   * caller shares its tenant, so what the tenant as a whole spent is the operator's to read.
   */
  shared?: boolean;
}

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
  /**
   * A body sent as is instead of JSON (e.g. FatturaPA XML as `application/xml`); wins over `body`.
   * Calls that are not GETs only.
   */
  raw?: { contentType: string; body: string | Buffer };
  /**
   * Request headers of this one call (e.g. a custom signature's credentials): sent, never cached,
   * logged or kept; they never replace `authorization`. A GET with headers is neither cached nor
   * joined with another call (its answer may depend on them: a mailbox's credentials).
   */
  headers?: Readonly<Record<string, string>>;
  /**
   * Euro of this call when the price table's price for its endpoint does not apply (a price that
   * depends on the account, e.g. a configuration beyond the included ones, or on a header, e.g. a
   * custom signature's surcharge, or a renewal priced per year). A priced GET is neither cached,
   * joined nor retried (it changes something upstream). @default the table's price
   */
  price?: number;
  /**
   * The part of `price` that is a charge on top of the endpoint's (a custom signature's): when an
   * active subscription pays the endpoint (account pre-check), the call costs the subscription's
   * price per request plus `surcharge.subscribed`, paid from the wallet. @default none
   */
  surcharge?: { subscribed: number };
}

export interface Download {
  contentType: string;
  /** The upstream's `Content-Disposition`, if any. */
  disposition: string | null;
  length: number | null;
  body: Readable;
}

export interface Upstream {
  readonly config: UpstreamConfig;
  /** Settles money at risk from the account's wallet history (`settlement.ts`); absent or null: nothing is kept to settle. */
  readonly settler?: Settler | null;
  /** Calls an endpoint and returns its decoded `data` (the whole JSON body for `decode: 'raw'`). */
  call<T = unknown>(ctx: CallContext, ep: Endpoint, opts?: CallOptions): Promise<T>;
  /** Whether a call would be answered by the cache right now (nothing called or metered). */
  isCached(ctx: CallContext, ep: Endpoint, opts?: CallOptions): Promise<boolean>;
  /** Streams a document (PDF, XML); an error answer is decoded into an `UpstreamError`. */
  download(ctx: CallContext, ep: Endpoint, opts?: CallOptions): Promise<Download>;
  /** Drops every cached answer (all tenants). */
  clearCache(): Promise<void>;
  /**
   * Drops the caller's (its tenant's) cached answer of one GET, as `call` would key it: the next
   * call buys it again. Other tenants' copies stay.
   */
  forget(ctx: CallContext, ep: Endpoint, opts?: CallOptions): Promise<void>;
  /**
   * Caches `data` as the caller's (its tenant's) answer of one GET, fresh for the endpoint's TTL,
   * as if `call` had bought it: for data bought another way (the POST + callback variant of a slow
   * dataset), so later reads of the GET are cache hits. Nothing for uncached endpoints. With
   * `order` (a `SlowVariant.tag`), only while that order is still marked pending: the delivery of an
   * order dropped since (`forget`, e.g. a monitor check of the company) or already settled is not
   * kept. Resolves whether it was cached.
   */
  remember(ctx: CallContext, ep: Endpoint, opts: CallOptions, data: unknown, order?: string): Promise<boolean>;
  /**
   * A slow GET's answer (cached like `call`'s), bought, when it is neither cached nor pending, by
   * `variant.order` (the POST + callback variant) instead of the GET. Once across the replicas
   * sharing the stores: concurrent reads join it, here and on replicas (the GET's in-flight lease),
   * and it stays marked pending (a later read waits for its delivery or polls `IT-check_id`, free)
   * from before the order is sent until the data is cached, a final poll answers, or `forget`
   * drops it, for `variant.markMs` at most. See `UpstreamClient.order`.
   */
  buySlow<T = unknown>(ctx: CallContext, ep: Endpoint, opts: CallOptions, variant: SlowVariant): Promise<T>;
}

/** How `Upstream.buySlow` orders a slow dataset another way than its GET. */
export interface SlowVariant {
  /** Sends the paid order (at most once per call) and returns its decoded answer. */
  order(): Promise<unknown>;
  /** Whether an answer of the order is the dataset asked for (cached as is; else it names a request id). */
  isDataset(data: unknown): boolean;
  /** This order's tag (no spaces): its delivery is `remember`ed under it, kept only while the order is marked. */
  tag: string;
  /** Resolves with the dataset when this order's delivery reaches this process (already `remember`ed). */
  delivered: Promise<unknown>;
  /** How long its delivery is awaited before polling `IT-check_id` (ms). */
  waitMs: number;
  /** How long a delivery may still come: the pending mark's lifetime (ms). */
  markMs: number;
}
