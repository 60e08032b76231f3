/**
 * The risk area's asynchronous requests, end to end: creating them with the layer's signed callback,
 * reading and listing them, applying what callbacks, reads and the poller observe to the status
 * store, publishing every change to the event bus, relaying deliveries to the caller's own callback,
 * and the HTTP routes (`/callbacks/…`, `/files/…`). One instance per subgraph process.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { GraphQLError } from 'graphql';
import { MemoryEventBus, type EventBus } from '../runtime/bus.ts';
import type { SubgraphContext, UpstreamAuth } from '../runtime/context.ts';
import { notFound } from '../runtime/errors.ts';
import type { SubgraphDeps } from '../runtime/server.ts';
import { layerSigner, MemoryReplayGuard, randomId, type ReplayGuard, type Signer } from '../runtime/signing.ts';
import type { CallContext, UpstreamClient } from '../upstream/client.ts';
import { CostLimitError, CostMeter } from '../upstream/cost.ts';
import { UpstreamError } from '../upstream/errors.ts';
import type { Endpoint } from '../upstream/endpoint.ts';
import { CALLBACK_PURPOSE, deliveryNonce, handleCallback, layerCallbackKey, relay, vendorCallback } from './callbacks.ts';
import { FileGrants, sendJson } from './files.ts';
import { isObj, rawStateOf, timestampsOf, type Obj } from './model.ts';
import { pollerOptionsFromEnv, RiskPoller } from './poller.ts';
import { allowPrivateRelay } from './relay-guard.ts';
import { MemoryRequestStore, type RelayTarget, type Reservation, type RequestStore, type TrackedRequest } from './store.ts';
import { FAMILIES, RISK, type RiskFamilyName } from './upstream.ts';

export interface RiskServiceOptions {
  store?: RequestStore;
  bus?: EventBus<TrackedRequest>;
  signer?: Signer;
  replay?: ReplayGuard;
  /** Lifetime of a callback URL. `RISK_CALLBACK_TTL_S`. @default 30 days */
  callbackTtlSeconds?: number;
  /**
   * Lifetime of a monitor's callback URL: monitors run a year and renew themselves, keeping the
   * URL, so it must outlive them (never less than a year and a day, nor than `callbackTtlSeconds`).
   * Past it the slow poll (`RISK_MONITOR_POLL_MS`) still notices changes.
   * `RISK_MONITOR_CALLBACK_TTL_S`. @default 5 years
   */
  monitorCallbackTtlSeconds?: number;
  /**
   * Relay callbacks to loopback, private and link-local addresses too (SSRF guard off): for
   * development and tests. `RISK_RELAY_ALLOW_PRIVATE=1`. @default false
   */
  allowPrivateRelay?: boolean;
  /** Lifetime of a file URL. `RISK_FILE_URL_TTL_S`. @default 300 */
  fileTtlSeconds?: number;
  /** Where the `RISK_*`, `LAYER_SECRET` and `PUBLIC_URL` settings are read. @default process.env */
  env?: NodeJS.ProcessEnv;
}

const envNumber = (env: NodeJS.ProcessEnv, name: string, dflt: number): number => {
  const v = Number(env[name]);
  return env[name] !== undefined && env[name] !== '' && Number.isFinite(v) && v > 0 ? v : dflt;
};

const YEAR_S = 365 * 24 * 3600;
/** A monitor's callback URL lives at least this long (its first year, and a day). */
const MONITOR_MIN_TTL_S = YEAR_S + 24 * 3600;

const isMonitor = (family: RiskFamilyName): boolean => FAMILIES[family].remove !== undefined;

/**
 * Whether a failed creation certainly created nothing upstream: refused before sending (cost
 * limit, no token) or answered with a 4xx. A timeout, a 5xx or a lost connection may hide a
 * request created (and paid for) upstream.
 */
const createdNothing = (err: unknown): boolean =>
  err instanceof CostLimitError || (err instanceof UpstreamError && err.kind === 'http' && err.status >= 400 && err.status < 500);

/**
 * A KYC record read through the shared `WW-kyc-evidences/{id}` is of the family its `type` names;
 * any other record is of the family whose endpoint answered.
 */
function isOfFamily(family: RiskFamilyName, record: Obj): boolean {
  const want = FAMILIES[family].listType;
  if (want === undefined || record.type === undefined || record.type === null) return true;
  return String(record.type).toLowerCase() === want;
}

/** The not-found of a record of another family (as if the id were wrong). */
const notOfFamily = (ep: Endpoint, family: RiskFamilyName): UpstreamError =>
  new UpstreamError('http', `no ${family} request with this id`, ep.area, ep.path.replace(/^\/+/, '').split('/')[0] ?? ep.path, 404);

/** Topic of one request's changes. */
export const requestTopic = (tenant: string, id: string): string => `risk:${tenant}:${id.toLowerCase()}`;
/** Topic of every change of a tenant's requests. */
export const tenantTopic = (tenant: string): string => `risk:${tenant}`;

export class RiskService {
  readonly store: RequestStore;
  readonly bus: EventBus<TrackedRequest>;
  readonly replay: ReplayGuard;
  readonly callbackTtlSeconds: number;
  readonly monitorCallbackTtlSeconds: number;
  /** Whether relays may go to private addresses (`RISK_RELAY_ALLOW_PRIVATE=1`). */
  readonly allowPrivateRelay: boolean;
  private readonly fileTtlSeconds: number;
  private readonly env: NodeJS.ProcessEnv;
  private signerValue: Signer | null;
  private filesValue: FileGrants | null = null;
  private deps: SubgraphDeps | null = null;
  private poller: RiskPoller | null = null;
  private readonly relays = new Set<Promise<unknown>>();

  constructor(opts: RiskServiceOptions = {}) {
    this.store = opts.store ?? new MemoryRequestStore();
    this.bus = opts.bus ?? new MemoryEventBus<TrackedRequest>();
    this.signerValue = opts.signer ?? null;
    this.replay = opts.replay ?? new MemoryReplayGuard();
    this.env = opts.env ?? process.env;
    this.callbackTtlSeconds = opts.callbackTtlSeconds ?? envNumber(this.env, 'RISK_CALLBACK_TTL_S', 30 * 24 * 3600);
    this.monitorCallbackTtlSeconds = Math.max(
      MONITOR_MIN_TTL_S,
      this.callbackTtlSeconds,
      opts.monitorCallbackTtlSeconds ?? envNumber(this.env, 'RISK_MONITOR_CALLBACK_TTL_S', 5 * YEAR_S),
    );
    this.allowPrivateRelay = opts.allowPrivateRelay ?? allowPrivateRelay(this.env);
    this.fileTtlSeconds = opts.fileTtlSeconds ?? envNumber(this.env, 'RISK_FILE_URL_TTL_S', 300);
  }

  /** The signer of callback and file URLs; over `LAYER_SECRET` unless one was given (read on first use, not at import). */
  get signer(): Signer {
    this.signerValue ??= layerSigner(this.env);
    return this.signerValue;
  }

  /** The signed-download grants. */
  get files(): FileGrants {
    this.filesValue ??= new FileGrants({ signer: this.signer, ttlSeconds: this.fileTtlSeconds });
    return this.filesValue;
  }

  /** Called when the subgraph server listens: keeps its deps and starts the poller. */
  start(deps: SubgraphDeps): () => Promise<void> {
    this.deps = deps;
    const poller = new RiskPoller(
      {
        unfinished: () => this.store.unfinished(),
        refresh: (entry) => this.refresh(entry),
        markChecked: (entry, at) => this.store.markChecked(entry.tenant, entry.id, at),
      },
      pollerOptionsFromEnv(this.env),
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
   * Creates a request (paid): reserves a callback key, signs it into the upstream callback, posts,
   * and records the answer. Never retried (the upstream client does not retry POSTs). When the
   * answer is lost (timeout, 5xx, connection) the request may exist upstream all the same: the
   * reservation stays, and the request's first callback binds it.
   */
  async create(ctx: SubgraphContext, family: RiskFamilyName, body: Obj, relayTo: RelayTarget | null): Promise<TrackedRequest> {
    const base = this.publicUrl();
    const key = randomId(16);
    const upstreamBody: Obj = { ...body };
    if (base) {
      const token = this.signer.sign(CALLBACK_PURPOSE, key, isMonitor(family) ? this.monitorCallbackTtlSeconds : this.callbackTtlSeconds);
      const expiresAt = Number(token.split('.')[1]);
      await this.store.reserve({ key, tenant: ctx.auth.tenant, family, id: null, relay: relayTo, expiresAt, token: ctx.auth.token });
      upstreamBody.callback = { url: `${base}/callbacks/risk/${token}`, method: 'JSON', field: 'data', headers: {} };
    }
    let record: unknown;
    try {
      record = await ctx.upstream.call<unknown>(ctx, FAMILIES[family].create, { body: upstreamBody });
    } catch (err) {
      if (base && createdNothing(err)) await this.store.dropReservation(key);
      throw err;
    }
    const rec = this.requireRecord(record, FAMILIES[family].create.path);
    if (base) await this.store.bindKey(key, String(rec.id).toLowerCase());
    return (await this.apply(ctx.auth, family, rec, { source: 'mutation', relay: relayTo })).entry;
  }

  /** Reads one request upstream (free) and records what it says. */
  async read(ctx: CallContext & { upstream: UpstreamClient }, family: RiskFamilyName, id: string): Promise<TrackedRequest> {
    const rec = await this.fetchRecord(ctx, family, id);
    return (await this.apply(ctx.auth, family, rec, { source: 'read' })).entry;
  }

  /** One request's record upstream (free GET); a record of another family is not found. */
  private async fetchRecord(ctx: CallContext & { upstream: UpstreamClient }, family: RiskFamilyName, id: string): Promise<Obj> {
    const ep = FAMILIES[family].get;
    const record = await ctx.upstream.call<unknown>(ctx, ep, { params: { id } });
    const rec = this.requireRecord(record, ep.path);
    if (!isOfFamily(family, rec)) throw notOfFamily(ep, family);
    return rec;
  }

  /** The caller's requests of a family as the upstream lists them, merged with what the store knows. */
  async list(ctx: SubgraphContext, family: RiskFamilyName): Promise<TrackedRequest[]> {
    const fam = FAMILIES[family];
    let items: unknown;
    try {
      items = await ctx.upstream.call<unknown>(ctx, fam.list);
    } catch (err) {
      // "no requests linked to this account" is an empty list.
      if (err instanceof UpstreamError && err.graphqlCode === 'UPSTREAM_NOT_FOUND') return [];
      throw err;
    }
    const out: TrackedRequest[] = [];
    for (const item of Array.isArray(items) ? items : []) {
      if (!isObj(item) || typeof item.id !== 'string') continue;
      if (fam.listType !== undefined && item.type !== undefined && item.type !== fam.listType) continue;
      const known = await this.store.get(ctx.auth.tenant, item.id);
      if (known && known.family === family) {
        // The list item may be newer (state) than what the store has: apply it, keep the details.
        out.push((await this.apply(ctx.auth, family, item, { source: 'read' })).entry);
      } else {
        out.push(listOnly(ctx.auth.tenant, family, item));
      }
    }
    return out;
  }

  /** Uploads the signed delegation of a bureau request (PATCH): PROCESSING → IN_PROGRESS. */
  async uploadDelegation(ctx: SubgraphContext, id: string, file: string): Promise<TrackedRequest> {
    const record = await ctx.upstream.call<unknown>(ctx, RISK.bureauUpload, { params: { id }, body: { signed_delegation_file: file } });
    const rec = this.requireRecord(record, RISK.bureauUpload.path);
    return (await this.apply(ctx.auth, 'PERSON_BUREAU', rec, { source: 'mutation' })).entry;
  }

  /** Stops a monitor (DELETE). */
  async remove(ctx: SubgraphContext, family: RiskFamilyName, id: string): Promise<TrackedRequest> {
    const ep = FAMILIES[family].remove;
    if (!ep) throw new GraphQLError(`${family} requests cannot be stopped`, { extensions: { code: 'BAD_USER_INPUT' } });
    const record = await ctx.upstream.call<unknown>(ctx, ep, { params: { id } });
    const rec = this.requireRecord(record, ep.path);
    return (await this.apply(ctx.auth, family, rec, { source: 'mutation' })).entry;
  }

  /** A request the caller may subscribe to: from the store, else read upstream (which checks ownership). */
  async findForSubscription(ctx: SubgraphContext, id: string, family: RiskFamilyName | null): Promise<TrackedRequest> {
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
    family: RiskFamilyName,
    record: Obj,
    opts: { source: 'mutation' | 'read' | 'callback' | 'poll'; relay?: RelayTarget | null },
  ): Promise<{ entry: TrackedRequest; changed: boolean }> {
    // The caller's callback shown in the record: the one given now, else the one the store holds.
    const relayTo = opts.relay !== undefined ? opts.relay : ((await this.store.get(auth.tenant, String(record.id)))?.relay ?? null);
    const clean = this.withoutLayerCallback(record, relayTo);
    const obs = await this.store.observe(auth.tenant, family, clean, { relay: opts.relay, token: auth.token });
    const entry = obs.entry;
    if (obs.changed) {
      this.bus.publish(requestTopic(auth.tenant, entry.id), entry);
      this.bus.publish(tenantTopic(auth.tenant), entry);
    }
    // Callbacks are relayed once each unless stale; the poller's finds only when they are news.
    const relayed = (opts.source === 'callback' && rawStateOf(clean) === entry.rawState) || (opts.source === 'poll' && obs.changed);
    if (relayed && entry.relay && (await this.store.markRelayed(auth.tenant, entry.id, deliveryNonce(record)))) {
      const payload = { data: { ...entry.record, callback: vendorCallback(entry.relay) }, success: true, message: '', error: null };
      const target = entry.relay;
      let refused = false;
      const p = relay(target, payload, {
        allowPrivate: this.allowPrivateRelay,
        onRefused: (why) => {
          refused = true;
          console.warn(`[risk] relay of ${entry.id} to the caller's callback refused: ${why}`);
        },
      }).then((status) => {
        if (!refused && (status === null || status >= 400)) console.error(`[risk] relay of ${entry.id} to the caller's callback failed (${status ?? 'no answer'})`);
      });
      this.relays.add(p);
      void p.finally(() => this.relays.delete(p));
    }
    return obs;
  }

  /** Re-reads a late request for the poller. */
  private async refresh(entry: TrackedRequest): Promise<void> {
    const upstream = this.deps?.upstream;
    const token = await this.store.tokenOf(entry.tenant, entry.id);
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
    return { ...record, callback: relayTo ? vendorCallback(relayTo) : null };
  }

  private isLayerCallback(url: string): boolean {
    return layerCallbackKey(this.signer, url) !== null;
  }

  /** A callback's trigger: the request read upstream with the token and family it was created with. */
  private async reread(reservation: Reservation, id: string): Promise<Obj> {
    const upstream = this.deps?.upstream;
    const ep = FAMILIES[reservation.family].get;
    if (!upstream) throw new UpstreamError('network', 'the risk subgraph is not started', ep.area, ep.path, 0);
    return this.fetchRecord({ auth: { token: reservation.token, tenant: reservation.tenant }, meter: new CostMeter(), upstream }, reservation.family, id);
  }

  private requireRecord(data: unknown, path: string): Obj {
    if (!isObj(data) || typeof data.id !== 'string' || data.id === '') {
      throw new UpstreamError('decode', 'the answer carries no request record', 'risk', path.replace(/^\/+/, '').split('/')[0] ?? path, 200);
    }
    return data;
  }

  // ---------------------------------------------------------------------------------------------
  // HTTP routes under /risk

  async http(req: IncomingMessage, res: ServerResponse, path: string): Promise<boolean> {
    if (path.startsWith('/callbacks/')) {
      await handleCallback(req, res, path.slice('/callbacks/'.length), {
        signer: this.signer,
        replay: this.replay,
        store: this.store,
        reread: (reservation, id) => this.reread(reservation, id),
        accept: async (reservation, record) => {
          await this.apply({ token: reservation.token, tenant: reservation.tenant }, reservation.family, record, { source: 'callback', relay: reservation.relay });
        },
        onRefused: (why) => {
          if (why !== 'method') console.warn(`[risk] callback refused: ${why}`);
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
function listOnly(tenant: string, family: RiskFamilyName, item: Obj): TrackedRequest {
  const now = Date.now();
  return {
    tenant,
    family,
    id: String(item.id),
    record: Object.freeze({ ...item }),
    rawState: rawStateOf(item),
    ...timestampsOf(item),
    seq: 0,
    changedAt: now,
    checkedAt: now,
    relay: null,
  };
}
