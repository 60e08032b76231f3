/**
 * The PEC area's tracked work: the kit's service (`runtime/tracking/service.ts`) over the PEC
 * families (mailboxes, register notifications) and state policy, plus the area's own operations on
 * an existing mailbox (activation upload, sizes, preservation, upgrade, renewal) and the
 * availability check that guards a registration. Settings: `PEC_*` of the env given (paths, box-type
 * words, callback and file URL lifetimes, poller, PDF size limit).
 */
import { GraphQLError } from 'graphql';
import type { SubgraphContext } from '../runtime/context.ts';
import { fingerprintOf, keyReused, outcomeUnknownError, TrackingService, type TrackingServiceOptions } from '../runtime/tracking/service.ts';
import type { TrackedRequest } from '../runtime/tracking/store.ts';
import { maxPdfBytes } from '../runtime/tracking/uploads.ts';
import type { CallContext, CallOptions, Upstream } from '../upstream/upstream.ts';
import type { Endpoint } from '../upstream/endpoint.ts';
import { mayHaveBeenCarriedOut, UpstreamError } from '../upstream/errors.ts';
import { priceOf } from '../../contract/prices.ts';
import { isObj, type Obj } from '../../contract/values.ts';
import { contractState } from './model.ts';
import { pecArea } from './policy.ts';
import type { PecProviderDomains } from '../../contract/pec-domains.ts';
import { familiesOf, pecEndpoints, providerDomains, type PecEndpoints, type PecFamily, type PecKind } from './upstream.ts';
import { settingsOf, type Settings, type SettingsSource } from '../../platform/settings.ts';

export type PecServiceOptions = TrackingServiceOptions<PecFamily> & { env: SettingsSource };
export type TrackedPec = TrackedRequest<PecFamily>;

export class PecService extends TrackingService<PecFamily, PecKind> {
  /** The deployment's endpoint table (`PEC_PATHS` applied). */
  readonly endpoints: PecEndpoints;
  /** Largest PDF accepted (decoded bytes): `PEC_MAX_PDF_BYTES`. @default 5 MB */
  readonly maxPdfBytes: number;
  readonly settings: Settings;
  /** Which provider domains serve which box types (`PEC_PROVIDER_DOMAINS` applied). */
  readonly providerDomains: PecProviderDomains;

  constructor(opts: PecServiceOptions) {
    const settings = settingsOf(opts.env);
    const endpoints = pecEndpoints(settings);
    super(pecArea(familiesOf(endpoints)), opts);
    this.endpoints = endpoints;
    this.settings = settings;
    this.maxPdfBytes = maxPdfBytes(settings, 'pec');
    this.providerDomains = providerDomains(settings);
  }

  /**
   * Whether an address is free (`verifica_pec`, priced). Throws `ADDRESS_UNAVAILABLE` when it is
   * not: the registration is then never paid for.
   */
  async requireAvailable(ctx: SubgraphContext, address: string): Promise<void> {
    const data = await ctx.upstream.call<unknown>(ctx, this.endpoints.availability, { params: { address } });
    if (isObj(data) && data.available === true) return;
    throw new GraphQLError(`${address} is not available: choose another address (nothing was registered or charged for it)`, {
      extensions: { code: 'ADDRESS_UNAVAILABLE', field: 'input.address' },
    });
  }

  /** Whether a domain is certified (domini_pec: 200 found, 204 not), and the service's message. */
  async domainCertified(ctx: SubgraphContext, domain: string): Promise<{ certified: boolean; message: string | null }> {
    try {
      const body = await ctx.upstream.call<unknown>(ctx, this.endpoints.domain, { params: { domain } });
      return { certified: true, message: isObj(body) && typeof body.message === 'string' ? body.message : null };
    } catch (err) {
      if (err instanceof UpstreamError && (err.status === 204 || err.graphqlCode === 'UPSTREAM_NOT_FOUND')) return { certified: false, message: null };
      throw err;
    }
  }

  /**
   * A record read by id for the kit (reads, the poller, callbacks, subscriptions). A notification is
   * first looked up in the free list (`GET /comunica_pec`, which never sends): the contract's read
   * `GET /comunica_pec/{id}` sends and finalizes one whose delegation is in (`documenti_caricati`),
   * so such a notification is answered from the list item over what the store holds, never read by
   * id. Every other state is read by id (the full record). One not in the list is not found.
   */
  protected override async fetchRecord(ctx: CallContext & { upstream: Upstream }, family: PecFamily, id: string): Promise<Obj> {
    if (family !== 'NOTIFICATION') return super.fetchRecord(ctx, family, id);
    const listed = await this.listedNotice(ctx, id);
    if (contractState(typeof listed.stato === 'string' ? listed.stato : null) !== 'documenti_caricati') return super.fetchRecord(ctx, family, id);
    const known = await this.store.get(ctx.auth.tenant, id);
    return { ...(known?.family === 'NOTIFICATION' ? known.record : {}), ...listed };
  }

  /** A notification's item in the account's free list; a 404 (`UPSTREAM_NOT_FOUND`) when it is not there. */
  private async listedNotice(ctx: CallContext & { upstream: Upstream }, id: string): Promise<Obj> {
    const ep = this.endpoints.noticeList;
    const missing = (): UpstreamError => new UpstreamError('http', `no notification ${id} of this account`, 'pec', 'comunica_pec', 404);
    let items: unknown;
    try {
      items = await ctx.upstream.call<unknown>(ctx, ep);
    } catch (err) {
      // "no request linked to this account": none of this account's, this one included.
      if (err instanceof UpstreamError && err.graphqlCode === 'UPSTREAM_NOT_FOUND') throw missing();
      throw err;
    }
    const item = Array.isArray(items) ? items.find((x): x is Obj => isObj(x) && String(x.id).toLowerCase() === id.toLowerCase()) : undefined;
    if (!item) throw missing();
    return item;
  }

  /** A mailbox or notification as the layer knows it, else read upstream (free). */
  async current(ctx: SubgraphContext, family: PecFamily, id: string): Promise<TrackedPec> {
    const known = await this.store.get(ctx.auth.tenant, id);
    if (known && known.family === family) return known;
    return this.read(ctx, family, id);
  }

  /**
   * A paid operation on an existing record under the caller's idempotency key (the kit's keys, 24
   * hours per tenant): the same key with the same operation returns the record without a second
   * call; with another operation, `IDEMPOTENCY_KEY_REUSED`; while the first is in flight or got no
   * answer, `OUTCOME_UNKNOWN`. `check` (state checks, free reads) runs only for a new key. Without a
   * key, `check` then `operate`.
   */
  async operateKeyed(
    ctx: SubgraphContext,
    key: string | null,
    family: PecFamily,
    ep: Endpoint,
    id: string,
    opts: Omit<CallOptions, 'params'> & { price?: number },
    check: () => Promise<void>,
  ): Promise<TrackedPec> {
    if (key === null) {
      await check();
      return this.operate(ctx, family, ep, id, opts);
    }
    const { tenant } = ctx.auth;
    const fingerprint = fingerprintOf(family, { operation: `${ep.method} ${ep.path}`, id, query: opts.query ?? null, body: opts.body ?? null });
    const held = await this.store.idempotencyRecord(tenant, key);
    if (held) return this.answerHeld(ctx, held.fingerprint, fingerprint, key, held.state, held.atRisk, family, id);
    await check();
    const raced = await this.store.claimIdempotencyKey({
      tenant,
      key,
      family,
      fingerprint,
      reservation: null,
      relay: null,
      state: 'pending',
      id: null,
      startedAt: Date.now(),
      atRisk: 0,
    });
    if (raced) return this.answerHeld(ctx, raced.fingerprint, fingerprint, key, raced.state, raced.atRisk, family, id);
    try {
      const out = await this.operate(ctx, family, ep, id, opts);
      await this.store.settleIdempotencyKey(tenant, key, { state: 'created', id: out.id });
      return out;
    } catch (err) {
      if (!mayHaveBeenCarriedOut(err)) {
        await this.store.releaseIdempotencyKey(tenant, key);
        throw err;
      }
      const atRisk = err instanceof UpstreamError && err.atRisk > 0 ? err.atRisk : (opts.price ?? priceOf(ep.area, ep.method, ep.path));
      await this.store.settleIdempotencyKey(tenant, key, { state: 'unknown', atRisk });
      throw outcomeUnknownError(err, key, atRisk);
    }
  }

  private async answerHeld(ctx: SubgraphContext, heldPrint: string, print: string, key: string, state: string, atRisk: number, family: PecFamily, id: string): Promise<TrackedPec> {
    if (heldPrint !== print) throw keyReused(key);
    if (state === 'created') return this.current(ctx, family, id);
    throw new GraphQLError(
      state === 'pending'
        ? `the operation under idempotencyKey "${key}" is still in flight; retry in a moment with the same key`
        : `the operation under idempotencyKey "${key}" got no answer: it may have been carried out (and charged); check the mailbox before ordering again with a new key`,
      { extensions: { code: 'OUTCOME_UNKNOWN', outcome: state === 'pending' ? 'pending' : 'unknown', atRisk, idempotencyKey: key } },
    );
  }

  /** One operation on an existing record (PATCH / GET / POST with the id): the answer is recorded and published. */
  async operate(ctx: SubgraphContext, family: PecFamily, ep: Endpoint, id: string, opts: Omit<CallOptions, 'params'> = {}): Promise<TrackedPec> {
    const data = await ctx.upstream.call<unknown>(ctx, ep, { ...opts, params: { id } });
    if (!isObj(data) || typeof data.id !== 'string' || data.id === '') {
      throw new UpstreamError('decode', 'the answer carries no record', 'pec', ep.path.replace(/^\/+/, '').split('/')[0] ?? ep.path, 200);
    }
    return (await this.apply(ctx.auth, family, data, { source: 'mutation' })).entry;
  }
}
