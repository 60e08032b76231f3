/**
 * Failing earlier with the account's knowledge (`OPENAPI_PRECHECK=on`, with `OPENAPI_EMAIL` and
 * `OPENAPI_APIKEY`): before a call is sent, the token's scopes (read once from the authorization
 * area, `GET /tokens/{token}`, cached) must grant it, else `FORBIDDEN` naming the missing scope; and
 * the wallet (`GET /wallet`, cached a minute, the calls sent meanwhile taken off it) must hold the call's price, else `PAYMENT_REQUIRED`.
 * Nothing is sent in either case. A token the configured account does not own (a caller's own,
 * passed through) is not checked: the layer cannot read its scopes or its wallet.
 *
 * The guard's own reads are the layer's, not the caller's: made on an internal meter (never in a
 * client's `extensions.cost`: `GET /tokens/{token}` names the token), under the account's tenant,
 * once per token and per wallet period, not per operation.
 */
import { sandboxScope, scopeGranted, scopeOf } from '../../contract/scopes.ts';
import { endpointOf } from '../../contract/prices.ts';
import type { OpenapiEnv } from './config.ts';
import type { Endpoint } from './endpoint.ts';
import { UpstreamError } from './errors.ts';
import type { CallContext, Upstream } from './upstream.ts';
import { CostMeter } from './cost.ts';
import { tenantOf } from './tenant.ts';
import { MemoryGuardStore, type ActiveSubscription, type GuardStore } from './guard-store.ts';

const TOKEN: Endpoint = { area: 'oauth', method: 'GET', path: '/tokens/{token}', auth: 'basic', secretParams: ['token'] };
const WALLET: Endpoint = { area: 'oauth', method: 'GET', path: '/wallet', auth: 'basic' };
const SUBSCRIPTIONS: Endpoint = { area: 'oauth', method: 'GET', path: '/subscriptions', auth: 'basic' };
const SUBSCRIPTION: Endpoint = { area: 'oauth', method: 'GET', path: '/subscriptions/{id}', auth: 'basic' };

/** A call's price as the guard took it (`AccountGuard.charge`), and the way to give it back. */
export interface GuardCharge {
  price: number;
  giveBack(): Promise<void>;
}

export interface AccountGuardOptions {
  /** How long a token's scopes are trusted (ms). @default 600000 */
  scopesTtlMs?: number;
  /** Most tokens whose scopes are kept (least recently used dropped first). @default 10000 */
  maxTokens?: number;
  /** How long the subscription list is trusted (ms). @default 60000 */
  subscriptionsTtlMs?: number;
  /**
   * How long a wallet reading is trusted (ms); the calls the layer sends meanwhile are taken off it
   * as they go. @default 60000
   */
  walletTtlMs?: number;
  now?: () => number;
  /**
   * Where the scopes, the wallet reading and the subscriptions (with the requests taken from them)
   * are kept: shared by every replica on Redis (`REDIS_URL`). @default one process's memory
   */
  store?: GuardStore;
}

/** The guard of each upstream client (the account API forgets a token's scopes through it). */
const guards = new WeakMap<Upstream, AccountGuard>();
export const accountGuardOf = (upstream: Upstream): AccountGuard | undefined => guards.get(upstream);

export class AccountGuard {
  /** Token scopes (bounded, least recently used dropped in memory), the wallet reading, the subscriptions. */
  private readonly store: GuardStore;

  constructor(
    private readonly upstream: Upstream,
    private readonly env: OpenapiEnv,
    private readonly opts: AccountGuardOptions = {},
  ) {
    this.store = opts.store ?? new MemoryGuardStore({ now: opts.now, maxTokens: opts.maxTokens });
    guards.set(upstream, this);
  }

  /** The guard's own reads: Basic-authenticated, the account's, on a meter of their own (not the operation's). */
  private internal(ctx: CallContext): CallContext {
    const email = this.upstream.config.accountCredentials?.email ?? '';
    return { auth: { token: ctx.auth.token, tenant: tenantOf(`account:${email.toLowerCase()}`) }, meter: new CostMeter() };
  }

  /** The token's scopes, or null when the account does not own it. */
  private async scopesOf(ctx: CallContext): Promise<string[] | null> {
    const token = ctx.auth.token;
    const hit = await this.store.scopes(token);
    if (hit !== undefined) return hit;
    let scopes: string[] | null = null;
    try {
      const d = await this.upstream.call<{ scopes?: unknown }>(this.internal(ctx), TOKEN, { params: { token } });
      scopes = Array.isArray(d?.scopes) ? d.scopes.filter((s): s is string => typeof s === 'string') : null;
    } catch (err) {
      if (!(err instanceof UpstreamError) || (err.status !== 404 && err.status !== 422)) throw err;
    }
    await this.store.setScopes(token, scopes, this.opts.scopesTtlMs ?? 600_000);
    return scopes;
  }

  private async credit(ctx: CallContext): Promise<number | null> {
    const known = await this.store.credit();
    if (known !== undefined) return known;
    const w = await this.upstream.call<{ credit?: unknown }>(this.internal(ctx), WALLET);
    const credit = typeof w?.credit === 'number' ? w.credit : null;
    if (credit !== null) await this.store.setCredit(credit, this.opts.walletTtlMs ?? 60_000);
    return credit;
  }

  /** Operations (by their meter) whose estimate was held against the wallet. */
  private readonly estimated = new WeakSet<object>();
  /** Operations (by their meter) whose scopes, every one the gateway found, the token was seen to hold. */
  private readonly scoped = new WeakSet<object>();

  /**
   * Throws before the first call of an operation needing a scope the token lacks, any of those the
   * gateway's estimate found for the whole operation (`CostMeter.scopes`), and before a call the
   * token may not make (`FORBIDDEN`, naming the first scope missing); and before the first call of
   * an operation whose estimate the wallet cannot cover (`PAYMENT_REQUIRED`).
   */
  async checkScope(ctx: CallContext, ep: Endpoint, path: string): Promise<void> {
    if (ep.auth === 'basic' || ep.area === 'oauth' || !ctx.auth.token) return;
    const scopes = await this.scopesOf(ctx);
    if (scopes === null) return;
    const needed = ctx.meter.scopes;
    if (needed !== null && !this.scoped.has(ctx.meter)) {
      // The whole operation first: nothing of it is sent when a later area's scope is missing.
      const missing = needed.map((s) => (this.env === 'production' ? s : sandboxScope(s))).find((s) => !scopeGranted(scopes, s));
      if (missing !== undefined) throw this.forbidden(missing, ep, path, true);
      this.scoped.add(ctx.meter);
    }
    const scope = scopeOf(this.env, ep.area, ep.method, path);
    if (!scopeGranted(scopes, scope)) throw this.forbidden(scope, ep, path);
    const estimate = ctx.meter.estimate;
    if (estimate !== null && estimate > 0 && !this.estimated.has(ctx.meter)) {
      this.estimated.add(ctx.meter);
      const credit = await this.credit(ctx);
      if (credit !== null && credit + 1e-9 < estimate) {
        const err = new UpstreamError(
          'http',
          `the wallet holds €${credit}, less than this operation's estimate of €${estimate}: nothing was called`,
          ep.area,
          endpointOf(path),
          402,
        );
        err.neverSent = true;
        throw err;
      }
    }
  }

  /** The refusal of a call for a scope the token lacks: nothing was sent. */
  private forbidden(scope: string, ep: Endpoint, path: string, forOperation = false): UpstreamError {
    const err = new UpstreamError(
      'http',
      `the token lacks the scope ${scope}${forOperation ? ', which this operation needs' : ''}: nothing was called`,
      ep.area,
      endpointOf(path),
      403,
    );
    err.neverSent = true;
    return err;
  }

  /**
   * Throws before a call the wallet cannot pay (`PAYMENT_REQUIRED`); `price` after free tiers.
   * Returns what it took off the wallet reading (0 when it took nothing).
   */
  async checkWallet(ctx: CallContext, ep: Endpoint, path: string, price: number): Promise<number> {
    if (price <= 0 || ep.auth === 'basic' || ep.area === 'oauth' || !ctx.auth.token) return 0;
    if ((await this.scopesOf(ctx)) === null) return 0;
    const credit = await this.credit(ctx);
    if (credit !== null && credit + 1e-9 < price) {
      const err = new UpstreamError(
        'http',
        `the wallet holds €${credit}, less than the €${price} of ${ep.method} ${endpointOf(path)}: nothing was called`,
        ep.area,
        endpointOf(path),
        402,
      );
      err.neverSent = true;
      throw err;
    }
    // What this call will spend comes off the reading until the next one (every replica's).
    await this.store.spend(price);
    return price;
  }

  /**
   * What a call costs and where it is paid from, taken before it is sent: one request of an active
   * subscription covering it (its price per request, plus `surcharge` from the wallet), else the
   * wallet (`listed`, checked against the reading). `giveBack` returns both (the subscription's
   * request, the wallet reading) when the call is then refused before sending (budget) or answered
   * without a charge; once.
   */
  async charge(ctx: CallContext, ep: Endpoint, path: string, listed: number, surcharge = 0): Promise<GuardCharge> {
    const taken = await this.takeSubscription(ctx, ep, path, listed);
    const price = taken ? taken.sub.pricePerRequest + surcharge : listed;
    let spent = 0;
    let given = false;
    const giveBack = async (): Promise<void> => {
      if (given) return;
      given = true;
      if (taken) await this.store.returnSubscription(taken.until, taken.sub);
      if (spent > 0) await this.store.spend(-spent);
    };
    try {
      spent = await this.checkWallet(ctx, ep, path, taken ? surcharge : listed);
    } catch (err) {
      await giveBack();
      throw err;
    }
    return { price, giveBack };
  }

  private async subscriptions(ctx: CallContext): Promise<{ list: ActiveSubscription[]; until: number }> {
    const known = await this.store.subscriptions();
    if (known) return known;
    const own = this.internal(ctx);
    const raw = await this.upstream.call<unknown>(own, SUBSCRIPTIONS, { query: { limit: 100 } });
    const active = (Array.isArray(raw) ? raw : []).filter((s): s is Record<string, unknown> => typeof s === 'object' && s !== null && (s as { active?: unknown }).active === true);
    const list: ActiveSubscription[] = [];
    for (const s of active) {
      const d = await this.upstream.call<Record<string, unknown>>(own, SUBSCRIPTION, { params: { id: String(s.id) } });
      const left = Number(d?.availableRequests ?? s.availableRequests);
      const price = Number(d?.pricePerRequest);
      if (typeof s.scope === 'string' && Number.isFinite(left) && left > 0 && Number.isFinite(price)) list.push({ id: String(s.id), scope: s.scope, left, pricePerRequest: price });
    }
    const until = await this.store.setSubscriptions(list, this.opts.subscriptionsTtlMs ?? 60_000);
    return { list, until };
  }

  /**
   * The price of a call an active subscription of the account covers: its price per request (one
   * of its requests is used), not the wallet's; null when none covers it. Only for tokens the account owns.
   */
  async subscriptionPrice(ctx: CallContext, ep: Endpoint, path: string, price: number): Promise<number | null> {
    return (await this.takeSubscription(ctx, ep, path, price))?.sub.pricePerRequest ?? null;
  }

  /** The covering subscription one of whose requests was taken (with its reading), or null. */
  private async takeSubscription(ctx: CallContext, ep: Endpoint, path: string, price: number): Promise<{ sub: ActiveSubscription; until: number } | null> {
    if (price <= 0 || ep.auth === 'basic' || ep.area === 'oauth' || !ctx.auth.token) return null;
    if ((await this.scopesOf(ctx)) === null) return null;
    const scope = scopeOf(this.env, ep.area, ep.method, path);
    const { list, until } = await this.subscriptions(ctx);
    // One of its requests taken (counted across replicas): the first covering subscription with some left.
    for (const sub of list) if (scopeGranted([sub.scope], scope) && (await this.store.useSubscription(until, sub))) return { sub, until };
    return null;
  }

  /**
   * Whether the configured account owns the call's token (its scopes are readable with the
   * account's credentials; the read is the one the scope check made, cached). The vendor keeps one
   * free-tier counter per account, so such a token's calls count under the account, not per token.
   * A token the account does not own (another account's, passed through) cannot be told apart from
   * any other: false.
   */
  async ownedByAccount(ctx: CallContext, ep: Endpoint): Promise<boolean> {
    if (ep.auth === 'basic' || ep.area === 'oauth' || !ctx.auth.token) return false;
    return (await this.scopesOf(ctx)) !== null;
  }

  /** Forgets a token's scopes (the account API, after it updated, rotated or deleted the token): the next call reads them again. */
  async forget(token: string): Promise<void> {
    await this.store.forgetScopes(token);
  }
}
