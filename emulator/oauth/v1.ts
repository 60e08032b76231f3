/**
 * OAuth v1 (`oauth.openapi.it`, deprecated, still what the vendor's SDKs call; REFERENCE §2), served
 * beside v2 in the emulator's authorization area on the same accounts and tokens: `POST /token`
 * (the token at the root of the body, no `data`), `GET /token[?scope=]` (204 when none),
 * `GET|PUT|PATCH|DELETE /token/{token}`, `GET /credit`, `GET /counters/total` and
 * `GET /counters/{day|month|year}/{date}`. HTTP Basic like v2. Only `/scopes` is v2's here (the two
 * versions share that path on different hosts).
 */
import { fail, hexId, type EmuRequest, type EmuResponse, type EmuServices, type Route } from '../core.ts';
import type { EmuAccount } from '../accounts.ts';
import { SCOPE_FORMAT, globPattern, sandboxScope } from '../../contract/scopes.ts';
import { isObj } from '../../contract/values.ts';

const YEAR_S = 365 * 86_400;

function need(req: EmuRequest): { account: EmuAccount; services: EmuServices } {
  if (!req.account || !req.services) throw new Error('the authorization area needs the emulator server');
  return { account: req.account, services: req.services };
}

/** Scopes as v1 takes them (wildcards allowed), or the 406 answer. */
function scopesOf(v: unknown, all: string[], missing: number): string[] | EmuResponse {
  if (!Array.isArray(v) || v.length === 0) return fail(406, missing, 'missing scopes');
  if (!v.every((s): s is string => typeof s === 'string' && SCOPE_FORMAT.test(s))) return fail(406, 270, 'invalid scopes');
  const scopes = v.map(sandboxScope);
  if (!scopes.every((s) => all.some((a) => globPattern(s).test(a)))) return fail(406, 270, 'invalid scopes');
  return scopes;
}

const seconds = (ms: number): number => Math.floor(ms / 1000);

function record(req: EmuRequest, token: string): Record<string, unknown> | null {
  const { account, services } = need(req);
  const t = services.tokens.get(token);
  if (!t || t.owner.toLowerCase() !== account.email.toLowerCase()) return null;
  const meta = services.accounts.tokenMeta.get(token);
  return { scopes: t.scopes, expire: seconds(meta?.expireAt ?? services.accounts.now() + YEAR_S * 1000), token };
}

/** Sets a token's expiry: `ttl` seconds from now, or `expire` (unix seconds). */
function setExpiry(req: EmuRequest, token: string, body: Record<string, unknown>): void {
  const { services } = need(req);
  const now = services.accounts.now();
  const meta = services.accounts.tokenMeta.get(token) ?? {
    name: '',
    createdAt: now,
    updatedAt: now,
    expireAt: now + YEAR_S * 1000,
    refreshToken: hexId() + hexId().slice(0, 16),
    limits: {},
  };
  if (typeof body.ttl === 'number' && body.ttl > 0) meta.expireAt = now + Math.min(body.ttl, YEAR_S) * 1000;
  else if (typeof body.expire === 'number' && body.expire > 0) meta.expireAt = Math.min(body.expire * 1000, now + YEAR_S * 1000);
  meta.updatedAt = now;
  services.accounts.tokenMeta.set(token, meta);
}

const envelope = (data: unknown): EmuResponse => ({ status: 200, json: { data, success: true, message: '', error: null } });

function counters(req: EmuRequest, prefix: string | null): EmuResponse {
  const { account } = need(req);
  const out: Record<string, { counter: number; paid: number; limit: number }> = {};
  for (const u of account.usage) {
    if (prefix !== null && !new Date(u.at).toISOString().startsWith(prefix)) continue;
    const key = u.scope.replace(/^(\w+|\*):test\./, '$1:');
    const c = (out[key] ??= { counter: 0, paid: 0, limit: 0 });
    c.counter++;
    if (u.amount > 0) c.paid++;
  }
  return envelope(out);
}

export const v1Routes: Route[] = [
  {
    method: 'POST',
    pattern: '/token',
    auth: 'basic',
    handler: (req) => {
      const { account, services } = need(req);
      const body = isObj(req.body) ? req.body : {};
      const scopes = scopesOf(body.scopes, services.scopes(), 110);
      if (!Array.isArray(scopes)) return scopes;
      const t = services.tokens.create({ scopes, owner: account.email });
      setExpiry(req, t.token, { ttl: typeof body.ttl === 'number' ? body.ttl : undefined, expire: body.expire });
      return { status: 200, json: { ...record(req, t.token), success: true, message: '', error: null } };
    },
  },
  {
    method: 'GET',
    pattern: '/token',
    auth: 'basic',
    handler: (req) => {
      const { account, services } = need(req);
      const scope = req.query.get('scope');
      const list = services.tokens
        .of(account.email)
        .filter((t) => !scope || t.scopes.includes(sandboxScope(scope)))
        .map((t) => record(req, t.token));
      return list.length === 0 ? { status: 204 } : envelope(list);
    },
  },
  {
    method: 'GET',
    pattern: '/token/:token',
    auth: 'basic',
    handler: (req, p) => {
      const r = record(req, p.token ?? '');
      return r ? envelope(r) : fail(402, 125, 'Wrong Token');
    },
  },
  ...(['PUT', 'PATCH'] as const).map((method): Route => ({
    method,
    pattern: '/token/:token',
    auth: 'basic',
    handler: (req, p) => {
      const { services } = need(req);
      if (!record(req, p.token ?? '')) return fail(404, 150, 'Missing Token');
      const body = isObj(req.body) ? req.body : {};
      if (method === 'PUT' && (body.scopes === undefined || body.expire === undefined)) return fail(406, 310, 'missing scopes and expire');
      if (body.scopes !== undefined) {
        const scopes = scopesOf(body.scopes, services.scopes(), 110);
        if (!Array.isArray(scopes)) return scopes;
        services.tokens.get(p.token)!.scopes = scopes;
      }
      setExpiry(req, p.token, method === 'PUT' ? { expire: body.expire } : body);
      return envelope(record(req, p.token));
    },
  })),
  {
    method: 'DELETE',
    pattern: '/token/:token',
    auth: 'basic',
    handler: (req, p) => {
      const { services } = need(req);
      if (!record(req, p.token ?? '')) return fail(404, 170, 'Missing Token');
      services.tokens.delete(p.token);
      return { status: 200, json: { message: '1 deleted token', success: true, error: null } };
    },
  },
  { method: 'GET', pattern: '/credit', auth: 'basic', handler: (req) => envelope({ credit: need(req).account.credit }) },
  { method: 'GET', pattern: '/counters/total', auth: 'basic', scopePath: '/counters', handler: (req) => counters(req, null) },
  {
    method: 'GET',
    pattern: '/counters/:period/:date',
    auth: 'basic',
    scopePath: '/counters',
    handler: (req, p) => {
      const shape = { day: /^\d{4}-\d{2}-\d{2}$/, month: /^\d{4}-\d{2}$/, year: /^\d{4}$/ }[p.period as 'day' | 'month' | 'year'];
      if (!shape || !shape.test(p.date ?? '')) return fail(404, 610, 'invalid date');
      return counters(req, p.date);
    },
  },
];
