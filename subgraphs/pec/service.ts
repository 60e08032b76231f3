/**
 * The PEC area's tracked work: the kit's service (`runtime/tracking/service.ts`) over the PEC
 * families (mailboxes, register notifications) and state policy, plus the area's own operations on
 * an existing mailbox (activation upload, sizes, preservation, upgrade, renewal) and the
 * availability check that guards a registration. Settings: `PEC_*` of the env given (paths, box-type
 * words, callback and file URL lifetimes, poller, PDF size limit).
 */
import { GraphQLError } from 'graphql';
import type { SubgraphContext } from '../runtime/context.ts';
import { TrackingService, type TrackingServiceOptions } from '../runtime/tracking/service.ts';
import type { TrackedRequest } from '../runtime/tracking/store.ts';
import { maxPdfBytes } from '../runtime/tracking/uploads.ts';
import type { CallOptions } from '../upstream/upstream.ts';
import type { Endpoint } from '../upstream/endpoint.ts';
import { UpstreamError } from '../upstream/errors.ts';
import { isObj, type Obj } from './model.ts';
import { pecArea } from './policy.ts';
import { familiesOf, pecEndpoints, type PecEndpoints, type PecFamily, type PecKind } from './upstream.ts';

export type PecServiceOptions = TrackingServiceOptions<PecFamily> & { env: NodeJS.ProcessEnv };
export type TrackedPec = TrackedRequest<PecFamily>;

export class PecService extends TrackingService<PecFamily, PecKind> {
  /** The deployment's endpoint table (`PEC_PATHS` applied). */
  readonly endpoints: PecEndpoints;
  /** Largest PDF accepted (decoded bytes): `PEC_MAX_PDF_BYTES`. @default 5 MB */
  readonly maxPdfBytes: number;
  readonly settings: NodeJS.ProcessEnv;

  constructor(opts: PecServiceOptions) {
    const endpoints = pecEndpoints(opts.env);
    super(pecArea(familiesOf(endpoints)), opts);
    this.endpoints = endpoints;
    this.settings = opts.env;
    this.maxPdfBytes = maxPdfBytes(opts.env, 'pec');
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

  /** A mailbox or notification as the layer knows it, else read upstream (free). */
  async current(ctx: SubgraphContext, family: PecFamily, id: string): Promise<TrackedPec> {
    const known = await this.store.get(ctx.auth.tenant, id);
    if (known && known.family === family) return known;
    return this.read(ctx, family, id);
  }

  /** One operation on an existing record (PATCH / GET / POST with the id): the answer is recorded and published. */
  async operate(ctx: SubgraphContext, family: PecFamily, ep: Endpoint, id: string, opts: Omit<CallOptions, 'params'> = {}): Promise<TrackedPec> {
    const data = await ctx.upstream.call<unknown>(ctx, ep, { ...opts, params: { id } });
    if (!isObj(data) || typeof data.id !== 'string' || data.id === '') {
      throw new UpstreamError('decode', 'the answer carries no record', 'pec', ep.path.replace(/^\/+/, '').split('/')[0] ?? ep.path, 200);
    }
    return (await this.apply(ctx.auth, family, data as Obj, { source: 'mutation' })).entry;
  }
}
