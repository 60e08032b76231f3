/**
 * Signed, expiring tokens for URLs the layer hands out (upstream callback targets, file downloads),
 * and replay protection for tokens that may be presented more than once.
 *
 * A token is `<payload>.<expiry>.<mac>`: `payload` is an opaque base64url value chosen by the caller
 * (a request key, a grant id), `expiry` Unix seconds, `mac` the base64url HMAC-SHA256 of
 * `<purpose>\n<payload>.<expiry>` under the layer secret. The purpose separates uses, so a file token
 * is never accepted as a callback token. MACs are compared in constant time.
 *
 * The secret comes from `LAYER_SECRET` (at least 16 characters; every process of one deployment must
 * share it) or, when unset, is random per process (tokens then die with the process).
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** Why a token was refused. */
export type VerifyFailure = 'malformed' | 'bad-signature' | 'expired';

export type VerifyResult = { ok: true; payload: string; expiresAt: number } | { ok: false; reason: VerifyFailure };

const PAYLOAD = /^[A-Za-z0-9_-]{1,256}$/;
const TOKEN = /^([A-Za-z0-9_-]{1,256})\.(\d{1,12})\.([A-Za-z0-9_-]{43})$/;

export interface SignerOptions {
  /** Clock in milliseconds. @default Date.now */
  now?: () => number;
}

export class Signer {
  private readonly key: Buffer;
  private readonly now: () => number;

  constructor(secret: string | Buffer, opts: SignerOptions = {}) {
    this.key = typeof secret === 'string' ? Buffer.from(secret, 'utf8') : Buffer.from(secret);
    if (this.key.length < 16) throw new Error('the signing secret must be at least 16 bytes');
    this.now = opts.now ?? Date.now;
  }

  /** A token for `payload` (base64url characters only) valid for `ttlSeconds`. */
  sign(purpose: string, payload: string, ttlSeconds: number): string {
    if (!PAYLOAD.test(payload)) throw new Error('a signed payload must be 1-256 base64url characters');
    if (!(ttlSeconds > 0)) throw new Error('ttlSeconds must be positive');
    const expiry = Math.floor(this.now() / 1000) + Math.ceil(ttlSeconds);
    return `${payload}.${expiry}.${this.mac(purpose, `${payload}.${expiry}`)}`;
  }

  /** Checks shape, MAC (constant time) and expiry; the payload only when all three hold. */
  verify(purpose: string, token: string): VerifyResult {
    const m = TOKEN.exec(token);
    if (!m) return { ok: false, reason: 'malformed' };
    const [, payload, expiry, mac] = m as unknown as [string, string, string, string];
    const expected = Buffer.from(this.mac(purpose, `${payload}.${expiry}`), 'utf8');
    const given = Buffer.from(mac, 'utf8');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return { ok: false, reason: 'bad-signature' };
    const expiresAt = Number(expiry);
    if (expiresAt * 1000 <= this.now()) return { ok: false, reason: 'expired' };
    return { ok: true, payload, expiresAt };
  }

  private mac(purpose: string, data: string): string {
    return createHmac('sha256', this.key).update(`${purpose}\n${data}`).digest('base64url');
  }
}

/** A random opaque id (base64url, 128 bits by default) to put in a token. */
export const randomId = (bytes = 16): string => randomBytes(bytes).toString('base64url');

let processSecret: Buffer | null = null;

/** The layer secret: `LAYER_SECRET`, or a random one made once per process. */
export function layerSecret(env: NodeJS.ProcessEnv = process.env): Buffer {
  const configured = env.LAYER_SECRET;
  if (configured !== undefined && configured !== '') {
    if (configured.length < 16) throw new Error('LAYER_SECRET must be at least 16 characters');
    return Buffer.from(configured, 'utf8');
  }
  processSecret ??= randomBytes(32);
  return processSecret;
}

/** A signer over the layer secret. */
export const layerSigner = (env: NodeJS.ProcessEnv = process.env): Signer => new Signer(layerSecret(env));

/**
 * Remembers which nonces each token (scope) has already used, so that a token is accepted once per
 * nonce: a callback URL accepts one delivery per state change, and a replayed delivery is refused.
 */
export interface ReplayGuard {
  /** True the first time `nonce` is seen under `scope`; false for a replay. `expiresAt`: Unix seconds after which the scope can be forgotten (its token no longer verifies). */
  accept(scope: string, nonce: string, expiresAt: number): boolean;
}

export interface MemoryReplayGuardOptions {
  /** Scopes kept at most; the soonest-expiring are dropped first. @default 100000 */
  maxScopes?: number;
  /** Nonces kept per scope; the oldest are dropped first. @default 64 */
  maxNoncesPerScope?: number;
  /** Clock in milliseconds. @default Date.now */
  now?: () => number;
}

/** In-memory replay guard (one process). */
export class MemoryReplayGuard implements ReplayGuard {
  private readonly scopes = new Map<string, { expiresAt: number; nonces: Set<string> }>();
  private readonly maxScopes: number;
  private readonly maxNonces: number;
  private readonly now: () => number;

  constructor(opts: MemoryReplayGuardOptions = {}) {
    this.maxScopes = opts.maxScopes ?? 100_000;
    this.maxNonces = opts.maxNoncesPerScope ?? 64;
    this.now = opts.now ?? Date.now;
  }

  accept(scope: string, nonce: string, expiresAt: number): boolean {
    let entry = this.scopes.get(scope);
    if (!entry) {
      if (this.scopes.size >= this.maxScopes) this.evict();
      entry = { expiresAt, nonces: new Set() };
      this.scopes.set(scope, entry);
    }
    entry.expiresAt = Math.max(entry.expiresAt, expiresAt);
    if (entry.nonces.has(nonce)) return false;
    entry.nonces.add(nonce);
    if (entry.nonces.size > this.maxNonces) {
      const oldest = entry.nonces.values().next().value;
      if (oldest !== undefined) entry.nonces.delete(oldest);
    }
    return true;
  }

  /** Scopes currently remembered. */
  get size(): number {
    return this.scopes.size;
  }

  private evict(): void {
    const nowS = this.now() / 1000;
    for (const [k, v] of this.scopes) if (v.expiresAt <= nowS) this.scopes.delete(k);
    if (this.scopes.size < this.maxScopes) return;
    let soonest: string | null = null;
    let at = Infinity;
    for (const [k, v] of this.scopes) {
      if (v.expiresAt < at) {
        at = v.expiresAt;
        soonest = k;
      }
    }
    if (soonest !== null) this.scopes.delete(soonest);
  }
}
