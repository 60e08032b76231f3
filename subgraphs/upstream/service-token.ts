/**
 * The layer's own token, managed (`OPENAPI_EMAIL` and `OPENAPI_APIKEY` set, no `OPENAPI_TOKEN`,
 * `OPENAPI_MANAGED_TOKEN` not `off`): minted at start with the scopes of the areas the served
 * subgraphs call (`POST /tokens`, HTTP Basic), renewed before it expires, never by a restart.
 *
 * Renewal mints the new token first and swaps it in; the old one is deleted a grace period later
 * (`DELETE /tokens/{token}`). The vendor's rotation (`PATCH` with the refresh token) deletes the old
 * token at once, so calls in flight with it would fail: minting then deleting keeps every
 * operation whole. Only calls in flight can still hold the old value: background work (pollers,
 * callback re-reads, bulk sendings) keeps a marker for the layer's token, never its value, and
 * resolves it when it calls (`WorkTokens`), so the grace period covers every use. A graceful close
 * deletes the tokens the process minted. Everything cached or counted stays under one tenant (the
 * account's), whatever token is current.
 *
 * The token is minted with exactly the scopes the served subgraphs call: one `METHOD:host/endpoint`
 * per endpoint of their tables (`PEC_PATHS` applied), no wildcard, less those the account has not
 * enabled (`GET /scopes`, read before each mint; dropped ones logged).
 */
import { GraphQLError } from 'graphql';
import type { Area } from '../../contract/areas.ts';
import { CostMeter } from './cost.ts';
import type { OpenapiEnv } from './config.ts';
import type { Endpoint } from './endpoint.ts';
import { tenantOf } from './tenant.ts';
import { registerSecrets } from '../runtime/redact.ts';
import type { CallContext, Upstream } from './upstream.ts';
import { scopeGranted, scopeOf } from '../../contract/scopes.ts';
import * as companyTables from '../company/upstream.ts';
import { COMPANY_FAMILIES } from '../company/policy.ts';
import { SLOW_ORDERS } from '../company/slow-purchase.ts';
import * as riskTables from '../risk/upstream.ts';
import * as postalTables from '../postal/upstream.ts';
import { familiesOf, pecEndpoints } from '../pec/upstream.ts';
import { BULK } from '../pec/bulk.ts';
import * as invoicingTables from '../invoicing/upstream.ts';
import type { LayerToken } from './work-tokens.ts';
import { log } from '../runtime/log.ts';
import { settingsOf, type SettingsSource } from '../../platform/settings.ts';

const CREATE: Endpoint = { area: 'oauth', method: 'POST', path: '/tokens', auth: 'basic', timeoutMs: 20_000 };
const SCOPES: Endpoint = { area: 'oauth', method: 'GET', path: '/scopes', auth: 'basic', ttl: 0, timeoutMs: 10_000 };
const DELETE: Endpoint = { area: 'oauth', method: 'DELETE', path: '/tokens/{token}', auth: 'basic', secretParams: ['token'], timeoutMs: 5_000 };

/** The areas each subgraph calls (the authorization area is reached with Basic, never a token). */
export const SUBGRAPH_AREAS: Readonly<Record<string, readonly Area[]>> = {
  company: ['company'],
  risk: ['risk'],
  postal: ['cap'],
  pec: ['pec', 'pecmassiva'],
  invoicing: ['invoice'],
  account: [],
};

/** Every endpoint found in `value` (an area's tables: endpoint records, family tables), a few levels down. */
function endpointsIn(value: unknown, depth = 3): Endpoint[] {
  if (typeof value !== 'object' || value === null || depth < 0) return [];
  const v = value as Record<string, unknown>;
  if (typeof v.area === 'string' && typeof v.method === 'string' && typeof v.path === 'string') return [v as unknown as Endpoint];
  return Object.values(v).flatMap((x) => endpointsIn(x, depth - 1));
}

/**
 * The endpoints each subgraph calls with a token: every endpoint its area's tables name (the
 * endpoint table, the family tables, the slow tiers' POST orders; `vars` for a deployment's `PEC_PATHS`).
 */
function endpointsOf(subgraph: string, vars: SettingsSource): Endpoint[] {
  const tables: Record<string, () => unknown[]> = {
    company: () => [companyTables, COMPANY_FAMILIES, Object.fromEntries(SLOW_ORDERS)],
    risk: () => [riskTables],
    postal: () => [postalTables],
    pec: () => {
      const eps = pecEndpoints(vars);
      return [eps, familiesOf(eps), BULK];
    },
    invoicing: () => [invoicingTables],
  };
  return (tables[subgraph]?.() ?? []).flatMap((t) => endpointsIn(t)).filter((e) => e.auth !== 'basic' && e.area !== 'oauth');
}

/**
 * The scopes a token of these subgraphs needs, and no more: `METHOD:host/endpoint` for each endpoint
 * their tables name (the vendor scopes a method and a path's first segment), sorted, no wildcard.
 */
export function scopesFor(env: OpenapiEnv, subgraphs: readonly string[], vars: SettingsSource = {}): string[] {
  const scopes = new Set(subgraphs.flatMap((s) => endpointsOf(s, vars)).map((e) => scopeOf(env, e.area, e.method, e.path)));
  return [...scopes].sort();
}

/**
 * How long a replaced token stays valid: two minutes, or longer when an operation may hold the
 * token's value longer, a slow company purchase waiting `COMPANY_SLOW_CALLBACK_WAIT_MS` for its
 * callback before it polls with the same token (the wait plus two minutes). Background work needs
 * none of it (it resolves the marker per call).
 */
export function graceMsFor(vars: SettingsSource): number {
  return settingsOf(vars).COMPANY_SLOW_CALLBACK_WAIT_MS + 120_000;
}

export interface ManagedTokenOptions {
  /** Lifetime asked for each token (seconds). `OPENAPI_MANAGED_TOKEN_TTL_S`. @default 2592000 (30 days) */
  ttlSeconds?: number;
  /** Renew this long before expiry (seconds). @default a tenth of the lifetime */
  renewBeforeSeconds?: number;
  /** How long a replaced token stays valid for calls already under way (ms). @default 120000 (`graceMsFor`) */
  graceMs?: number;
  /** The clock the expiry is read on. @default Date.now */
  now?: () => number;
}

/** The managed token of an upstream client, once one is started (tests and diagnostics). */
const byUpstream = new WeakMap<Upstream, ManagedServiceToken>();
export const managedTokenOf = (upstream: Upstream): ManagedServiceToken | undefined => byUpstream.get(upstream);

export class ManagedServiceToken implements LayerToken {
  private token: string | null = null;
  private expireAt = 0;
  private renewing: Promise<void> | null = null;
  private minting: Promise<void> | null = null;
  private mintError: string | null = null;
  private closed = false;
  private readonly timers = new Set<NodeJS.Timeout>();
  /** Replaced tokens still valid for calls under way (deleted when their grace period ends). */
  private readonly retiring = new Set<string>();
  private readonly now: () => number;
  private readonly ctx: CallContext;
  /** The tenant everything the layer caches and counts is kept under: the account's, stable across tokens. */
  readonly tenant: string;

  constructor(
    private readonly upstream: Upstream,
    private readonly scopes: readonly string[],
    email: string,
    private readonly opts: ManagedTokenOptions = {},
  ) {
    this.now = opts.now ?? Date.now;
    this.tenant = tenantOf(`account:${email.toLowerCase()}`);
    // The layer's own calls: not part of any client operation.
    this.ctx = { auth: { token: '', tenant: this.tenant }, meter: new CostMeter() };
  }

  private get ttl(): number {
    return this.opts.ttlSeconds ?? 30 * 86_400;
  }

  /**
   * Mints the first token. A failure (wrong credentials, the authorization area down) does not stop
   * the layer: it is logged (never the credentials), operations are answered `UNAUTHENTICATED`
   * saying why, and minting is tried again (at the next operation, and on the renewal timer).
   */
  async start(): Promise<void> {
    byUpstream.set(this.upstream, this);
    await this.tryMint();
    // Renewed without traffic too: checked every few minutes on real time (the expiry on `now`).
    const every = Math.max(1_000, Math.min(((this.opts.renewBeforeSeconds ?? this.ttl / 10) * 1000) / 2, 5 * 60_000));
    const timer = setInterval(() => {
      if (!this.token) void this.tryMint();
      else if (this.due) this.current();
    }, every);
    timer.unref();
    this.timers.add(timer);
  }

  /** One attempt at the first token (joined when one is under way); remembers why it failed. */
  private tryMint(): Promise<void> {
    if (this.closed) return Promise.resolve();
    this.minting ??= this.mint()
      .then(() => {
        this.mintError = null;
      })
      .catch((err: unknown) => {
        this.mintError = err instanceof Error ? err.message : String(err);
        log.warn({ area: 'service-token', reason: this.mintError }, "minting the layer's token failed; operations get UNAUTHENTICATED until it succeeds");
      })
      .finally(() => {
        this.minting = null;
      });
    return this.minting;
  }

  /**
   * The scopes to mint with: those wanted that the account has enabled (`GET /scopes`), so one
   * endpoint the account cannot use (an API not enabled, a path the vendor scopes otherwise) never
   * fails the whole mint; what is dropped is logged (scopes only) and its calls are refused by the
   * vendor as they come. Unreadable list: every scope wanted.
   */
  private async grantable(): Promise<readonly string[]> {
    let enabled: string[];
    try {
      const d = await this.upstream.call<unknown>(this.ctx, SCOPES);
      const list = Array.isArray(d) ? d : d && typeof d === 'object' && Array.isArray((d as { data?: unknown }).data) ? (d as { data: unknown[] }).data : null;
      if (!list) return this.scopes;
      enabled = list.flatMap((s) =>
        typeof s === 'string'
          ? [s]
          : s && typeof s === 'object' && typeof (s as { scope?: unknown }).scope === 'string' && (s as { enabled?: unknown }).enabled !== false
            ? [(s as { scope: string }).scope]
            : [],
      );
    } catch (err) {
      log.warn({ area: 'service-token', err }, "the account's scopes are unreadable; minting with every scope wanted");
      return this.scopes;
    }
    const kept = this.scopes.filter((s) => scopeGranted(enabled, s));
    const dropped = this.scopes.filter((s) => !kept.includes(s));
    if (dropped.length > 0) log.warn({ area: 'service-token', dropped }, 'the account has not enabled scopes the layer calls: minted without them');
    return kept;
  }

  private async mint(): Promise<void> {
    const scopes = await this.grantable();
    if (scopes.length === 0) throw new Error('the account has enabled none of the scopes the layer calls');
    const d = await this.upstream.call<{ token?: unknown; expireAt?: unknown; refreshToken?: unknown }>(this.ctx, CREATE, {
      body: { scopes, name: 'openapi-supergraph', ttl: this.ttl },
    });
    if (typeof d?.token !== 'string' || d.token === '') throw new Error('the authorization area minted no token');
    // Never printed: redacted from every log line from now on.
    registerSecrets([d.token, typeof d.refreshToken === 'string' ? d.refreshToken : null]);
    const expire = typeof d.expireAt === 'string' ? Date.parse(d.expireAt) : NaN;
    this.token = d.token;
    this.expireAt = Number.isFinite(expire) ? expire : this.now() + this.ttl * 1000;
  }

  /** Whether the current token is due for renewal. */
  get due(): boolean {
    const before = (this.opts.renewBeforeSeconds ?? this.ttl / 10) * 1000;
    return this.now() >= this.expireAt - before;
  }

  /**
   * The token to use now. When it is due, a renewal starts in the background and this one (still
   * valid) is returned; the next calls get the new one once it is minted.
   */
  current(): string {
    if (!this.token) {
      void this.tryMint();
      throw new GraphQLError(
        `The layer has no upstream token: minting it with OPENAPI_EMAIL and OPENAPI_APIKEY failed (${this.mintError ?? 'not tried yet'}). Check the account's credentials.`,
        { extensions: { code: 'UNAUTHENTICATED' } },
      );
    }
    if (this.due && !this.renewing && !this.closed) this.renewing = this.renew().finally(() => (this.renewing = null));
    return this.token;
  }

  /** Renews now unless a renewal is under way; resolves when the new token is in use. */
  async renew(): Promise<void> {
    const old = this.token;
    try {
      await this.mint();
    } catch (err) {
      // The old token stays in use; the next call tries again.
      log.warn({ area: 'service-token', err }, 'renewal failed');
      return;
    }
    if (old) {
      this.retiring.add(old);
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        this.retiring.delete(old);
        void this.upstream.call(this.ctx, DELETE, { params: { token: old } }).catch(() => undefined);
      }, this.opts.graceMs ?? 120_000);
      timer.unref();
      this.timers.add(timer);
    }
  }

  /** Whether `value` is the layer's token: the current one, or one replaced and still in its grace period. */
  owns(value: string): boolean {
    return value === this.token || this.retiring.has(value);
  }

  /** Resolves when no renewal is under way (tests, shutdown). */
  async settled(): Promise<void> {
    await this.renewing;
  }

  /**
   * Stops renewing and deletes every token this process minted (`DELETE /tokens/{token}`, the
   * current one and those in their grace period): a token left behind would stay valid, with its
   * scopes, until it expires. A failed deletion is logged (never the token) and does not stop the close.
   */
  async close(): Promise<void> {
    this.closed = true;
    for (const t of this.timers) clearTimeout(t); // also clears the interval (same timer pool)
    this.timers.clear();
    await this.minting;
    await this.renewing;
    const minted = [...this.retiring, ...(this.token ? [this.token] : [])];
    this.retiring.clear();
    this.token = null;
    this.mintError = 'the layer is closing';
    await Promise.all(
      minted.map((token) =>
        this.upstream.call(this.ctx, DELETE, { params: { token } }).catch((err: unknown) => {
          log.warn({ area: 'service-token', err }, 'deleting a token at close failed');
        }),
      ),
    );
  }
}
