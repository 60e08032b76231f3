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
 * share it) or, when unset, is made once and kept in `<DATA_DIR>/layer-secret` (mode 0600) with the
 * embedded store, so tokens signed before a restart verify after it; with `STORE=memory` it is
 * random per process (tokens then die with the process).
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { entriesAtMost } from './lru.ts';
import { persistentSecret, storeChoiceFromEnv } from './store-choice.ts';
import { settingsOf, type SettingsSource } from './settings.ts';

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
/** Secrets read from data directories, by directory. */
const keptSecrets = new Map<string, Buffer>();

/**
 * The layer secret: `LAYER_SECRET` of the env given; else, with the embedded store, the one kept in
 * its data directory (made on first use); else (memory, Redis without it) a random one made once
 * per process.
 */
export function layerSecret(source: SettingsSource): Buffer {
  const env = settingsOf(source);
  const configured = env.LAYER_SECRET;
  if (configured !== null) return Buffer.from(configured, 'utf8');
  const choice = storeChoiceFromEnv(env);
  if (choice.kind === 'sqlite') {
    let kept = keptSecrets.get(choice.dataDir);
    if (!kept) keptSecrets.set(choice.dataDir, (kept = persistentSecret(choice.dataDir)));
    return kept;
  }
  processSecret ??= randomBytes(32);
  return processSecret;
}

/** A signer over the layer secret. */
export const layerSigner = (env: SettingsSource): Signer => new Signer(layerSecret(env));

/**
 * Remembers which nonces each token (scope) has already used, so that a token is accepted once per
 * nonce: a callback URL accepts one delivery per state change, and a replayed delivery is refused.
 * `MemoryReplayGuard` serves one process; `RedisReplayGuard` (`tracking/redis-kv.ts`) any number.
 */
export interface ReplayGuard {
  /** True the first time `nonce` is seen under `scope` (atomic); false for a replay. `expiresAt`: Unix seconds after which the scope can be forgotten (its token no longer verifies). */
  accept(scope: string, nonce: string, expiresAt: number): Promise<boolean>;
  /**
   * True when `nonce` was already accepted under `scope`. Read-only: notes nothing, so a caller can
   * refuse a replay cheaply before doing the work that `accept` would only record afterwards.
   */
  seen(scope: string, nonce: string): Promise<boolean>;
}

export interface MemoryReplayGuardOptions {
  /** Scopes kept at most; past it the least recently used go (expired ones are never returned). @default 100000 */
  maxScopes?: number;
  /** Nonces kept per scope; the oldest are dropped first. @default 64 */
  maxNoncesPerScope?: number;
  /** Clock in milliseconds. @default Date.now */
  now?: () => number;
}

/** In-memory replay guard (one process): a bounded LRU of scopes, each living until its token expires. */
export class MemoryReplayGuard implements ReplayGuard {
  private readonly scopes: LRUCache<string, { expiresAt: number; nonces: Set<string> }>;
  private readonly maxNonces: number;
  private readonly now: () => number;

  constructor(opts: MemoryReplayGuardOptions = {}) {
    this.maxNonces = opts.maxNoncesPerScope ?? 64;
    this.now = opts.now ?? Date.now;
    this.scopes = new LRUCache({ ...entriesAtMost(opts.maxScopes ?? 100_000), ttlResolution: 0, perf: { now: () => this.now() } });
  }

  async accept(scope: string, nonce: string, expiresAt: number): Promise<boolean> {
    let entry = this.scopes.get(scope);
    if (!entry) entry = { expiresAt, nonces: new Set() };
    entry.expiresAt = Math.max(entry.expiresAt, expiresAt);
    this.scopes.set(scope, entry, { ttl: Math.max(1, entry.expiresAt * 1000 - this.now()) });
    if (entry.nonces.has(nonce)) return false;
    entry.nonces.add(nonce);
    if (entry.nonces.size > this.maxNonces) {
      const oldest = entry.nonces.values().next().value;
      if (oldest !== undefined) entry.nonces.delete(oldest);
    }
    return true;
  }

  async seen(scope: string, nonce: string): Promise<boolean> {
    return this.scopes.get(scope)?.nonces.has(nonce) ?? false;
  }

  /** Scopes currently remembered. */
  get size(): number {
    return this.scopes.size;
  }
}
