/**
 * The emulator's authorization area (`oauth.openapi.com`, OAuth v2, REFERENCE §3): every call with
 * HTTP Basic (`email:apikey`) of an account, except a token rotation, which takes the token's
 * refresh token as bearer. Shapes and error numbers are the vendor spec's: `POST/GET/PATCH
 * /tokens/{token}` answer a bare TokenDetail, other GETs `{"data": …}`, errors the usual envelope.
 *
 * - tokens: list (`limit` ≤ 100, `skip`), create (`scopes`*, `name`, `ttl` seconds ≤ 1 year, ≤ 0 the
 *   default of 1 year, `limits`), read, update, delete, rotate (`PATCH` with the refresh token and
 *   `{}`: the old token is deleted, a new one with the same scopes, name, ttl and limits answers);
 *   an expired token is refused by every area (401 "Wrong Token");
 * - scopes: every scope the emulator serves (`METHOD:test.<host>/<endpoint>`); a token's scopes must
 *   be among them or wildcards matching one; the production form (no `test.`) is read as the sandbox
 *   one; the detail adds the contract's price and free tier;
 * - wallet and transactions: the one wallet every token of the account spends from (every area's
 *   charges appear as transactions);
 * - subscriptions (added with the control hook `POST /_emulator/oauth/subscribe`);
 * - stats by `date` (`YYYY`, `YYYY-MM`, `YYYY-MM-DD`, else 422/240), by IP, by domain, by scope;
 * - errors: every error answer any area gave one of the account's tokens, newest first;
 * - callbacks: every callback the emulator delivered, one item per delivery with its attempts (the
 *   list in the vendor's short form, the detail in its full `Callback` form: domain, active,
 *   createdAt, data, custom, headers, elapsedTime, attempt, retry, field, method); the emulator does
 *   not tell accounts apart there.
 *
 * OAuth v1's paths (`/token`, `/credit`, `/counters`) are served here too, on the same accounts
 * and tokens (`v1.ts`).
 *
 * Control hooks: `account {email, apikey?, credit?}` (an account, returned with its API key),
 * `subscribe {email, scope, totalRequests, pricePerRequest, type?}`.
 */
import { fail, hexId, ok, type AreaModule, type EmuRequest, type EmuResponse, type EmuServices, type Route } from '../core.ts';
import { callbackSettings, type CallbackRun } from '../callbacks.ts';
import { freeTierOf, priceOf } from '../../contract/prices.ts';
import { AREA_HOSTS, type Area } from '../../contract/areas.ts';
import { Accounts, type EmuAccount, type TokenLimits, type TokenMeta } from '../accounts.ts';
import { v1Routes } from './v1.ts';
import { SCOPE_FORMAT, globPattern, sandboxScope } from '../../contract/scopes.ts';
import { isObj } from '../../contract/values.ts';

const YEAR_S = 365 * 86_400;
const iso = Accounts.iso;
const TOKEN_FORMAT = /^[A-Za-z0-9_.-]{8,128}$/;

const bare = (body: unknown, status = 200): EmuResponse => ({ status, json: body });
const data = (d: unknown): EmuResponse => ({ status: 200, json: { data: d } });

function need(req: EmuRequest): { account: EmuAccount; services: EmuServices } {
  if (!req.account || !req.services) throw new Error('the authorization area needs the emulator server');
  return { account: req.account, services: req.services };
}

/** Reads `scopes`: null and the error answer when missing, malformed or not served. */
function readScopes(v: unknown, all: string[], errs: { missing: number; format: number; invalid: number }): string[] | EmuResponse {
  if (!Array.isArray(v) || v.length === 0) return fail(422, errs.missing, 'missing scopes array');
  if (!v.every((s): s is string => typeof s === 'string' && SCOPE_FORMAT.test(s))) return fail(422, errs.format, 'invalid scopes format');
  const scopes = v.map(sandboxScope);
  if (!scopes.every((s) => all.some((a) => globPattern(s).test(a)))) return fail(422, errs.invalid, 'Invalid scopes specified or API not enabled');
  return scopes;
}

function readLimits(v: unknown): TokenLimits {
  if (!isObj(v)) return {};
  const out: TokenLimits = {};
  for (const k of ['totalRequests', 'walletRequests', 'subscriptionRequests', 'walletAmount'] as const) if (typeof v[k] === 'number') out[k] = v[k];
  if (Array.isArray(v.ip)) out.ip = v.ip.filter((x): x is string => typeof x === 'string');
  return out;
}

const ttlOf = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) && v > 0 ? Math.min(Math.floor(v), YEAR_S) : YEAR_S);

function metaOf(accounts: Accounts, token: string): TokenMeta {
  let m = accounts.tokenMeta.get(token);
  if (!m) {
    const now = accounts.now();
    m = { name: '', createdAt: now, updatedAt: now, expireAt: now + YEAR_S * 1000, refreshToken: hexId() + hexId().slice(0, 16), limits: {} };
    accounts.tokenMeta.set(token, m);
  }
  return m;
}

function detail(req: EmuRequest, token: string): Record<string, unknown> | null {
  const { account, services } = need(req);
  const t = services.tokens.get(token);
  if (!t || t.owner.toLowerCase() !== account.email.toLowerCase()) return null;
  const m = metaOf(services.accounts, token);
  const used = account.usage.filter((u) => u.token === token);
  return {
    token,
    name: m.name,
    createdAt: iso(m.createdAt),
    expireAt: iso(m.expireAt),
    updatedAt: iso(m.updatedAt),
    scopes: t.scopes,
    refreshToken: m.refreshToken,
    limits: m.limits,
    stats: {
      totalRequests: used.length,
      walletRequests: used.filter((u) => u.amount > 0).length,
      subscriptionRequests: used.filter((u) => u.subscription).length,
      errorRequests: used.filter((u) => u.error).length,
      walletAmount: Math.round(used.reduce((a, u) => a + u.amount, 0) * 1e6) / 1e6,
      ip: [...new Set(used.map((u) => u.ip))],
    },
  };
}

function page<T>(req: EmuRequest, list: T[], err: number): T[] | EmuResponse {
  const num = (k: string, d: number): number | null => {
    const v = req.query.get(k);
    if (v === null || v === '') return d;
    return /^\d+$/.test(v) ? Number(v) : null;
  };
  const limit = num('limit', 100);
  const skip = num('skip', 0);
  if (limit === null || skip === null || limit > 100) return fail(400, err, 'Query error');
  return list.slice(skip, skip + limit);
}

const paged = <T>(req: EmuRequest, list: T[], err: number): EmuResponse => {
  const p = page(req, list, err);
  return Array.isArray(p) ? data(p) : p;
};

/** The stats period of `date`, or the 422/240 answer. */
function period(req: EmuRequest): string | EmuResponse {
  const d = req.query.get('date')?.trim() ?? '';
  if (d === '') return '';
  if (!/^\d{4}(-\d{2}(-\d{2})?)?$/.test(d)) return fail(422, 240, 'Invalid date format, must be YYYY or YYYY-MM or YYYY-MM-DD');
  return d;
}

function totals(usage: EmuAccount['usage']): Record<string, number> {
  return {
    totalRequests: usage.length,
    walletRequests: usage.filter((u) => u.amount > 0).length,
    subscriptionRequests: usage.filter((u) => u.subscription).length,
    errorRequests: usage.filter((u) => u.error).length,
    walletAmount: Math.round(usage.reduce((a, u) => a + u.amount, 0) * 1e6) / 1e6,
  };
}

function usageIn(req: EmuRequest): EmuAccount['usage'] | EmuResponse {
  const p = period(req);
  if (typeof p !== 'string') return p;
  return need(req).account.usage.filter((u) => p === '' || new Date(u.at).toISOString().startsWith(p));
}

const scopeId = (scope: string): string => hexId(`scope:${scope}`);

function scopeItem(scope: string): Record<string, unknown> {
  const colon = scope.indexOf(':');
  const rest = scope.slice(colon + 1);
  const slash = rest.indexOf('/');
  return { id: scopeId(scope), scope, method: scope.slice(0, colon), endpoint: rest.slice(slash + 1), domain: rest.slice(0, slash), enabled: true };
}

function areaOfHost(host: string): Area | null {
  const h = host.replace(/^test\./, '');
  return (Object.entries(AREA_HOSTS).find(([, v]) => v === h)?.[0] as Area | undefined) ?? null;
}

function tokenBody(req: EmuRequest): Record<string, unknown> | EmuResponse {
  if (req.body === undefined) return {};
  return isObj(req.body) ? req.body : fail(422, 80, 'invalid body');
}

const routes: Route[] = [
  {
    method: 'POST',
    pattern: '/tokens',
    auth: 'basic',
    handler: (req) => {
      const { account, services } = need(req);
      const body = tokenBody(req);
      if ('status' in body && typeof body.status === 'number') return body as EmuResponse;
      const b = body as Record<string, unknown>;
      const scopes = readScopes(b.scopes, services.scopes(), { missing: 70, format: 80, invalid: 90 });
      if (!Array.isArray(scopes)) return scopes;
      const t = services.tokens.create({ scopes, owner: account.email });
      const now = services.accounts.now();
      services.accounts.tokenMeta.set(t.token, {
        name: typeof b.name === 'string' ? b.name : '',
        createdAt: now,
        updatedAt: now,
        expireAt: now + ttlOf(b.ttl) * 1000,
        refreshToken: hexId() + hexId().slice(0, 16),
        limits: readLimits(b.limits),
      });
      return bare(detail(req, t.token));
    },
  },
  {
    method: 'GET',
    pattern: '/tokens',
    auth: 'basic',
    handler: (req) => {
      const { account, services } = need(req);
      return paged(
        req,
        services.tokens.of(account.email).map((t) => detail(req, t.token)),
        190,
      );
    },
  },
  {
    method: 'GET',
    pattern: '/tokens/:token',
    auth: 'basic',
    handler: (req, p) => {
      if (!TOKEN_FORMAT.test(p.token ?? '')) return fail(422, 60, 'Invalid Token Format');
      const d = detail(req, p.token);
      return d ? bare(d) : fail(404, 120, 'Not Found');
    },
  },
  {
    method: 'PATCH',
    pattern: '/tokens/:token',
    auth: 'basic-or-refresh',
    handler: (req, p) => {
      const { account, services } = need(req);
      const value = p.token ?? '';
      if (value === '') return fail(400, 150, 'Token ID is required');
      const t = services.tokens.get(value);
      if (!t || t.owner.toLowerCase() !== account.email.toLowerCase()) return fail(404, 160, 'Not Found');
      const meta = metaOf(services.accounts, value);
      const now = services.accounts.now();
      if (req.refreshOf !== undefined) {
        // Rotation: only with this token's own refresh token; the old token goes, a new one answers.
        if (req.refreshOf !== value) return fail(401, 130, 'Unauthorized');
        const ttlMs = meta.expireAt - meta.createdAt;
        const fresh = services.tokens.create({ scopes: t.scopes, owner: account.email });
        services.accounts.tokenMeta.set(fresh.token, {
          name: meta.name,
          createdAt: now,
          updatedAt: now,
          expireAt: now + ttlMs,
          refreshToken: hexId() + hexId().slice(0, 16),
          limits: meta.limits,
        });
        services.tokens.delete(value);
        return bare(detail(req, fresh.token));
      }
      const body = tokenBody(req);
      if ('status' in body && typeof body.status === 'number') return body as EmuResponse;
      const b = body as Record<string, unknown>;
      if (b.scopes !== undefined) {
        const scopes = readScopes(b.scopes, services.scopes(), { missing: 100, format: 100, invalid: 110 });
        if (!Array.isArray(scopes)) return scopes;
        t.scopes = scopes;
      }
      if (typeof b.name === 'string') meta.name = b.name;
      if (b.ttl !== undefined) meta.expireAt = now + ttlOf(b.ttl) * 1000;
      if (b.limits !== undefined) meta.limits = readLimits(b.limits);
      meta.updatedAt = now;
      return bare(detail(req, value));
    },
  },
  {
    method: 'DELETE',
    pattern: '/tokens/:token',
    auth: 'basic',
    handler: (req, p) => {
      const { account, services } = need(req);
      const t = services.tokens.get(p.token ?? '');
      if (!t || t.owner.toLowerCase() !== account.email.toLowerCase()) return fail(404, 180, 'Not Found');
      services.tokens.delete(t.token);
      return bare({ message: 'Deleted', data: null, success: true, error: null });
    },
  },
  { method: 'GET', pattern: '/scopes', auth: 'basic', handler: (req) => data(need(req).services.scopes().map(scopeItem)) },
  {
    method: 'GET',
    pattern: '/scopes/:id',
    auth: 'basic',
    handler: (req, p) => {
      const scope = need(req)
        .services.scopes()
        .find((s) => scopeId(s) === p.id);
      if (!scope) return fail(404, 10, 'Scope not found');
      const item = scopeItem(scope);
      const area = areaOfHost(String(item.domain));
      const tiers = area ? (freeTierOf(area, String(item.method), `/${String(item.endpoint)}`)?.tiers ?? []) : [];
      const limitOf = (period: string): number => tiers.find((t) => t.period === period)?.calls ?? 0;
      return ok({
        ...item,
        rateLimit: false,
        freeLimits: { dayLimit: limitOf('day'), monthLimit: limitOf('month'), yearLimit: limitOf('year') },
        requirements: { id_card: false, oa_general_contract: false },
        prices: { [String(item.endpoint)]: area ? priceOf(area, String(item.method), `/${String(item.endpoint)}`) : 0 },
      });
    },
  },
  {
    method: 'GET',
    pattern: '/wallet',
    auth: 'basic',
    handler: (req) => {
      const { account } = need(req);
      return data({ credit: account.credit, createdAt: iso(account.walletCreatedAt), updatedAt: iso(account.walletUpdatedAt) });
    },
  },
  { method: 'GET', pattern: '/wallet/transactions', auth: 'basic', scopePath: '/wallet', handler: (req) => paged(req, [...need(req).account.transactions].reverse(), 190) },
  {
    method: 'GET',
    pattern: '/subscriptions',
    auth: 'basic',
    handler: (req) => {
      const { account } = need(req);
      const id = req.query.get('id');
      if (id) {
        const s = account.subscriptions.find((x) => x.id === id);
        return s ? data(s) : fail(404, 220, 'Subscription not found');
      }
      const scopes = req.query.get('scopes')?.split(',').filter(Boolean) ?? [];
      const list = account.subscriptions.filter((s) => scopes.length === 0 || scopes.includes(s.scope));
      return paged(
        req,
        list.map((s) => ({ id: s.id, scope: s.scope, active: s.active, availableRequests: String(s.availableRequests), startsAt: s.startsAt, expiresAt: s.expiresAt })),
        230,
      );
    },
  },
  {
    method: 'GET',
    pattern: '/subscriptions/:id',
    auth: 'basic',
    handler: (req, p) => {
      const s = need(req).account.subscriptions.find((x) => x.id === p.id);
      return s ? data({ ...s, totalRequests: String(s.totalRequests), availableRequests: String(s.availableRequests) }) : fail(404, 220, 'Subscription not found');
    },
  },
  {
    method: 'GET',
    pattern: '/stats',
    auth: 'basic',
    handler: (req) => {
      const usage = usageIn(req);
      if (!Array.isArray(usage)) return usage;
      return data({ ...totals(usage), totalIps: new Set(usage.map((u) => u.ip)).size, totalApis: new Set(usage.map((u) => u.domain)).size });
    },
  },
  {
    method: 'GET',
    pattern: '/stats/ips',
    auth: 'basic',
    handler: (req) => {
      const usage = usageIn(req);
      return Array.isArray(usage) ? data([...new Set(usage.map((u) => u.ip))]) : usage;
    },
  },
  {
    method: 'GET',
    pattern: '/stats/apis',
    auth: 'basic',
    handler: (req) => {
      const usage = usageIn(req);
      if (!Array.isArray(usage)) return usage;
      const out: Record<string, Record<string, number>> = {};
      for (const d of new Set(usage.map((u) => u.domain))) out[d] = totals(usage.filter((u) => u.domain === d));
      return data(out);
    },
  },
  {
    method: 'GET',
    pattern: '/stats/apis/:domain',
    auth: 'basic',
    handler: (req, p) => {
      const usage = usageIn(req);
      if (!Array.isArray(usage)) return usage;
      const mine = usage.filter((u) => u.domain === p.domain);
      const scopes: Record<string, Record<string, number>> = {};
      for (const s of new Set(mine.map((u) => u.scope))) scopes[s] = totals(mine.filter((u) => u.scope === s));
      return data({ ...totals(mine), scopes });
    },
  },
  {
    method: 'GET',
    pattern: '/errors',
    auth: 'basic',
    handler: (req) => {
      const scopes = req.query.get('scopes')?.split(',').filter(Boolean) ?? [];
      const list = [...need(req).account.errors].reverse().filter((e) => scopes.length === 0 || scopes.includes(e.scope));
      return paged(req, list, 190);
    },
  },
  {
    method: 'GET',
    pattern: '/callbacks',
    auth: 'basic',
    // The vendor's list element: id, scope, url, httpResponseCode (as text), startedAt, completedAt.
    handler: (req) =>
      paged(
        req,
        callbackRuns().map((c) => ({
          id: c.id,
          scope: c.scope ?? '',
          url: c.url,
          httpResponseCode: c.httpResponseCode === null ? null : String(c.httpResponseCode),
          startedAt: c.startedAt,
          completedAt: c.completedAt,
        })),
        210,
      ),
  },
  {
    method: 'GET',
    pattern: '/callbacks/:id',
    auth: 'basic',
    handler: (_req, p) => {
      const c = callbackRuns().find((x) => x.id === p.id);
      return c ? data(c) : fail(404, 200, 'Callback not found');
    },
  },
];

/** Every callback the emulator delivered, newest first, in the vendor's `Callback` shape. */
const callbackRuns = (): CallbackRun[] => callbackSettings.runs().reverse();

export function createOauthModule(): AreaModule {
  let services: EmuServices | null = null;
  const accounts = (): EmuServices['accounts'] => {
    if (!services) throw new Error('the authorization area is not attached to an emulator server');
    return services.accounts;
  };
  return {
    area: 'oauth',
    routes: [...routes, ...v1Routes],
    attach: (s) => {
      services = s;
    },
    control: {
      account: (body) => {
        const b = isObj(body) ? body : {};
        if (typeof b.email !== 'string' || !b.email.includes('@')) throw new Error('email is required');
        const a = accounts().ensure(b.email, { apikey: typeof b.apikey === 'string' ? b.apikey : undefined, credit: typeof b.credit === 'number' ? b.credit : 0 });
        if (typeof b.credit === 'number' && a.credit !== b.credit) accounts().setCredit(a, b.credit);
        return { email: a.email, apikey: a.apikey, credit: a.credit };
      },
      subscribe: (body) => {
        const b = isObj(body) ? body : {};
        const a = typeof b.email === 'string' ? accounts().get(b.email) : undefined;
        if (!a) throw new Error('unknown account');
        if (typeof b.scope !== 'string' || typeof b.totalRequests !== 'number' || typeof b.pricePerRequest !== 'number')
          throw new Error('scope, totalRequests and pricePerRequest are required');
        return accounts().subscribe(a, { scope: b.scope, totalRequests: b.totalRequests, pricePerRequest: b.pricePerRequest, type: b.type === 'yearly' ? 'yearly' : 'monthly' });
      },
    },
  };
}
