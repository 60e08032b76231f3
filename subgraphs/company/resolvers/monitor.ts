/**
 * Company monitoring (upstream `/monitor`): list, read, create (paid, under an idempotency key),
 * delete, and the `companyChanged` subscription, over the company area's tracked work
 * (`../service.ts`). Inputs are validated before any call.
 */
import { GraphQLError } from 'graphql';
import type { SubgraphContext } from '../../runtime/context.ts';
import { badUserInput, toClientError } from '../../runtime/errors.ts';
import { idempotencyKey, relayTarget } from '../../runtime/tracking/args.ts';
import { payloads } from '../../runtime/tracking/subscribe.ts';
import { UpstreamError } from '../../upstream/errors.ts';
import type { CreateCompanyMonitorInput, MutationResolvers, QueryResolvers, SubscriptionResolvers } from '../__generated__/resolvers-types.ts';
import type { CompanyMonitorModel } from '../model.ts';
import { datasetToUpstream, normalizeMonitor } from '../normalize.ts';
import { MONITOR_DELETED } from '../policy.ts';
import type { CompanyService, TrackedMonitor } from '../service.ts';
import type { VMonitor, VMonitorCreateBody } from '../upstream.ts';
import { codeArg, companyCodeArg, foreignIdArg, openapiIdArg, vatCodeArg } from '../validate.ts';
import { validateSourceArguments } from './sources.ts';

/** The GraphQL view of a tracked monitor (the caller's callback in place of the layer's). */
function modelOf(entry: TrackedMonitor): CompanyMonitorModel {
  const m = normalizeMonitor({ ...(entry.record as VMonitor), id: entry.id });
  if (!m) throw new UpstreamError('decode', 'the monitoring request has no id', 'company', 'monitor', 200);
  return m;
}

/** The upstream body and the caller's relay target of a monitor order, validated. */
function monitorOrder(input: CreateCompanyMonitorInput, allowPrivate: boolean): { body: VMonitorCreateBody; relay: ReturnType<typeof relayTarget> } {
  const dataset = datasetToUpstream(input.dataset);
  let code: string;
  if (dataset.startsWith('FR-')) code = foreignIdArg(input.code, 'input.code');
  else {
    const c = companyCodeArg(input.code, 'input.code');
    code = 'vatCode' in c ? c.vatCode : 'taxCode' in c ? c.taxCode : c.id;
  }
  let monitoredFields: string[] | undefined;
  if (input.monitoredFields != null) {
    monitoredFields = input.monitoredFields.map((f) => f.trim());
    if (monitoredFields.length === 0) throw badUserInput('input.monitoredFields must not be empty; omit it to watch the whole dataset', 'input.monitoredFields');
    if (monitoredFields.length > 100) throw badUserInput('input.monitoredFields holds at most 100 fields', 'input.monitoredFields');
    for (const f of monitoredFields) {
      if (!/^[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)*$/.test(f)) throw badUserInput(`input.monitoredFields: "${f}" is not a field path in dot notation`, 'input.monitoredFields');
    }
  }
  // The kit checks the URL (no private address unless allowed) and the retries, under the input's own field names.
  const callbackPaths = { url: 'input.callbackUrl', retry: 'input.callbackRetry' };
  const relay =
    input.callbackUrl === null || input.callbackUrl === undefined
      ? null
      : relayTarget({ url: input.callbackUrl, method: 'JSON', retry: input.callbackRetry ?? 0 }, 'input.callbackUrl', { allowPrivate, paths: callbackPaths });
  if (!relay && (input.callbackRetry ?? 0) !== 0) throw badUserInput('input.callbackRetry needs input.callbackUrl (the retries of the relay to it)', 'input.callbackRetry');
  const cciaa = codeArg(input.chamberOfCommerce, 'input.chamberOfCommerce', /^[A-Z]{2}$/, 'a two-letter chamber-of-commerce code such as RM');
  const body: VMonitorCreateBody = {
    code,
    dataset,
    ...(monitoredFields ? { monitoredFields } : {}),
    autorenew: input.autorenew ?? true,
    ...(cciaa ? { cciaa } : {}),
  };
  return { body, relay };
}

/** Errors thrown while setting up a subscription take the same codes as query errors. */
const clientError = (err: unknown): unknown => toClientError(err) ?? err;

/** A check of a monitor (a monitor never checked, or deleted, is no change of the company). */
const isCheck = (e: TrackedMonitor): boolean => e.rawState !== MONITOR_DELETED && e.record.checkedOn !== null && e.record.checkedOn !== undefined;

export function monitorResolvers(service: CompanyService): { Query: QueryResolvers; Mutation: MutationResolvers; Subscription: SubscriptionResolvers } {
  const Query: QueryResolvers = {
    async companyMonitors(_root, _args, ctx) {
      // The upstream's list (summaries), merged with what the layer knows of each.
      const list = await service.list(ctx, 'COMPANY_MONITOR');
      return list.filter((e) => e.rawState !== MONITOR_DELETED).map(modelOf);
    },
    async companyMonitor(_root, { id }, ctx) {
      const entry = await service.monitor(ctx, openapiIdArg(id));
      return entry ? modelOf(entry) : null;
    },
  };

  const Mutation: MutationResolvers = {
    async createCompanyMonitor(_root, { input, idempotencyKey: key }, ctx, info) {
      const idem = idempotencyKey(key);
      const { body, relay } = monitorOrder(input, service.allowPrivateRelay);
      // The monitored company's fields below are validated too before the paid order.
      validateSourceArguments(ctx, info);
      return modelOf(await service.createMonitor(ctx, body, relay, idem));
    },
    deleteCompanyMonitor: (_root, { id }, ctx) => service.deleteMonitor(ctx, openapiIdArg(id)),
  };

  const Subscription: SubscriptionResolvers = {
    companyChanged: {
      subscribe: async (_root, { monitorId, vatCode }, ctx: SubgraphContext) => {
        const { tenant } = ctx.auth;
        const id = monitorId === null || monitorId === undefined ? null : openapiIdArg(monitorId, 'monitorId');
        const vat = vatCode === null || vatCode === undefined ? null : vatCodeArg(vatCode);
        if (id !== null) {
          // The caller's own monitor only: from the store, else read upstream (which checks ownership).
          try {
            await service.findForSubscription(ctx, id, 'COMPANY_MONITOR');
          } catch (err) {
            if (err instanceof UpstreamError && err.kind === 'http' && (err.status === 400 || err.status === 404 || err.status === 406)) {
              throw new GraphQLError(`no company monitor ${id} of this account`, { extensions: { code: 'NOT_FOUND' } });
            }
            throw clientError(err);
          }
        }
        const matches = (e: TrackedMonitor): boolean => isCheck(e) && (id === null || e.id === id) && (vat === null || e.record.vatCode === vat);
        const source = service.bus.subscribe(service.tenantTopic(tenant), {
          replayLatest: false,
          // The latest check of each monitor matched, most recent first.
          initial: async () => (await service.store.list(tenant, 'COMPANY_MONITOR')).filter(matches).sort((a, b) => b.changedAt - a.changedAt),
          filter: matches,
          identity: (e) => e.id,
          version: (e) => e.seq,
        });
        return payloads('companyChanged', source);
      },
      // The GraphQL view of each tracked monitor.
      resolve: (payload: { companyChanged: TrackedMonitor }) => modelOf(payload.companyChanged),
    },
  };

  return { Query, Mutation, Subscription };
}
