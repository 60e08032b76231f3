/** The account subgraph's resolvers: each field one call to the authorization area. */
import { GraphQLError } from 'graphql';
import type { Resolvers } from './__generated__/resolvers-types.ts';
import type { SubgraphContext } from '../runtime/context.ts';
import { badUserInput, forbidden } from '../runtime/errors.ts';
import { optionalText, requiredText } from '../runtime/validate.ts';
import type { CallOptions } from '../upstream/upstream.ts';
import type { Endpoint } from '../upstream/endpoint.ts';
import { orNull, UpstreamError } from '../upstream/errors.ts';
import { OAUTH, type TokenDetail } from './upstream.ts';
import { registerSecrets } from '../../platform/redact.ts';
import { AREA_HOSTS, type Area } from '../../contract/areas.ts';
import { managedTokenOf } from '../upstream/service-token.ts';
import { accountGuardOf } from '../upstream/account-guard.ts';
import { SCOPE_FORMAT } from '../../contract/scopes.ts';
import { ACCOUNT_KEY_HEADER, checkAccess, type AccountAccess } from './access.ts';
import { asText, isObj, objects, type Obj } from '../../contract/values.ts';
import { float as num } from '../upstream/coerce.ts';
import { REDACTED_HEADER } from '../runtime/tracking/store.ts';
import { spendingValue } from './spending.ts';
import { periodOf } from '../../contract/prices.ts';
import { costSettled, operationCost, settleCosts } from './settlement.ts';

const int = (v: unknown): number | null => {
  const n = num(v);
  return n === null ? null : Math.round(n);
};
const str = (v: unknown): string | null => asText(v, null);

/** What a token looks like in lists: never its whole value. */
export const hintOf = (token: string): string => (token.length >= 12 ? `…${token.slice(-4)}` : '…');

export interface AccountOptions {
  /** Who may use the account fields (an operator's view): see `access.ts`. */
  access: AccountAccess;
  /** The vendor areas the layer serves (every area of the registry): the hosts scopes may name. */
  servedAreas: readonly Area[];
}

function guard(ctx: SubgraphContext, opts: AccountOptions): void {
  checkAccess(opts.access, ctx.headers?.get(ACCOUNT_KEY_HEADER));
  if (!ctx.upstream.config.accountCredentials) {
    throw new GraphQLError('no Openapi account configured: set OPENAPI_EMAIL and OPENAPI_APIKEY', { extensions: { code: 'ACCOUNT_NOT_CONFIGURED' } });
  }
}

function paging(args: { skip?: number | null; limit?: number | null }, dflt: number): { skip: number; limit: number } {
  const skip = args.skip ?? 0;
  const limit = args.limit ?? dflt;
  if (!Number.isInteger(skip) || skip < 0) throw badUserInput('skip must be 0 or more', 'skip');
  if (!Number.isInteger(limit) || limit < 1 || limit > 100) throw badUserInput('limit must be between 1 and 100', 'limit');
  return { skip, limit };
}

function date(v: string | null | undefined): string | null {
  const d = optionalText(v, 'date', 10);
  if (d !== null && !/^\d{4}(-\d{2}(-\d{2})?)?$/.test(d)) throw badUserInput('date must be YYYY, YYYY-MM or YYYY-MM-DD', 'date');
  return d;
}

function tokenArg(v: string): string {
  const t = requiredText(v, 'token', 128);
  if (!/^[A-Za-z0-9_.-]{8,128}$/.test(t)) throw badUserInput('token is not a token value', 'token');
  return t;
}

const call = <T>(ctx: SubgraphContext, ep: Endpoint, opts?: CallOptions): Promise<T> => ctx.upstream.call<T>(ctx, ep, opts);

function token(d: TokenDetail | Obj) {
  const o = d as Obj;
  const limits = isObj(o.limits) ? o.limits : {};
  const stats = isObj(o.stats) ? o.stats : {};
  return {
    hint: hintOf(asText(o.token)),
    name: str(o.name),
    scopes: Array.isArray(o.scopes) ? o.scopes.filter((s): s is string => typeof s === 'string') : [],
    createdAt: str(o.createdAt),
    updatedAt: str(o.updatedAt),
    expireAt: str(o.expireAt),
    limits: {
      totalRequests: int(limits.totalRequests),
      walletRequests: int(limits.walletRequests),
      subscriptionRequests: int(limits.subscriptionRequests),
      walletAmount: num(limits.walletAmount),
      ip: Array.isArray(limits.ip) ? limits.ip.filter((s): s is string => typeof s === 'string') : null,
    },
    stats: {
      totalRequests: int(stats.totalRequests),
      walletRequests: int(stats.walletRequests),
      subscriptionRequests: int(stats.subscriptionRequests),
      errorRequests: int(stats.errorRequests),
      walletAmount: num(stats.walletAmount),
      ip: Array.isArray(stats.ip) ? stats.ip.filter((s): s is string => typeof s === 'string') : null,
    },
  };
}

const usage = (o: Obj) => ({
  totalRequests: int(o.totalRequests),
  walletRequests: int(o.walletRequests),
  subscriptionRequests: int(o.subscriptionRequests),
  errorRequests: int(o.errorRequests),
  walletAmount: num(o.walletAmount),
  totalIps: int(o.totalIps),
  totalApis: int(o.totalApis),
});

const scope = (o: Obj) => ({
  id: asText(o.id),
  scope: asText(o.scope),
  method: str(o.method),
  endpoint: str(o.endpoint),
  domain: str(o.domain),
  enabled: typeof o.enabled === 'boolean' ? o.enabled : null,
});

const subscription = (o: Obj) => ({
  id: asText(o.id),
  scope: asText(o.scope),
  active: typeof o.active === 'boolean' ? o.active : null,
  availableRequests: int(o.availableRequests),
  totalRequests: int(o.totalRequests),
  pricePerRequest: num(o.pricePerRequest),
  type: str(o.type),
  autorenew: typeof o.autorenew === 'boolean' ? o.autorenew : null,
  startsAt: str(o.startsAt),
  expiresAt: str(o.expiresAt),
  domain: str(o.domain),
  price: num(o.price),
  createdAt: str(o.createdAt),
  updatedAt: str(o.updatedAt),
});

/** Callback header values shown as they are; any other (a credential, a signature) is redacted. */
const PLAIN_HEADERS = new Set(['content-type', 'content-length', 'accept', 'user-agent']);

const headerValue = (name: string, v: unknown): string => (PLAIN_HEADERS.has(name.toLowerCase()) ? asText(v) : REDACTED_HEADER);

/**
 * A callback payload with the header values of every callback object inside it redacted: the
 * vendor's records echo their own `callback` (headers included) in the payload they deliver.
 */
function redactPayload(v: unknown, depth = 0): unknown {
  if (depth > 20) return null;
  if (Array.isArray(v)) return v.map((x) => redactPayload(x, depth + 1));
  if (!isObj(v)) return v;
  const out: Obj = {};
  for (const [k, x] of Object.entries(v)) {
    out[k] =
      k === 'callback' && isObj(x) && isObj(x.headers)
        ? { ...x, headers: Object.fromEntries(Object.entries(x.headers).map(([n, hv]) => [n, headerValue(n, hv)])) }
        : redactPayload(x, depth + 1);
  }
  return out;
}

const callback = (c: Obj) => ({
  id: asText(c.id),
  scope: str(c.scope),
  url: str(c.url),
  httpResponseCode: int(c.httpResponseCode),
  startedAt: str(c.startedAt),
  completedAt: str(c.completedAt),
  domain: str(c.domain),
  active: typeof c.active === 'boolean' ? c.active : null,
  createdAt: str(c.createdAt),
  data: c.data === undefined ? null : redactPayload(c.data),
  custom: c.custom ?? null,
  headers: isObj(c.headers) ? Object.entries(c.headers).map(([name, v]) => ({ name, value: headerValue(name, v) })) : null,
  elapsedTime: int(c.elapsedTime),
  attempt: int(c.attempt),
  retry: int(c.retry),
  field: str(c.field),
  method: str(c.method),
});

type LimitsInput =
  | { totalRequests?: number | null; walletRequests?: number | null; subscriptionRequests?: number | null; walletAmount?: number | null; ip?: readonly string[] | null }
  | null
  | undefined;
function limitsBody(l: LimitsInput): Obj | undefined {
  if (!l) return undefined;
  const out: Obj = {};
  for (const [k, v] of Object.entries(l)) if (v !== null && v !== undefined) out[k] = v;
  return out;
}

/** The hosts of the areas the layer serves (the authorization area is none of them), as scopes name them. */
function servedHosts(ctx: SubgraphContext, served: readonly Area[]): Set<string> {
  const areas = new Set(served);
  const production = ctx.upstream.config.env === 'production';
  // Scopes may name the sandbox host with or without `test.` (the vendor adds it).
  return new Set([...areas].flatMap((a) => (production ? [AREA_HOSTS[a]] : [AREA_HOSTS[a], `test.${AREA_HOSTS[a]}`])));
}

/**
 * Scopes a token may be given here: `METHOD:host/endpoint` on a host of an area the layer serves,
 * named exactly (no wildcard host, so never `*:*` on every host, nor the authorization area).
 */
function scopesArg(ctx: SubgraphContext, served: readonly Area[], v: readonly string[] | null | undefined, field: string): string[] | undefined {
  if (v === null || v === undefined) return undefined;
  if (v.length === 0) throw badUserInput(`${field} needs at least one scope`, field);
  const hosts = servedHosts(ctx, served);
  for (const s of v) {
    if (!SCOPE_FORMAT.test(s)) throw badUserInput(`${field}: "${s.slice(0, 60)}" is not METHOD:host/endpoint`, field);
    const host = s.slice(s.indexOf(':') + 1, s.indexOf('/'));
    if (!hosts.has(host)) throw badUserInput(`${field}: "${s.slice(0, 60)}" is not on a host the layer serves (${[...hosts].sort().join(', ')})`, field);
  }
  return [...v];
}

/** Refuses to change or delete the layer's own token (the managed one, or OPENAPI_TOKEN). */
function notTheLayers(ctx: SubgraphContext, value: string): string {
  if (value === ctx.upstream.config.serviceToken || managedTokenOf(ctx.upstream)?.owns(value)) {
    throw forbidden("this is the layer's own token: it cannot be changed, rotated or deleted through the account API");
  }
  return value;
}

function ttlArg(v: number | null | undefined): number | undefined {
  if (v === null || v === undefined) return undefined;
  if (!Number.isInteger(v) || v < 1 || v > 365 * 86_400) throw badUserInput('ttl must be between 1 second and a year', 'ttl');
  return v;
}

/** A token's detail, read with the account's credentials (for its refresh token). */
const detail = async (ctx: SubgraphContext, value: string): Promise<TokenDetail | null> => {
  const d = await orNull(call<TokenDetail>(ctx, OAUTH.token, { params: { token: value } }));
  if (d) registerSecrets([d.token, d.refreshToken]);
  return d;
};

/** A token the vendor just created or rotated: its values are redacted from every log line from now on. */
const issued = (d: TokenDetail): TokenDetail => {
  registerSecrets([d.token, d.refreshToken]);
  return d;
};

/** Rotates a token with its refresh token (read first): the old one is deleted upstream. */
export async function rotate(ctx: SubgraphContext, value: string): Promise<TokenDetail> {
  const d = await detail(ctx, value);
  if (!d?.refreshToken) throw new GraphQLError('the account has no such token', { extensions: { code: 'UPSTREAM_NOT_FOUND' } });
  return issued(
    await ctx.upstream.call<TokenDetail>({ auth: { token: d.refreshToken, tenant: ctx.auth.tenant }, meter: ctx.meter }, OAUTH.rotateToken, { params: { token: value }, body: {} }),
  );
}

export function createResolvers(opts: AccountOptions): Resolvers {
  return {
    Query: {
      account: (_, __, ctx) => {
        guard(ctx, opts);
        return {};
      },
      spending: async (_, __, ctx) => {
        // The layer's own token is every such caller's: its tenant's spending is the operator's.
        if (ctx.auth.shared) checkAccess(opts.access, ctx.headers?.get(ACCOUNT_KEY_HEADER));
        const s = await ctx.meter.spending();
        // Without a shared ledger (internal reads): nothing committed, no limit.
        const today = periodOf('day', Date.now());
        return spendingValue(ctx.auth.tenant, s ?? { today, month: today.slice(0, 7), dayCommitted: 0, rows: [] }, s?.limits ?? { operation: null, day: null });
      },
      operationCost: (_, { id }, ctx) => operationCost(ctx, id),
    },
    Subscription: {
      costSettled: {
        subscribe: (_, { operationId }, ctx) => {
          // Every operation of the layer's own token is every such caller's: the operator's to follow.
          if (!operationId && ctx.auth.shared) checkAccess(opts.access, ctx.headers?.get(ACCOUNT_KEY_HEADER));
          return costSettled(ctx, operationId ?? null);
        },
      },
    },
    Account: {
      email: (_, __, ctx) => ctx.upstream.config.accountCredentials?.email ?? '',
      wallet: async (_, __, ctx) => {
        const w = await call<Obj>(ctx, OAUTH.wallet);
        return { credit: num(w.credit) ?? 0, createdAt: str(w.createdAt), updatedAt: str(w.updatedAt) };
      },
      transactions: async (_, args, ctx) => {
        const p = paging(args, 50);
        return objects(await call(ctx, OAUTH.transactions, { query: p })).map((t) => ({
          id: asText(t.id),
          amount: num(t.amount) ?? 0,
          createdAt: str(t.createdAt),
          description: str(t.description),
        }));
      },
      tokens: async (_, args, ctx) => objects(await call(ctx, OAUTH.tokens, { query: paging(args, 100) })).map(token),
      token: async (_, args, ctx) => {
        const d = await detail(ctx, tokenArg(args.token));
        return d ? token(d) : null;
      },
      scopes: async (_, __, ctx) => objects(await call(ctx, OAUTH.scopes)).map(scope),
      scope: async (_, args, ctx) => {
        const id = requiredText(args.id, 'id', 64);
        const d = await orNull(call<Obj>(ctx, OAUTH.scope, { params: { id } }));
        if (!d) return null;
        const free = isObj(d.freeLimits) ? d.freeLimits : {};
        const prices = isObj(d.prices) ? d.prices : {};
        return {
          scope: scope(d),
          freeDayLimit: int(free.dayLimit),
          freeMonthLimit: int(free.monthLimit),
          freeYearLimit: int(free.yearLimit),
          prices: Object.entries(prices).flatMap(([name, v]) => (num(v) === null ? [] : [{ name, euro: num(v)! }])),
        };
      },
      subscriptions: async (_, args, ctx) => {
        const p = paging(args, 100);
        return objects(await call(ctx, OAUTH.subscriptions, { query: { ...p, scopes: args.scopes?.join(',') } })).map(subscription);
      },
      subscription: async (_, args, ctx) => {
        const d = await orNull(call<Obj>(ctx, OAUTH.subscription, { params: { id: requiredText(args.id, 'id', 64) } }));
        return d ? subscription(d) : null;
      },
      stats: async (_, args, ctx) => usage(await call<Obj>(ctx, OAUTH.stats, { query: { date: date(args.date) } })),
      statsByDomain: async (_, args, ctx) => {
        const d = await call<Obj>(ctx, OAUTH.statsApis, { query: { date: date(args.date) } });
        return Object.entries(isObj(d) ? d : {}).map(([domain, v]) => ({ domain, ...usage(isObj(v) ? v : {}), scopes: [] }));
      },
      domainStats: async (_, args, ctx) => {
        const domain = requiredText(args.domain, 'domain', 100);
        const d = await call<Obj>(ctx, OAUTH.statsApi, { params: { domain }, query: { date: date(args.date) } });
        const scopes = isObj(d.scopes) ? d.scopes : {};
        return {
          domain,
          ...usage(d),
          scopes: Object.entries(scopes).map(([s, v]) => {
            const u = usage(isObj(v) ? v : {});
            return { scope: s, totalRequests: u.totalRequests, errorRequests: u.errorRequests, walletAmount: u.walletAmount };
          }),
        };
      },
      ips: async (_, args, ctx) => {
        const d = await call<unknown>(ctx, OAUTH.statsIps, { query: { date: date(args.date) } });
        return Array.isArray(d) ? d.filter((x): x is string => typeof x === 'string') : [];
      },
      errors: async (_, args, ctx) => {
        const p = paging(args, 50);
        return objects(await call(ctx, OAUTH.errors, { query: { ...p, scopes: args.scopes?.join(',') } })).map((e) => ({
          id: asText(e.id),
          scope: str(e.scope),
          domain: str(e.domain),
          errorAt: str(e.errorAt),
          httpResponseCode: int(e.httpResponseCode),
          errorCode: int(e.errorCode),
          message: str(e.message),
          ip: str(e.ip),
        }));
      },
      callbacks: async (_, args, ctx) => objects(await call(ctx, OAUTH.callbacks, { query: paging(args, 50) })).map(callback),
      callback: async (_, args, ctx) => {
        const d = await orNull(call<Obj>(ctx, OAUTH.callback, { params: { id: requiredText(args.id, 'id', 64) } }));
        return isObj(d) ? callback(d) : null;
      },
    },
    Mutation: {
      settleCosts: (_, __, ctx) => {
        guard(ctx, opts);
        return settleCosts(ctx);
      },
      createToken: async (_, { input }, ctx) => {
        guard(ctx, opts);
        const scopes = scopesArg(ctx, opts.servedAreas, input.scopes, 'scopes');
        const body: Obj = { scopes, name: optionalText(input.name, 'name', 100) ?? undefined, ttl: ttlArg(input.ttl), limits: limitsBody(input.limits) };
        const d = issued(await call<TokenDetail>(ctx, OAUTH.createToken, { body }));
        return { value: d.token, token: token(d) };
      },
      updateToken: async (_, args, ctx) => {
        guard(ctx, opts);
        const value = notTheLayers(ctx, tokenArg(args.token));
        const body: Obj = {};
        const scopes = scopesArg(ctx, opts.servedAreas, args.input.scopes, 'scopes');
        if (scopes) body.scopes = scopes;
        const name = optionalText(args.input.name, 'name', 100);
        if (name !== null) body.name = name;
        const ttl = ttlArg(args.input.ttl);
        if (ttl !== undefined) body.ttl = ttl;
        const limits = limitsBody(args.input.limits);
        if (limits) body.limits = limits;
        if (Object.keys(body).length === 0) throw badUserInput('give something to change: scopes, name, ttl or limits', 'input');
        const updated = token(await call<TokenDetail>(ctx, OAUTH.updateToken, { params: { token: value }, body }));
        // The precheck's cached scopes of this token are stale now (shared by the replicas on Redis).
        await accountGuardOf(ctx.upstream)?.forget(value);
        return updated;
      },
      deleteToken: async (_, args, ctx) => {
        guard(ctx, opts);
        const value = notTheLayers(ctx, tokenArg(args.token));
        try {
          await call(ctx, OAUTH.deleteToken, { params: { token: value } });
          await accountGuardOf(ctx.upstream)?.forget(value);
          return true;
        } catch (err) {
          if (err instanceof UpstreamError && err.status === 404) return false;
          throw err;
        }
      },
      rotateToken: async (_, args, ctx) => {
        guard(ctx, opts);
        const value = notTheLayers(ctx, tokenArg(args.token));
        const d = await rotate(ctx, value);
        // The old token is gone upstream: its cached scopes with it.
        await accountGuardOf(ctx.upstream)?.forget(value);
        return { value: d.token, token: token(d) };
      },
    },
  };
}
