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
import { CostMeter } from '../upstream/cost.ts';
import { UpstreamError } from '../upstream/errors.ts';
import { CALLBACK_PURPOSE, deliveryNonce, handleCallback, relay, vendorCallback } from './callbacks.ts';
import { FileGrants, sendJson } from './files.ts';
import { isObj, rawStateOf, timestampsOf, type Obj } from './model.ts';
import { pollerOptionsFromEnv, RiskPoller } from './poller.ts';
import { MemoryRequestStore, type RelayTarget, type RequestStore, type TrackedRequest } from './store.ts';
import { FAMILIES, RISK, type RiskFamilyName } from './upstream.ts';

export interface RiskServiceOptions {
  store?: RequestStore;
  bus?: EventBus<TrackedRequest>;
  signer?: Signer;
  replay?: ReplayGuard;
  /** Lifetime of a callback URL. `RISK_CALLBACK_TTL_S`. @default 30 days */
  callbackTtlSeconds?: number;
  /** Lifetime of a file URL. `RISK_FILE_URL_TTL_S`. @default 300 */
  fileTtlSeconds?: number;
  /** Where the `RISK_*`, `LAYER_SECRET` and `PUBLIC_URL` settings are read. @default process.env */
  env?: NodeJS.ProcessEnv;
}

const envNumber = (env: NodeJS.ProcessEnv, name: string, dflt: number): number => {
  const v = Number(env[name]);
  return env[name] !== undefined && env[name] !== '' && Number.isFinite(v) && v > 0 ? v : dflt;
};

/** Topic of one request's changes. */
export const requestTopic = (tenant: string, id: string): string => `risk:${tenant}:${id.toLowerCase()}`;
/** Topic of every change of a tenant's requests. */
export const tenantTopic = (tenant: string): string => `risk:${tenant}`;

export class RiskService {
  readonly store: RequestStore;
  readonly bus: EventBus<TrackedRequest>;
  readonly replay: ReplayGuard;
  readonly callbackTtlSeconds: number;
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
   * and records the answer. Never retried (the upstream client does not retry POSTs).
   */
  async create(ctx: SubgraphContext, family: RiskFamilyName, body: Obj, relayTo: RelayTarget | null): Promise<TrackedRequest> {
    const base = this.publicUrl();
    const key = randomId(16);
    const upstreamBody: Obj = { ...body };
    if (base) {
      const token = this.signer.sign(CALLBACK_PURPOSE, key, this.callbackTtlSeconds);
      const expiresAt = Number(token.split('.')[1]);
      await this.store.reserve({ key, tenant: ctx.auth.tenant, family, id: null, relay: relayTo, expiresAt, token: ctx.auth.token });
      upstreamBody.callback = { url: `${base}/callbacks/risk/${token}`, method: 'JSON', field: 'data', headers: {} };
    }
    let record: unknown;
    try {
      record = await ctx.upstream.call<unknown>(ctx, FAMILIES[family].create, { body: upstreamBody });
    } catch (err) {
      await this.store.dropReservation(key);
      throw err;
    }
    const rec = this.requireRecord(record, FAMILIES[family].create.path);
    if (base) await this.store.bindKey(key, String(rec.id).toLowerCase());
    return (await this.apply(ctx.auth, family, rec, { source: 'mutation', relay: relayTo })).entry;
  }

  /** Reads one request upstream (free) and records what it says. */
  async read(ctx: CallContext & { upstream: UpstreamClient }, family: RiskFamilyName, id: string): Promise<TrackedRequest> {
    const record = await ctx.upstream.call<unknown>(ctx, FAMILIES[family].get, { params: { id } });
    const rec = this.requireRecord(record, FAMILIES[family].get.path);
    return (await this.apply(ctx.auth, family, rec, { source: 'read' })).entry;
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
    const clean = this.withoutLayerCallback(record, opts.relay ?? null);
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
      const p = relay(target, payload).then((status) => {
        if (status === null || status >= 400) console.error(`[risk] relay of ${entry.id} to the caller's callback failed (${status ?? 'no answer'})`);
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
    const record = await upstream.call<unknown>({ auth, meter: new CostMeter() }, FAMILIES[entry.family].get, { params: { id: entry.id } });
    const rec = this.requireRecord(record, FAMILIES[entry.family].get.path);
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
    const m = /\/callbacks\/risk\/([^/?#]+)/.exec(url);
    if (!m?.[1]) return false;
    const v = this.signer.verify(CALLBACK_PURPOSE, m[1]);
    return v.ok || v.reason === 'expired';
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
        accept: async (reservation, record) => {
          const token = (await this.store.reservation(reservation.key))?.token ?? '';
          await this.apply({ token, tenant: reservation.tenant }, reservation.family, record, { source: 'callback', relay: reservation.relay });
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
