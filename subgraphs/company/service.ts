/**
 * The company area's tracked work: company monitors, on the kit's service
 * (`runtime/tracking/service.ts`) over the company family table and state policy (`policy.ts`).
 *
 * Creating a monitor (paid, under an idempotency key) gives the upstream the layer's signed
 * callback URL (`<PUBLIC_URL>/callbacks/company/…`, whenever the layer has a public URL), so the
 * layer hears every check; the caller's own `callbackUrl` is relayed to (relay guard, retries).
 * Every new check (callback, poll of a late monitor, read) is published to the tenant's topic
 * (`companyChanged`) and first drops that tenant's cached data of the company (`changed`), so the
 * next query buys fresh data. Other tenants' caches are left alone: they pay for their own data.
 *
 * Settings: `COMPANY_*` of the env given (`COMPANY_CALLBACK_TTL_S`, `COMPANY_MONITOR_CALLBACK_TTL_S`,
 * `COMPANY_POLL_*`, `COMPANY_MONITOR_POLL_MS` — how often a running monitor is read in case its
 * callback was lost, default one day — and `COMPANY_RELAY_ALLOW_PRIVATE`).
 */
import type { SubgraphContext } from '../runtime/context.ts';
import { TrackingService, type TrackingServiceOptions } from '../runtime/tracking/service.ts';
import type { RelayTarget, TrackedRequest } from '../runtime/tracking/store.ts';
import { CostMeter } from '../upstream/cost.ts';
import type { Endpoint } from '../upstream/endpoint.ts';
import { UpstreamError } from '../upstream/errors.ts';
import type { Upstream } from '../upstream/upstream.ts';
import { COMPANY_AREA, MONITOR_DELETED, type CompanyFamilyName, type CompanyRecordKind } from './policy.ts';
import { COMPANY_ENDPOINTS, type VMonitorCreateBody } from './upstream.ts';

export type CompanyServiceOptions = TrackingServiceOptions<CompanyFamilyName>;
export type TrackedMonitor = TrackedRequest<CompanyFamilyName>;

const isNotFound = (err: unknown): boolean => err instanceof UpstreamError && err.graphqlCode === 'UPSTREAM_NOT_FOUND';

/**
 * The cached company lookups keyed by one company code (`/<endpoint>/{code}`): every GET of the
 * endpoint table with a cache lifetime whose only parameter is the last path segment. Lookups that
 * also take a query (a date, a second code) are keyed by it too and cannot be listed; they live
 * their usual lifetime.
 */
const LOOKUPS_BY_CODE: Array<{ ep: Endpoint; param: string }> = Object.values<Endpoint>(COMPANY_ENDPOINTS).flatMap((ep) => {
  const m = /^\/[^/{}]+\/\{(\w+)\}$/.exec(ep.path);
  return ep.method === 'GET' && (ep.ttl ?? 0) > 0 && !ep.decode && m?.[1] ? [{ ep, param: m[1] }] : [];
});

/** The codes a monitored company may have been looked up by (VAT number, tax code, Openapi id, the monitor's code). */
function codesOf(record: Readonly<Record<string, unknown>>): string[] {
  const codes = new Set<string>();
  for (const k of ['vatCode', 'taxCode', 'companyId', 'code']) {
    const v = record[k];
    if (typeof v === 'string' && v.trim() !== '') codes.add(k === 'companyId' ? v.trim().toLowerCase() : v.trim().toUpperCase());
  }
  return [...codes];
}

export class CompanyService extends TrackingService<CompanyFamilyName, CompanyRecordKind> {
  constructor(opts: CompanyServiceOptions = {}) {
    super(COMPANY_AREA, opts);
  }

  /** Starts monitoring (paid) under an idempotency key; the layer's callback is set by the kit. */
  createMonitor(ctx: SubgraphContext, body: VMonitorCreateBody, relayTo: RelayTarget | null, key: string | null): Promise<TrackedMonitor> {
    const upstreamBody = { ...body };
    delete upstreamBody.callback;
    return this.create(ctx, 'COMPANY_MONITOR', upstreamBody, relayTo, key);
  }

  /** One monitor, read upstream (free) and recorded; null when the upstream does not know it for this caller. */
  async monitor(ctx: SubgraphContext, id: string): Promise<TrackedMonitor | null> {
    try {
      return await this.read(ctx, 'COMPANY_MONITOR', id);
    } catch (err) {
      if (isNotFound(err)) return null;
      throw err;
    }
  }

  /** Stops a monitor upstream; the layer's record becomes final (its callback URL is dropped, the poller stops). */
  async deleteMonitor(ctx: SubgraphContext, id: string): Promise<string> {
    await ctx.upstream.call<unknown>(ctx, COMPANY_ENDPOINTS.monitorDelete, { params: { id } });
    const known = await this.store.get(ctx.auth.tenant, id);
    if (known) await this.apply(ctx.auth, 'COMPANY_MONITOR', { ...known.record, id: known.id, state: MONITOR_DELETED }, { source: 'mutation' });
    return id;
  }

  /**
   * Drops the tenant's cached data of a monitored company when a check is seen (not on creation: no
   * check happened yet). Done before the change is published, so a subscriber that queries at once
   * buys fresh data.
   */
  protected override async changed(entry: TrackedMonitor, source: 'mutation' | 'read' | 'callback' | 'poll'): Promise<void> {
    if (source === 'mutation' || entry.rawState === MONITOR_DELETED) return;
    if (entry.record.checkedOn === null || entry.record.checkedOn === undefined) return;
    const upstream = this.upstream;
    if (upstream) await invalidateCompany(upstream, entry.tenant, entry.record);
  }
}

/**
 * Drops one tenant's cached lookups of a company, under every code it may have been asked by, and
 * its slow datasets still pending upstream (`Upstream.forget`): a request ordered before the change
 * would deliver the data as it was, so the next read buys it again.
 */
export async function invalidateCompany(upstream: Upstream, tenant: string, record: Readonly<Record<string, unknown>>): Promise<void> {
  const ctx = { auth: { token: '', tenant }, meter: new CostMeter() };
  const codes = codesOf(record);
  await Promise.all(LOOKUPS_BY_CODE.flatMap(({ ep, param }) => codes.map((code) => upstream.forget(ctx, ep, { params: { [param]: code } }))));
}
