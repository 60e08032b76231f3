/**
 * The kit's service glue: an area's asynchronous work, end to end. Creating it (paid, under an
 * idempotency key) with the layer's signed callback, reading and listing it, applying what
 * callbacks, reads and the poller observe to the tracked store, publishing every change to the event
 * bus (topics `<area>:<tenant>` and `<area>:<tenant>:<id>`), relaying deliveries to the caller's own
 * callback, and the HTTP routes (`/callbacks/…`, `/files/…`). Generic over the area's family table
 * and state policy (`AreaSpec`); an area subclasses it only for its own extra operations. One
 * instance per subgraph process; the stores may be shared by several (Redis).
 */
import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { GraphQLError } from 'graphql';
import type { Area } from '../../../contract/areas.ts';
import { MemoryEventBus, type EventBus } from '../../../platform/bus.ts';
import { announceChange } from '../../../platform/changes.ts';
import type { SubgraphContext, UpstreamAuth } from '../context.ts';
import { notFound, upstreamToGraphQL } from '../errors.ts';
import type { SubgraphDeps } from '../server.ts';
import { layerSigner, MemoryReplayGuard, randomId, type ReplayGuard, type Signer } from '../../../platform/signing.ts';
import type { CallContext, CallOptions, Upstream } from '../../upstream/upstream.ts';
import { CostMeter } from '../../upstream/cost.ts';
import { PASS_THROUGH_TOKENS, type WorkTokens } from '../../upstream/work-tokens.ts';
import { mayHaveBeenCarriedOut, UpstreamError } from '../../upstream/errors.ts';
import type { Endpoint } from '../../upstream/endpoint.ts';
import { priceOf } from '../../../contract/prices.ts';
import { FileGrants, type FileGrantStore } from './files.ts';
import { sendJson } from '../../../platform/http.ts';
import { callbackPurpose, deliveryNonce, handleCallback, isDefiniteRefusal, layerCallbackKey, relay, vendorCallback } from './ingress.ts';
import type { AreaSpec } from './policy.ts';
import { Poller, pollerOptionsFromEnv, type PollBook } from './poller.ts';
import { allowPrivateRelay } from './relay-guard.ts';
import { MemoryTrackedStore, redactRelay, type IdempotencyRecord, type RelayTarget, type Reservation, type TrackedRequest, type TrackedStore } from './store.ts';
import type { TokenCipher } from './cipher.ts';
import { log } from '../../../platform/log.ts';
import { areaSetting, settingsOf, type Settings, type SettingsSource } from '../../../platform/settings.ts';
import { isObj, type Obj, asText } from '../../../contract/values.ts';

/** The stores of an area's tracked work: memory by default, Redis from `trackingStores` (`stores.ts`). */
export interface TrackingStoreSet<F extends string = string> {
  store?: TrackedStore<F>;
  bus?: EventBus<TrackedRequest<F>>;
  replay?: ReplayGuard;
  /** Where signed-download grants live. */
  fileGrants?: FileGrantStore;
  /** The poller's budget, per-entry state and leases. */
  pollBook?: PollBook;
  /** Seals the upstream tokens of file grants (the tracked store seals its own). */
  cipher?: TokenCipher;
}

/** Settings are read from `<AREA>_…` variables (e.g. `RISK_CALLBACK_TTL_S`) of `env`. */
export interface TrackingServiceOptions<F extends string = string> extends TrackingStoreSet<F> {
  signer?: Signer;
  /** Lifetime of a callback URL. `<AREA>_CALLBACK_TTL_S`. @default 30 days */
  callbackTtlSeconds?: number;
  /**
   * Lifetime of a monitor's callback URL: monitors run a year and renew themselves, keeping the
   * URL, so it must outlive them (never less than a year and a day, nor than `callbackTtlSeconds`).
   * Past it the slow poll (`<AREA>_MONITOR_POLL_MS`) still notices changes.
   * `<AREA>_MONITOR_CALLBACK_TTL_S`. @default 5 years
   */
  monitorCallbackTtlSeconds?: number;
  /**
   * Relay callbacks to loopback, private and link-local addresses too (SSRF guard off): for
   * development and tests. `<AREA>_RELAY_ALLOW_PRIVATE=1`. @default false
   */
  allowPrivateRelay?: boolean;
  /** Lifetime of a file URL. `<AREA>_FILE_URL_TTL_S`. @default 300 */
  fileTtlSeconds?: number;
  /** Where the `<AREA>_*`, `LAYER_SECRET` and `PUBLIC_URL` settings are read (`platform/settings.ts`). @default the process's */
  env?: SettingsSource;
}

/** Retries asked of the upstream for its callbacks to the layer (the vendor's maximum is 5). */
export const UPSTREAM_CALLBACK_RETRIES = 5;

const YEAR_S = 365 * 24 * 3600;
/** A monitor's callback URL lives at least this long (its first year, and a day). */
const MONITOR_MIN_TTL_S = YEAR_S + 24 * 3600;

/**
 * A record read through an endpoint several families share (risk's `WW-kyc-evidences/{id}`) is of
 * the family its `type` names; any other record is of the family whose endpoint answered.
 */
function isOfFamily(want: string | undefined, record: Obj): boolean {
  if (want === undefined || record.type === undefined || record.type === null) return true;
  return asText(record.type).toLowerCase() === want;
}

/** The not-found of a record of another family (as if the id were wrong). */
const notOfFamily = (ep: Endpoint, family: string): UpstreamError =>
  new UpstreamError('http', `no ${family} request with this id`, ep.area, ep.path.replace(/^\/+/, '').split('/')[0] ?? ep.path, 404);

/** How long after `OUTCOME_UNKNOWN` a retry under the same key is worth it (seconds). */
const OUTCOME_RETRY_AFTER_S = 30;
/** Requests created this long before an unanswered order still count as candidates (clock skew, seconds). */
const RECOVER_CLOCK_SKEW_S = 300;
/** Upstream reads at most when looking for the request of an unanswered order. */
const RECOVER_MAX_READS = 25;

/** Euro an unanswered paid call may have cost: what the upstream client says, else the list price. */
function atRiskOf(err: unknown, area: Area, method: string, path: string): number {
  return err instanceof UpstreamError && err.atRisk > 0 ? err.atRisk : priceOf(area, method, path);
}

/** Stable hash of what an order asks the upstream for (family and validated body, no callback). */
export function fingerprintOf(family: string, body: Obj): string {
  const rest = { ...body };
  delete rest.callback;
  return createHash('sha256')
    .update(canonicalJson({ family, body: rest }))
    .digest('base64url');
}

function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  if (isObj(v)) {
    const keys = Object.keys(v)
      .filter((k) => v[k] !== undefined)
      .sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(v[k])}`).join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}

export const keyReused = (key: string): GraphQLError =>
  new GraphQLError(`idempotencyKey "${key}" was already used for a different order in the last 24 hours; use a new key for a new order`, {
    extensions: { code: 'IDEMPOTENCY_KEY_REUSED', field: 'idempotencyKey', idempotencyKey: key },
  });

/** The error of a paid order that got no answer: the upstream's code, plus how to get the request. */
export function outcomeUnknownError(err: unknown, key: string, atRisk: number): GraphQLError {
  const base = err instanceof UpstreamError ? upstreamToGraphQL(err) : null;
  const message =
    `${base ? `${base.message}: ` : ''}the order may have been created and charged; ` + `repeat the mutation with idempotencyKey "${key}" to get it without paying twice`;
  return new GraphQLError(message, {
    extensions: { ...(base?.extensions ?? { code: 'UPSTREAM_UNAVAILABLE' }), outcome: 'unknown', atRisk, idempotencyKey: key },
  });
}

/** A retry under a key whose order got no answer, and whose request cannot be found (yet). */
function outcomeStillUnknown(held: IdempotencyRecord, why: string): GraphQLError {
  return new GraphQLError(
    `The order under idempotencyKey "${held.key}" got no answer and its request cannot be found: ${why}. ` +
      `It may still be carried out (and charged): retry later with the same idempotencyKey to get it, ` +
      `or use a new idempotencyKey to order again knowingly`,
    { extensions: { code: 'OUTCOME_UNKNOWN', outcome: 'unknown', retryAfter: OUTCOME_RETRY_AFTER_S, atRisk: held.atRisk, idempotencyKey: held.key } },
  );
}

/** How a creation is sent, when not as a JSON body carrying the layer's own per-request callback. */
export interface CreateSend {
  /**
   * Put the layer's per-request callback in the body. @default true; false for areas notified per
   * configuration (`configCallback`)
   */
  callback?: boolean;
  /**
   * The call's options (a raw body such as XML, per-call headers, a price): the `body` given to
   * `create` then only identifies the order (its fingerprint). Nothing of them is stored.
   */
  options?: CallOptions;
  /**
   * The endpoint that creates the record when it is not the family's `create` (e.g. a receipt's
   * return, `PATCH /IT-receipts/{id}`, whose answer is a new receipt). @default the family's create
   */
  endpoint?: Endpoint;
  /**
   * How to find upstream (free calls only) the record of an order that got no answer, when the
   * order carried no layer callback to find it by (`callback: false`): e.g. an invoice by the
   * service's list filtered on its sender, number and date. Null: not there (yet); throws when the
   * service cannot be asked. Without it such an order stays `OUTCOME_UNKNOWN` until its key expires.
   */
  find?: (ctx: SubgraphContext, held: IdempotencyRecord) => Promise<Obj | null>;
}

/** Topic of one piece of work's changes. */
export const requestTopicOf = (area: string, tenant: string, id: string): string => `${area}:${tenant}:${id.toLowerCase()}`;
/** Topic of every change of a tenant's work in an area. */
export const tenantTopicOf = (area: string, tenant: string): string => `${area}:${tenant}`;

export class TrackingService<F extends string, K extends string> {
  readonly store: TrackedStore<F>;
  readonly bus: EventBus<TrackedRequest<F>>;
  readonly replay: ReplayGuard;
  readonly callbackTtlSeconds: number;
  readonly monitorCallbackTtlSeconds: number;
  /** Whether relays may go to private addresses (`<AREA>_RELAY_ALLOW_PRIVATE=1`). */
  readonly allowPrivateRelay: boolean;
  private readonly fileTtlSeconds: number;
  protected readonly env: Settings;
  private signerValue: Signer | null;
  private filesValue: FileGrants | null = null;
  private readonly fileGrants: FileGrantStore | undefined;
  private readonly pollBook: PollBook | undefined;
  private readonly cipher: TokenCipher | undefined;
  private deps: SubgraphDeps | null = null;
  private poller: Poller<F, K> | null = null;
  private readonly relays = new Set<Promise<unknown>>();
  /** Orders in flight in this process, by tenant and idempotency key. */
  private readonly ordering = new Map<string, { fingerprint: string; promise: Promise<TrackedRequest<F>> }>();

  constructor(
    readonly area: AreaSpec<F, K>,
    opts: TrackingServiceOptions<F> = {},
  ) {
    this.store = opts.store ?? new MemoryTrackedStore<F>(area.policy);
    this.bus = opts.bus ?? new MemoryEventBus<TrackedRequest<F>>();
    this.signerValue = opts.signer ?? null;
    this.replay = opts.replay ?? new MemoryReplayGuard();
    this.fileGrants = opts.fileGrants;
    this.pollBook = opts.pollBook;
    this.cipher = opts.cipher;
    this.env = settingsOf(opts.env);
    this.callbackTtlSeconds = opts.callbackTtlSeconds ?? areaSetting(this.env, area.name, 'CALLBACK_TTL_S');
    this.monitorCallbackTtlSeconds = Math.max(
      MONITOR_MIN_TTL_S,
      this.callbackTtlSeconds,
      opts.monitorCallbackTtlSeconds ?? areaSetting(this.env, area.name, 'MONITOR_CALLBACK_TTL_S'),
    );
    this.allowPrivateRelay = opts.allowPrivateRelay ?? allowPrivateRelay(this.env, area.name);
    this.fileTtlSeconds = opts.fileTtlSeconds ?? areaSetting(this.env, area.name, 'FILE_URL_TTL_S');
  }

  /** Topic of one piece of work's changes. */
  requestTopic(tenant: string, id: string): string {
    return requestTopicOf(this.area.name, tenant, id);
  }

  /** Topic of every change of a tenant's work. */
  tenantTopic(tenant: string): string {
    return tenantTopicOf(this.area.name, tenant);
  }

  private isMonitor(family: F): boolean {
    return this.area.families[family].remove !== undefined;
  }

  /** The signer of callback and file URLs; over `LAYER_SECRET` unless one was given (read on first use, not at import). */
  get signer(): Signer {
    this.signerValue ??= layerSigner(this.env);
    return this.signerValue;
  }

  /** The signed-download grants. */
  get files(): FileGrants {
    this.filesValue ??= new FileGrants({
      signer: this.signer,
      area: this.area.name,
      ttlSeconds: this.fileTtlSeconds,
      store: this.fileGrants,
      cipher: this.cipher,
      tokens: () => this.workTokens,
    });
    return this.filesValue;
  }

  /** Called when the subgraph server listens: keeps its deps and starts the poller. */
  start(deps: SubgraphDeps): () => Promise<void> {
    this.deps = deps;
    const poller = new Poller<F, K>(
      this.area.families,
      this.area.policy,
      {
        unfinished: () => this.store.unfinished(),
        refresh: (entry) => this.refresh(entry),
        markChecked: (entry, at) => this.store.markChecked(entry.tenant, entry.id, at),
      },
      { ...pollerOptionsFromEnv(this.env, this.area.name), book: this.pollBook, label: `${this.area.name} poller` },
    );
    this.poller = poller;
    poller.start();
    return async () => {
      await poller.stop();
      if (this.poller === poller) this.poller = null;
      if (this.deps === deps) this.deps = null;
      await Promise.allSettled([...this.relays]);
    };
  }

  /** The gateway's public URL (for callback and file URLs): from the server, else `PUBLIC_URL`. */
  publicUrl(): string {
    return (this.deps?.publicUrl() || this.env.PUBLIC_URL || '').replace(/\/+$/, '');
  }

  /** Runs one poller round now (tests, operations). */
  pollNow(): Promise<void> {
    return this.poller?.tick() ?? Promise.resolve();
  }

  // ---------------------------------------------------------------------------------------------
  // Requests

  /**
   * Creates a request (paid) under an idempotency key (the caller's, else one made here): the same
   * key from the same tenant within 24 hours returns the same request and never buys twice.
   *
   * - a key in use by another order (another fingerprint: family and upstream body) is refused
   *   with `IDEMPOTENCY_KEY_REUSED`;
   * - a key whose order is in flight (in this process) joins it: same result, no second call;
   * - a key whose order was created returns that request (from the store, else read for free);
   * - a key whose order got no answer looks the request up (store, then the family's list and
   *   free reads, by the callback reservation it carried; without one, `send.find`) and else
   *   answers `OUTCOME_UNKNOWN`;
   * - a key whose order was refused (an error answer, a budget refusal) is free again.
   */
  async create(ctx: SubgraphContext, family: F, body: Obj, relayTo: RelayTarget | null, callerKey: string | null = null, send: CreateSend = {}): Promise<TrackedRequest<F>> {
    const key = callerKey ?? randomId(18);
    const fingerprint = fingerprintOf(family, body);
    const slot = `${ctx.auth.tenant}\u0000${key}`;
    const running = this.ordering.get(slot);
    if (running) {
      if (running.fingerprint !== fingerprint) throw keyReused(key);
      return running.promise;
    }
    const promise = this.createOnce(ctx, family, body, relayTo, key, fingerprint, send);
    const entry = { fingerprint, promise };
    this.ordering.set(slot, entry);
    try {
      return await promise;
    } finally {
      if (this.ordering.get(slot) === entry) this.ordering.delete(slot);
    }
  }

  /** Claims the key and orders, or answers from what the key already holds. */
  private async createOnce(
    ctx: SubgraphContext,
    family: F,
    body: Obj,
    relayTo: RelayTarget | null,
    key: string,
    fingerprint: string,
    send: CreateSend,
  ): Promise<TrackedRequest<F>> {
    const { tenant } = ctx.auth;
    const base = this.publicUrl();
    const reservation = base && send.callback !== false ? randomId(16) : null;
    const startedAt = Date.now();
    let held = await this.store.claimIdempotencyKey({ tenant, key, family, fingerprint, reservation, relay: relayTo, state: 'pending', id: null, startedAt, atRisk: 0 });
    if (held) {
      if (held.fingerprint !== fingerprint) throw keyReused(key);
      // Claimed by another process: wait (bounded) for its answer.
      const deadline = Date.now() + this.timeoutOf(family) + 5_000;
      while (held.state === 'pending' && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 200));
        const now = await this.store.idempotencyRecord(tenant, key);
        if (!now) return this.createOnce(ctx, family, body, relayTo, key, fingerprint, send); // released: order again
        held = now;
      }
      if (held.state === 'created' && held.id !== null) return this.existing(ctx, held.family, held.id);
      return this.recover(ctx, held, send);
    }

    const ep = send.endpoint ?? this.area.families[family].create;
    let rec: Obj;
    try {
      const upstreamBody: Obj = { ...body };
      if (base && reservation !== null) {
        const token = this.signer.sign(callbackPurpose(this.area.name), reservation, this.isMonitor(family) ? this.monitorCallbackTtlSeconds : this.callbackTtlSeconds);
        const expiresAt = Number(token.split('.')[1]);
        await this.store.reserve({ key: reservation, tenant, family, id: null, relay: relayTo, expiresAt, token: this.workTokens.keep(ctx.auth.token) });
        // `retry`: the upstream tries again (with growing back-off) while the layer is briefly
        // unreachable, e.g. restarting; a 403 (forged, replayed) is final and not retried.
        upstreamBody.callback = { url: `${base}/callbacks/${this.area.name}/${token}`, method: 'JSON', field: 'data', headers: {}, retry: UPSTREAM_CALLBACK_RETRIES };
      }
      rec = this.requireRecord(await ctx.upstream.call<unknown>(ctx, ep, send.options ?? { body: upstreamBody }), ep.path);
    } catch (err) {
      if (!mayHaveBeenCarriedOut(err)) {
        // Refused before sending, or answered with an error: nothing was created. The key is free again.
        await this.store.releaseIdempotencyKey(tenant, key);
        if (reservation !== null) await this.store.dropReservation(reservation);
        throw err;
      }
      // No answer: the request may exist upstream (and be charged). The reservation stays, so its
      // first callback binds it; the key stays, so a retry under it finds it instead of buying.
      const atRisk = atRiskOf(err, ep.area, ep.method, ep.path);
      await this.store.settleIdempotencyKey(tenant, key, { state: 'unknown', atRisk });
      const now = await this.store.idempotencyRecord(tenant, key);
      if (now?.state === 'created' && now.id !== null) return this.existing(ctx, family, now.id); // a callback came first
      throw outcomeUnknownError(err, key, atRisk);
    }
    const id = String(rec.id).toLowerCase();
    await this.store.settleIdempotencyKey(tenant, key, { state: 'created', id });
    if (reservation !== null) await this.store.bindKey(reservation, id);
    return (await this.apply(ctx.auth, family, rec, { source: 'mutation', relay: relayTo })).entry;
  }

  /**
   * The layer's signed callback URL for one configuration of the tenant (areas notified per
   * configuration, e.g. invoicing: every delivery names its own record of `family`, re-read upstream
   * with the caller's token): the configuration's reservation renewed (same key, new expiry, the
   * relay given), or a new one. Null when the layer has no public URL.
   */
  async configCallback(ctx: CallContext, family: F, config: string, relayTo: RelayTarget | null): Promise<string | null> {
    const base = this.publicUrl();
    if (!base) return null;
    const { tenant } = ctx.auth;
    const key = (await this.store.configReservation(tenant, config))?.key ?? randomId(16);
    const token = this.signer.sign(callbackPurpose(this.area.name), key, this.monitorCallbackTtlSeconds);
    const expiresAt = Number(token.split('.')[1]);
    await this.store.reserve({ key, tenant, family, id: null, config, relay: relayTo, expiresAt, token: this.workTokens.keep(ctx.auth.token) });
    return `${base}/callbacks/${this.area.name}/${token}`;
  }

  /** The request an idempotency key already created: from the store, else read upstream (free). */
  private async existing(ctx: SubgraphContext, family: F, id: string): Promise<TrackedRequest<F>> {
    const known = await this.store.get(ctx.auth.tenant, id);
    if (known && known.family === family) return known;
    return this.read(ctx, family, id);
  }

  /**
   * The request of an order that got no answer: bound by a callback already (store), else found
   * upstream among the family's requests by the callback reservation it carried (a free list, then
   * free reads of the requests created since the order); an order that carried no callback, by
   * the area's own look-up (`send.find`) if it has one. Not found: `OUTCOME_UNKNOWN`, and the key
   * stays taken (the upstream may still carry the order out).
   */
  private async recover(ctx: SubgraphContext, held: IdempotencyRecord<F>, send: CreateSend): Promise<TrackedRequest<F>> {
    const { tenant } = ctx.auth;
    if (held.state === 'created' && held.id !== null) return this.existing(ctx, held.family, held.id);
    if (held.reservation === null) {
      if (!send.find) throw outcomeStillUnknown(held, 'the order carried no callback the layer could find it by');
      let found: Obj | null;
      try {
        found = await send.find(ctx, held);
      } catch (err) {
        if (err instanceof GraphQLError) throw err;
        throw outcomeStillUnknown(held, 'the service could not be asked');
      }
      if (!found || typeof found.id !== 'string' || found.id === '') throw outcomeStillUnknown(held, 'the service does not show it (yet)');
      const id = found.id.toLowerCase();
      await this.store.settleIdempotencyKey(tenant, held.key, { state: 'created', id });
      return (await this.apply(ctx.auth, held.family, found, { source: 'read', relay: held.relay })).entry;
    }
    const bound = (await this.store.reservation(held.reservation))?.id ?? null;
    if (bound !== null) {
      await this.store.settleIdempotencyKey(tenant, held.key, { state: 'created', id: bound });
      return this.existing(ctx, held.family, bound);
    }
    let found: Obj | null;
    try {
      found = await this.findByReservation(ctx, held);
    } catch (err) {
      if (err instanceof GraphQLError) throw err;
      throw outcomeStillUnknown(held, 'the service could not be asked');
    }
    if (!found) throw outcomeStillUnknown(held, 'the service does not show it (yet)');
    const id = String(found.id).toLowerCase();
    await this.store.bindKey(held.reservation, id);
    await this.store.settleIdempotencyKey(tenant, held.key, { state: 'created', id });
    return (await this.apply(ctx.auth, held.family, found, { source: 'read', relay: held.relay })).entry;
  }

  /**
   * Looks upstream (free calls only) for the request whose layer callback carries the reservation
   * of `held`: lists the family, and reads the requests created since shortly before the order,
   * newest first (at most `RECOVER_MAX_READS`). Throws when the service cannot be asked.
   */
  private async findByReservation(ctx: SubgraphContext, held: IdempotencyRecord<F>): Promise<Obj | null> {
    const fam = this.area.families[held.family];
    let items: unknown;
    try {
      items = await ctx.upstream.call<unknown>(ctx, fam.list);
    } catch (err) {
      if (err instanceof UpstreamError && err.graphqlCode === 'UPSTREAM_NOT_FOUND') return null;
      throw err;
    }
    const since = Math.floor(held.startedAt / 1000) - RECOVER_CLOCK_SKEW_S;
    const candidates = (Array.isArray(items) ? items : [])
      .filter((item): item is Obj => isObj(item) && typeof item.id === 'string' && item.id !== '')
      .filter((item) => fam.listType === undefined || item.type === undefined || item.type === fam.listType)
      .map((item) => ({ id: String(item.id), createdAt: this.area.policy.timestampsOf(item).createdAt }))
      .filter((c) => c.createdAt === null || c.createdAt >= since)
      .sort((a, b) => (b.createdAt ?? Infinity) - (a.createdAt ?? Infinity))
      .slice(0, RECOVER_MAX_READS);
    let failed: Error | null = null;
    for (const c of candidates) {
      let rec: Obj;
      try {
        rec = await this.fetchRecord(ctx, held.family, c.id);
      } catch (err) {
        if (!isDefiniteRefusal(err)) failed = err instanceof Error ? err : new Error(String(err));
        continue;
      }
      const cb = rec.callback;
      if (isObj(cb) && typeof cb.url === 'string' && layerCallbackKey(this.signer, this.area.name, cb.url) === held.reservation) return rec;
    }
    // A read that failed may have been the one: the outcome stays unknown.
    if (failed !== null) throw failed;
    return null;
  }

  private timeoutOf(family: F): number {
    return this.deps?.upstream.config.forcedTimeoutMs ?? this.area.families[family].create.timeoutMs ?? 30_000;
  }

  /** Reads one request upstream (free) and records what it says. */
  async read(ctx: CallContext & { upstream: Upstream }, family: F, id: string): Promise<TrackedRequest<F>> {
    const rec = await this.fetchRecord(ctx, family, id);
    return (await this.apply(ctx.auth, family, rec, { source: 'read' })).entry;
  }

  /** One request's record upstream (free GET); a record of another family is not found. */
  protected async fetchRecord(ctx: CallContext & { upstream: Upstream }, family: F, id: string): Promise<Obj> {
    const ep = this.area.families[family].get;
    const record = await ctx.upstream.call<unknown>(ctx, ep, { params: { id } });
    const rec = this.requireRecord(record, ep.path);
    if (!isOfFamily(this.area.families[family].listType, rec)) throw notOfFamily(ep, family);
    return rec;
  }

  /** The caller's requests of a family as the upstream lists them, merged with what the store knows. */
  async list(ctx: SubgraphContext, family: F): Promise<TrackedRequest<F>[]> {
    const fam = this.area.families[family];
    let items: unknown;
    try {
      items = await ctx.upstream.call<unknown>(ctx, fam.list);
    } catch (err) {
      // "no requests linked to this account" is an empty list.
      if (err instanceof UpstreamError && err.graphqlCode === 'UPSTREAM_NOT_FOUND') return [];
      throw err;
    }
    const out: TrackedRequest<F>[] = [];
    for (const item of Array.isArray(items) ? items : []) {
      if (!isObj(item) || typeof item.id !== 'string') continue;
      if (fam.listType !== undefined && item.type !== undefined && item.type !== fam.listType) continue;
      const known = await this.store.get(ctx.auth.tenant, item.id);
      if (known && known.family === family) {
        // The list item may be newer (state) than what the store has: apply it, keep the details.
        out.push((await this.apply(ctx.auth, family, item, { source: 'read' })).entry);
      } else {
        out.push(listOnly(this.area.policy, ctx.auth.tenant, family, item));
      }
    }
    return out;
  }

  /**
   * Sends a document to a piece of work (a signed PDF, checked with `uploads.ts` `base64Pdf` first)
   * through `endpoint` (PATCH, PUT or POST) and records the answer.
   */
  async upload(ctx: SubgraphContext, family: F, endpoint: Endpoint, id: string, body: Obj): Promise<TrackedRequest<F>> {
    const record = await ctx.upstream.call<unknown>(ctx, endpoint, { params: { id }, body });
    const rec = this.requireRecord(record, endpoint.path);
    return (await this.apply(ctx.auth, family, rec, { source: 'mutation' })).entry;
  }

  /** Stops a monitor (DELETE). */
  async remove(ctx: SubgraphContext, family: F, id: string): Promise<TrackedRequest<F>> {
    const ep = this.area.families[family].remove;
    if (!ep) throw new GraphQLError(`${family} requests cannot be stopped`, { extensions: { code: 'BAD_USER_INPUT' } });
    const record = await ctx.upstream.call<unknown>(ctx, ep, { params: { id } });
    const rec = this.requireRecord(record, ep.path);
    return (await this.apply(ctx.auth, family, rec, { source: 'mutation' })).entry;
  }

  /** A request the caller may subscribe to: from the store, else read upstream (which checks ownership). */
  async findForSubscription(ctx: SubgraphContext, id: string, family: F | null): Promise<TrackedRequest<F>> {
    const known = await this.store.get(ctx.auth.tenant, id);
    if (known) {
      if (family && known.family !== family) throw notFound(`no ${family} request ${id}`);
      return known;
    }
    if (!family) throw notFound(`request ${id} is unknown to the layer; pass its family to look it up`);
    return this.read(ctx, family, id);
  }

  // ---------------------------------------------------------------------------------------------
  // Observations

  /**
   * Applies a record seen upstream: updates the store, publishes a change, relays deliveries to the
   * caller's callback (callbacks always, once each; the poller's finds when they change the state).
   */
  async apply(
    auth: UpstreamAuth,
    family: F,
    record: Obj,
    opts: { source: 'mutation' | 'read' | 'callback' | 'poll'; relay?: RelayTarget | null },
  ): Promise<{ entry: TrackedRequest<F>; changed: boolean }> {
    // The caller's callback shown in the record: the one given now, else the one the store holds.
    const relayTo = opts.relay !== undefined ? opts.relay : ((await this.store.get(auth.tenant, String(record.id)))?.relay ?? null);
    const clean = this.withoutLayerCallback(record, relayTo);
    const obs = await this.store.observe(auth.tenant, family, clean, { relay: opts.relay, token: this.workTokens.keep(auth.token) });
    const entry = obs.entry;
    if (obs.changed) {
      // The area's own consequences first (e.g. dropping cached data a change made stale), so a
      // subscriber or a relayed caller that reacts at once sees them.
      await this.changed?.(entry, opts.source).catch((err: unknown) => log.error({ area: this.area.name, id: entry.id, err }, 'change not fully handled'));
      await this.publish(entry);
    } else {
      // A change stored earlier whose publication failed (or was cut short): publish it now.
      const known = await this.bus.latest(this.requestTopic(auth.tenant, entry.id)).catch(() => entry);
      if (known === undefined || known.seq < entry.seq) await this.publish(entry);
    }
    // Callbacks are relayed once each unless stale; the poller's finds only when they are news.
    const relayed = (opts.source === 'callback' && this.area.policy.stateOf(clean) === entry.rawState) || (opts.source === 'poll' && obs.changed);
    if (relayed && entry.relay && (await this.store.markRelayed(auth.tenant, entry.id, deliveryNonce(this.area.policy, record)))) {
      const payload = { data: { ...entry.record, callback: vendorCallback(redactRelay(entry.relay)) }, success: true, message: '', error: null };
      const target = entry.relay;
      let refused = false;
      const p = relay(target, payload, {
        allowPrivate: this.allowPrivateRelay,
        onRefused: (why) => {
          refused = true;
          log.warn({ area: this.area.name, id: entry.id, reason: why }, "relay to the caller's callback refused");
        },
      }).then((status) => {
        if (!refused && (status === null || status >= 400))
          log.error({ area: this.area.name, id: entry.id, status: status ?? 'no answer' }, "relay to the caller's callback failed");
      });
      this.relays.add(p);
      void p.finally(() => this.relays.delete(p));
    }
    return obs;
  }

  /**
   * Called once per stored change of a piece of work (before it is published and relayed), with
   * where it was seen. Absent by default; an area defines it for its own consequences. A failure
   * is logged, never stops the publication.
   */
  protected changed?(entry: TrackedRequest<F>, source: 'mutation' | 'read' | 'callback' | 'poll'): Promise<void>;

  /** The token accessor of background work (`SubgraphDeps.tokens`; pass-through before `start`). */
  protected get workTokens(): WorkTokens {
    return this.deps?.tokens ?? PASS_THROUGH_TOKENS;
  }

  /** The upstream client of the started subgraph (null before `start`). */
  protected get upstream(): Upstream | null {
    return this.deps?.upstream ?? null;
  }

  /** Publishes a stored change to the request's and the tenant's topics; tried twice before failing. */
  private async publish(entry: TrackedRequest<F>): Promise<void> {
    // Subscribers never see the caller's callback header values (they may be credentials).
    const shown: TrackedRequest<F> = { ...entry, relay: redactRelay(entry.relay) };
    const once = (): Promise<unknown> => Promise.all([this.bus.publish(this.requestTopic(entry.tenant, entry.id), shown), this.bus.publish(this.tenantTopic(entry.tenant), shown)]);
    // This process's response cache forgets the tenant's answers (other replicas hear the bus).
    announceChange({ kind: 'topic', topic: this.tenantTopic(entry.tenant) });
    try {
      await once();
    } catch {
      // Failing again, the change still reaches subscribers: the next observation of the request
      // finds the bus's latest behind the store and publishes it.
      await once();
    }
  }

  /** Re-reads a late request for the poller. */
  private async refresh(entry: TrackedRequest<F>): Promise<void> {
    const upstream = this.deps?.upstream;
    const kept = await this.store.tokenOf(entry.tenant, entry.id);
    const token = kept ? this.workTokens.use(kept) : '';
    if (!upstream || !token) {
      await this.store.markChecked(entry.tenant, entry.id, Date.now());
      return;
    }
    const auth: UpstreamAuth = { token, tenant: entry.tenant };
    const rec = await this.fetchRecord({ auth, meter: new CostMeter(), upstream }, entry.family, entry.id);
    const obs = await this.apply(auth, entry.family, rec, { source: 'poll' });
    if (!obs.changed) await this.store.markChecked(entry.tenant, entry.id, Date.now());
  }

  /** Replaces the layer's own callback address in a record with the caller's callback (or null). */
  private withoutLayerCallback(record: Obj, relayTo: RelayTarget | null): Obj {
    const cb = record.callback;
    if (!isObj(cb) || typeof cb.url !== 'string' || !this.isLayerCallback(cb.url)) return record;
    // The caller's header values are not kept in the record (names only): they may be credentials.
    return { ...record, callback: relayTo ? vendorCallback(redactRelay(relayTo)) : null };
  }

  private isLayerCallback(url: string): boolean {
    return layerCallbackKey(this.signer, this.area.name, url) !== null;
  }

  /** A callback's trigger: the request read upstream with the token and family it was created with. */
  private async reread(reservation: Reservation<F>, id: string): Promise<Obj> {
    const upstream = this.deps?.upstream;
    const ep = this.area.families[reservation.family].get;
    if (!upstream) throw new UpstreamError('network', `the ${this.area.name} subgraph is not started`, ep.area, ep.path, 0);
    return this.fetchRecord({ auth: { token: this.workTokens.use(reservation.token), tenant: reservation.tenant }, meter: new CostMeter(), upstream }, reservation.family, id);
  }

  /** The upstream area of this area's endpoints (for error reports). */
  private get upstreamArea(): Area {
    const first = Object.values<{ get: Endpoint }>(this.area.families)[0];
    return first?.get.area ?? 'risk';
  }

  private requireRecord(data: unknown, path: string): Obj {
    if (!isObj(data) || typeof data.id !== 'string' || data.id === '') {
      throw new UpstreamError('decode', 'the answer carries no request record', this.upstreamArea, path.replace(/^\/+/, '').split('/')[0] ?? path, 200);
    }
    return data;
  }

  // ---------------------------------------------------------------------------------------------
  // HTTP routes under /<area>

  async http(req: IncomingMessage, res: ServerResponse, path: string): Promise<boolean> {
    if (path.startsWith('/callbacks/')) {
      await handleCallback<F>(req, res, path.slice('/callbacks/'.length), {
        area: this.area,
        signer: this.signer,
        replay: this.replay,
        store: this.store,
        reread: (reservation, id) => this.reread(reservation, id),
        accept: async (reservation, record) => {
          await this.apply({ token: this.workTokens.use(reservation.token), tenant: reservation.tenant }, reservation.family, record, {
            source: 'callback',
            relay: reservation.relay,
          });
        },
        onRefused: (why) => {
          if (why !== 'method') log.warn({ area: this.area.name, reason: why }, 'callback refused');
        },
      });
      return true;
    }
    if (path.startsWith('/files/')) {
      await this.files.serve(req, res, path.slice('/files/'.length), this.deps?.upstream ?? null);
      return true;
    }
    if (path === '/callbacks' || path === '/files') {
      sendJson(res, 403, { error: 'forbidden' });
      return true;
    }
    return false;
  }
}

/** A request known only from a list item (id, state, timestamps). */
function listOnly<F extends string>(policy: AreaSpec<F, string>['policy'], tenant: string, family: F, item: Obj): TrackedRequest<F> {
  const now = Date.now();
  return {
    tenant,
    family,
    id: String(item.id),
    record: Object.freeze({ ...item }),
    rawState: policy.stateOf(item),
    ...policy.timestampsOf(item),
    seq: 0,
    changedAt: now,
    checkedAt: now,
    relay: null,
  };
}
