/**
 * Root resolvers of the risk subgraph (queries, mutations, subscriptions) and the `Company`
 * entity's credit score. Inputs are validated before any call; creation goes through the service,
 * which sets the layer's signed callback.
 */
import { GraphQLError } from 'graphql';
import type { SubgraphContext } from '../../runtime/context.ts';
import { badUserInput, toClientError } from '../../runtime/errors.ts';
import { UpstreamError } from '../../upstream/errors.ts';
import type { CompanyResolvers, MutationResolvers, QueryResolvers, RiskFamily, SubscriptionResolvers } from '../__generated__/resolvers-types.ts';
import { companyScoreIdentifier, scoreIdentifier } from '../identifiers.ts';
import { creditScores } from '../loaders.ts';
import { isFinalState, isObj, toSeconds } from '../model.ts';
import { requestTopic, tenantTopic, type RiskService } from '../service.ts';
import type { TrackedRequest } from '../store.ts';
import { ORDER_FAMILIES, RISK, type RiskFamilyName } from '../upstream.ts';
import {
  anyFiscalCode,
  base64Pdf,
  companyBureauBody,
  companySubjectBody,
  creditScoreMonitorBody,
  idempotencyKey,
  kycCheckBody,
  kycMonitorBody,
  negativeRecordsBody,
  personBureauBody,
  personSubjectBody,
  relayTarget,
  requestId,
} from '../validate.ts';

/** Errors thrown while setting up a subscription take the same codes as query errors. */
function clientError(err: unknown): unknown {
  return toClientError(err) ?? err;
}

/** Maps a live stream of snapshots to subscription payloads, keeping `return()` for clean-up. */
function payloads<K extends string>(key: K, source: AsyncIterableIterator<TrackedRequest>): AsyncIterableIterator<{ [k in K]: TrackedRequest }> {
  const wrap = (r: IteratorResult<TrackedRequest>): IteratorResult<{ [k in K]: TrackedRequest }> =>
    r.done ? { value: undefined, done: true } : { value: { [key]: r.value } as { [k in K]: TrackedRequest }, done: false };
  const it: AsyncIterableIterator<{ [k in K]: TrackedRequest }> = {
    [Symbol.asyncIterator]: () => it,
    next: async () => wrap(await source.next()),
    return: async () => wrap(source.return ? await source.return() : { value: undefined, done: true }),
    throw: async (e?: unknown) => wrap(source.throw ? await source.throw(e) : { value: undefined, done: true }),
  };
  return it;
}

const { PATRIMONIAL, PERSON_REPORT, COMPANY_REPORT, HEIRS, KYC } = ORDER_FAMILIES;

function familyOf(table: Readonly<Record<string, RiskFamilyName>>, value: string, field: string): RiskFamilyName {
  const f = table[value];
  if (!f) throw badUserInput(`${field}: unknown value ${value}`, field);
  return f;
}

export function rootResolvers(service: RiskService) {
  const relayOpts = { allowPrivate: service.allowPrivateRelay };
  const Query: QueryResolvers = {
    creditScore: (_root, { vatCode, taxCode, id, level }, ctx) => creditScores(ctx).load({ code: scoreIdentifier({ vatCode, taxCode, id }), level }),

    verifyFiscalCode: (_root, { taxCode, method }, ctx) => {
      const code = anyFiscalCode(taxCode, 'taxCode');
      // One call per code and method in a query (aliases, fragments): a POST is never cached upstream.
      return ctx.once(`risk:verifyFiscalCode:${method}:${code}`, async () => {
        const data =
          method === 'POST'
            ? await ctx.upstream.call<unknown>(ctx, RISK.verifyFiscalCodePost, { body: { codice_fiscale: code } })
            : await ctx.upstream.call<unknown>(ctx, RISK.verifyFiscalCode, { params: { code } });
        return { taxCode: code, valid: isObj(data) && (data.validita === true || data.validita === 1 || data.validita === 'true') };
      });
    },

    riskRequest: async (_root, { family, id }, ctx) => {
      const rid = requestId(id);
      try {
        return await service.read(ctx, family, rid);
      } catch (err) {
        // A wrong id and someone else's id look the same: not found.
        if (err instanceof UpstreamError && err.kind === 'http' && (err.status === 400 || err.status === 404)) return null;
        throw err;
      }
    },

    riskRequests: (_root, { family }, ctx) => service.list(ctx, family),
  };

  const Mutation: MutationResolvers = {
    orderPersonBureauReport: (_root, { input, idempotencyKey: key }, ctx) => {
      const idem = idempotencyKey(key);
      const body = personBureauBody(input, 'input', service.maxPdfBytes);
      return service.create(ctx, 'PERSON_BUREAU', body, relayTarget(input.callback, 'input.callback', relayOpts), idem);
    },
    uploadSignedDelegation: (_root, { id, signedDelegationFile }, ctx) => {
      const rid = requestId(id);
      const file = base64Pdf(signedDelegationFile, 'signedDelegationFile', service.maxPdfBytes);
      return service.uploadDelegation(ctx, rid, file);
    },
    orderCompanyBureauReport: (_root, { input, idempotencyKey: key }, ctx) => {
      const idem = idempotencyKey(key);
      const body = companyBureauBody(input, 'input', service.maxPdfBytes);
      return service.create(ctx, 'COMPANY_BUREAU', body, relayTarget(input.callback, 'input.callback', relayOpts), idem);
    },
    uploadCompanySignedDelegation: (_root, { id, signedDelegationFile }, ctx) => {
      const rid = requestId(id);
      const file = base64Pdf(signedDelegationFile, 'signedDelegationFile', service.maxPdfBytes);
      return service.uploadDelegation(ctx, rid, file, 'COMPANY_BUREAU');
    },
    orderPatrimonialReport: (_root, { level, input, idempotencyKey: key }, ctx) => {
      const idem = idempotencyKey(key);
      const body = personSubjectBody(input);
      return service.create(ctx, familyOf(PATRIMONIAL, level, 'level'), body, relayTarget(input.callback, 'input.callback', relayOpts), idem);
    },
    orderPersonReport: (_root, { level, input, idempotencyKey: key }, ctx) => {
      const idem = idempotencyKey(key);
      const body = personSubjectBody(input);
      return service.create(ctx, familyOf(PERSON_REPORT, level, 'level'), body, relayTarget(input.callback, 'input.callback', relayOpts), idem);
    },
    orderHeirsSearch: (_root, { acceptance, input, idempotencyKey: key }, ctx) => {
      const idem = idempotencyKey(key);
      const body = personSubjectBody(input);
      return service.create(ctx, familyOf(HEIRS, acceptance, 'acceptance'), body, relayTarget(input.callback, 'input.callback', relayOpts), idem);
    },
    orderCompanyReport: (_root, { level, input, idempotencyKey: key }, ctx) => {
      const idem = idempotencyKey(key);
      const body = companySubjectBody(input);
      return service.create(ctx, familyOf(COMPANY_REPORT, level, 'level'), body, relayTarget(input.callback, 'input.callback', relayOpts), idem);
    },
    orderNegativeRecordsCheck: (_root, { input, idempotencyKey: key }, ctx) => {
      const idem = idempotencyKey(key);
      const body = negativeRecordsBody(input);
      return service.create(ctx, 'NEGATIVE_RECORDS', body, relayTarget(input.callback, 'input.callback', relayOpts), idem);
    },
    orderKycCheck: (_root, { kind, input, idempotencyKey: key }, ctx) => {
      const idem = idempotencyKey(key);
      const body = kycCheckBody(input);
      return service.create(ctx, familyOf(KYC, kind, 'kind'), body, relayTarget(input.callback, 'input.callback', relayOpts), idem);
    },
    startCreditScoreMonitor: (_root, { input, idempotencyKey: key }, ctx) => {
      const idem = idempotencyKey(key);
      const body = creditScoreMonitorBody(input);
      return service.create(ctx, 'CREDIT_SCORE_MONITOR', body, relayTarget(input.callback, 'input.callback', relayOpts), idem);
    },
    stopCreditScoreMonitor: (_root, { id }, ctx) => service.remove(ctx, 'CREDIT_SCORE_MONITOR', requestId(id)),
    startKycMonitor: (_root, { input, idempotencyKey: key }, ctx) => {
      const idem = idempotencyKey(key);
      const body = kycMonitorBody(input);
      return service.create(ctx, 'KYC_MONITOR', body, relayTarget(input.callback, 'input.callback', relayOpts), idem);
    },
    stopKycMonitor: (_root, { id }, ctx) => service.remove(ctx, 'KYC_MONITOR', requestId(id)),
  };

  const Subscription: SubscriptionResolvers = {
    riskRequestUpdated: {
      subscribe: async (_root, { id, family }, ctx: SubgraphContext) => {
        let entry: TrackedRequest;
        try {
          entry = await service.findForSubscription(ctx, requestId(id), family ?? null);
        } catch (err) {
          if (err instanceof UpstreamError && err.kind === 'http' && (err.status === 400 || err.status === 404)) {
            throw new GraphQLError(`no request ${id} of this account`, { extensions: { code: 'NOT_FOUND' } });
          }
          throw clientError(err);
        }
        const { tenant } = ctx.auth;
        const source = service.bus.subscribe(requestTopic(tenant, entry.id), {
          initial: async () => {
            const latest = await service.store.get(tenant, entry.id);
            return [latest ?? entry];
          },
          identity: (e) => e.id,
          version: (e) => e.seq,
          until: (e) => isFinalState(e.rawState),
        });
        return payloads('riskRequestUpdated', source);
      },
    },
    riskRequestsUpdated: {
      subscribe: (_root, { family, since }, ctx: SubgraphContext) => {
        const { tenant } = ctx.auth;
        const fam: RiskFamily | null = family ?? null;
        let after: number | null = null;
        if (since !== null && since !== undefined) {
          after = toSeconds(since);
          if (after === null) throw badUserInput('since must be an ISO 8601 date-time', 'since');
        }
        const source = service.bus.subscribe(tenantTopic(tenant), {
          replayLatest: false,
          initial: async () => (await service.store.list(tenant, fam ?? undefined)).filter((e) => after === null || (e.updatedAt ?? 0) > after),
          filter: (e) => fam === null || e.family === fam,
          identity: (e) => e.id,
          version: (e) => e.seq,
        });
        return payloads('riskRequestsUpdated', source);
      },
    },
  };

  const Company: CompanyResolvers = {
    __resolveReference: (ref) => ref,
    lookupCode: (company) => company.lookupCode,
    creditScore: (company, { level }, ctx) => {
      // By whichever identifier the company subgraph knew without a purchase.
      const code = companyScoreIdentifier(company);
      return code === null ? null : creditScores(ctx).load({ code, level });
    },
  };

  return { Query, Mutation, Subscription, Company };
}
