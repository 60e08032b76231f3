/**
 * The layer's own token, managed (`OPENAPI_EMAIL` and `OPENAPI_APIKEY` set, no `OPENAPI_TOKEN`,
 * `OPENAPI_MANAGED_TOKEN` not `off`): minted at start with the scopes of the areas the served
 * subgraphs call (`POST /tokens`, HTTP Basic), renewed before it expires, never by a restart.
 *
 * Renewal mints the new token first and swaps it in; the old one is deleted a grace period later
 * (`DELETE /tokens/{token}`). The vendor's rotation (`PATCH` with the refresh token) deletes the old
 * token at once, so calls in flight with it would fail: minting then deleting keeps every
 * operation whole. Everything cached or counted stays under one tenant (the account's), whatever
 * token is current.
 */
import { GraphQLError } from 'graphql';
import { AREA_HOSTS, type Area } from '../../contract/areas.ts';
import { CostMeter } from './cost.ts';
import type { OpenapiEnv } from './config.ts';
import type { Endpoint } from './endpoint.ts';
import { tenantOf } from './tenant.ts';
import { registerSecrets } from '../runtime/redact.ts';
import type { CallContext, Upstream } from './upstream.ts';

const CREATE: Endpoint = { area: 'oauth', method: 'POST', path: '/tokens', auth: 'basic', timeoutMs: 20_000 };
const DELETE: Endpoint = { area: 'oauth', method: 'DELETE', path: '/tokens/{token}', auth: 'basic', secretParams: ['token'] };

/** The areas each subgraph calls (the authorization area is reached with Basic, never a token). */
export const SUBGRAPH_AREAS: Readonly<Record<string, readonly Area[]>> = {
  company: ['company'],
  risk: ['risk'],
  postal: ['cap'],
  pec: ['pec', 'pecmassiva'],
  invoicing: ['invoice'],
  account: [],
};

/** The scopes a token of these subgraphs needs: every method and path of the areas they call, and no other area. */
export function scopesFor(env: OpenapiEnv, subgraphs: readonly string[]): string[] {
  const areas = new Set(subgraphs.flatMap((s) => SUBGRAPH_AREAS[s] ?? []));
  return [...areas].sort().map((a) => `*:${env === 'production' ? '' : 'test.'}${AREA_HOSTS[a]}/*`);
}

export interface ManagedTokenOptions {
  /** Lifetime asked for each token (seconds). `OPENAPI_MANAGED_TOKEN_TTL_S`. @default 2592000 (30 days) */
  ttlSeconds?: number;
  /** Renew this long before expiry (seconds). @default a tenth of the lifetime */
  renewBeforeSeconds?: number;
  /** How long a replaced token stays valid for calls already under way (ms). @default 120000 */
  graceMs?: number;
  /** The clock the expiry is read on. @default Date.now */
  now?: () => number;
}

/** The managed token of an upstream client, once one is started (tests and diagnostics). */
const byUpstream = new WeakMap<Upstream, ManagedServiceToken>();
export const managedTokenOf = (upstream: Upstream): ManagedServiceToken | undefined => byUpstream.get(upstream);

export class ManagedServiceToken {
  private token: string | null = null;
  private expireAt = 0;
  private renewing: Promise<void> | null = null;
  private minting: Promise<void> | null = null;
  private mintError: string | null = null;
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
    this.minting ??= this.mint()
      .then(() => {
        this.mintError = null;
      })
      .catch((err: unknown) => {
        this.mintError = err instanceof Error ? err.message : String(err);
        console.warn(`[service token] minting the layer's token failed: ${this.mintError}; operations get UNAUTHENTICATED until it succeeds`);
      })
      .finally(() => {
        this.minting = null;
      });
    return this.minting;
  }

  private async mint(): Promise<void> {
    const d = await this.upstream.call<{ token?: unknown; expireAt?: unknown; refreshToken?: unknown }>(this.ctx, CREATE, { body: { scopes: this.scopes, name: 'openapi-supergraph', ttl: this.ttl } });
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
    if (this.due && !this.renewing) this.renewing = this.renew().finally(() => (this.renewing = null));
    return this.token;
  }

  /** Renews now unless a renewal is under way; resolves when the new token is in use. */
  async renew(): Promise<void> {
    const old = this.token;
    try {
      await this.mint();
    } catch (err) {
      // The old token stays in use; the next call tries again.
      console.warn(`[service token] renewal failed: ${(err as Error).message}`);
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

  close(): void {
    for (const t of this.timers) clearTimeout(t); // also clears the interval (same timer pool)
    this.timers.clear();
  }
}
