/**
 * Request rates of the REST suite, held rather than hit: one table of the rates the contract and
 * the vendor state, and a limiter that QUEUES each upstream attempt until the rate allows it (within
 * a bounded wait) instead of letting the upstream answer 429. Past the wait the call fails at once
 * with `RATE_LIMITED` (a 429 `UpstreamError` made here, with `retryAfter`; nothing is sent).
 *
 * The rate is a sliding window: at most `limit` requests in any `windowMs`. A request is booked the
 * earliest moment that keeps every window within its limit, first come first served; a burst up to
 * the limit goes at once, the rest is spread. The store of bookings is in memory (one process) or
 * on Redis (`redis-rate-limit.ts`: one atomic script on the Redis clock, shared by every replica).
 *
 * A deployment changes the table with `OPENAPI_RATE_LIMITS`: JSON (inline, or the path of a JSON
 * file) mapping a rule key to `{ "limit": n, "per": "second" | "minute" | "hour" }` (or
 * `"windowMs": n`), with `"scope": "tenant"` (the default: per upstream account, i.e. per token) or
 * `"global"` (every caller of this deployment), or to `null` to drop a built-in rule. Keys:
 * `"<area>"` (every request of the area) or `"<area> <METHOD> <endpoint>"` (one endpoint, its first
 * path segment, as in the price table; METHOD may be `*`). Example:
 * `{"risk": {"limit": 600, "per": "minute"}, "pecmassiva POST send": null}`.
 */
import { readFileSync } from 'node:fs';
import { LRUCache } from 'lru-cache';
import { entriesAtMost } from '../../platform/lru.ts';
import { AREAS, type Area } from '../../contract/areas.ts';
import { endpointOf } from '../../contract/prices.ts';
import { UpstreamError } from './errors.ts';
import { sleep } from './sleep.ts';

/** Whose requests a rule counts together. */
export type RateScope = 'tenant' | 'global';

export interface RateLimitRule {
  /** `"<area>"` or `"<area> <METHOD> <endpoint>"`, as in `OPENAPI_RATE_LIMITS`. */
  key: string;
  area: Area;
  /** Upper-case method, or `*`; absent for an area-wide rule. */
  method?: string;
  /** First path segment (`send`, `IT-start`); absent for an area-wide rule. */
  endpoint?: string;
  /** Requests allowed in any window of `windowMs`. */
  limit: number;
  windowMs: number;
  /** @default 'tenant' */
  scope: RateScope;
  /** Where the rate comes from. */
  source: string;
}

interface BuiltInRule extends RateLimitRule {
  /** Environments where it holds; absent = every one (the emulator included). */
  envs?: ReadonlyArray<'emulator' | 'sandbox' | 'production'>;
}

/**
 * Every rate the contract or the vendor states. The other areas' rates are "not shown"
 * (interface.md, Limits; REFERENCE §11): add them with `OPENAPI_RATE_LIMITS` when known.
 */
export const RATE_LIMITS: readonly BuiltInRule[] = [
  {
    key: 'risk',
    area: 'risk',
    limit: 10_000,
    windowMs: 60_000,
    scope: 'tenant',
    envs: ['production'],
    source: 'interface.md, Limits: "Risk production: 10000 requests per minute"',
  },
  {
    key: 'pecmassiva POST send',
    area: 'pecmassiva',
    method: 'POST',
    endpoint: 'send',
    limit: 1,
    windowMs: 1_000,
    scope: 'tenant',
    source: 'pecmassiva OAS and REFERENCE §8: POST /send "can handle up to 1 request/second"',
  },
];

const PER: Record<string, number> = { second: 1_000, minute: 60_000, hour: 3_600_000 };

/** Splits a rule key; throws on an unknown area. */
function parseKey(key: string): Pick<RateLimitRule, 'area' | 'method' | 'endpoint'> {
  const parts = key.trim().split(/\s+/);
  const area = parts[0] as Area;
  if (!AREAS.includes(area)) throw new Error(`OPENAPI_RATE_LIMITS: "${key}" does not start with an area (${AREAS.join(', ')})`);
  if (parts.length === 1) return { area };
  if (parts.length !== 3) throw new Error(`OPENAPI_RATE_LIMITS: "${key}" must be "<area>" or "<area> <METHOD> <endpoint>"`);
  return { area, method: parts[1].toUpperCase(), endpoint: parts[2].replace(/^\/+/, '') };
}

function parseRule(key: string, value: unknown): RateLimitRule {
  if (typeof value !== 'object' || value === null) throw new Error(`OPENAPI_RATE_LIMITS: "${key}" must map to {"limit", "per" or "windowMs", "scope"} or null`);
  const v = value as { limit?: unknown; per?: unknown; windowMs?: unknown; scope?: unknown };
  const limit = v.limit;
  if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1) throw new Error(`OPENAPI_RATE_LIMITS: "${key}".limit must be a positive integer`);
  let windowMs: number | undefined;
  if (typeof v.windowMs === 'number' && v.windowMs > 0) windowMs = v.windowMs;
  else if (typeof v.per === 'string' && PER[v.per] !== undefined) windowMs = PER[v.per];
  if (windowMs === undefined) throw new Error(`OPENAPI_RATE_LIMITS: "${key}" needs "per" (second, minute, hour) or a positive "windowMs"`);
  const scope = v.scope ?? 'tenant';
  if (scope !== 'tenant' && scope !== 'global') throw new Error(`OPENAPI_RATE_LIMITS: "${key}".scope must be "tenant" or "global"`);
  return { key: key.trim(), ...parseKey(key), limit, windowMs, scope, source: 'OPENAPI_RATE_LIMITS' };
}

/**
 * The rules in force in `env`: the built-in table for that environment, with `override`
 * (`OPENAPI_RATE_LIMITS`: inline JSON, or the path of a JSON file) replacing or dropping rules by key.
 */
export function rateLimitsFor(env: 'emulator' | 'sandbox' | 'production', override?: string): RateLimitRule[] {
  const rules = new Map<string, RateLimitRule>();
  for (const { envs, ...rule } of RATE_LIMITS) if (!envs || envs.includes(env)) rules.set(rule.key, rule);
  const raw = override?.trim();
  if (!raw) return [...rules.values()];
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw.startsWith('{') ? raw : readFileSync(raw, 'utf8'));
  } catch (err) {
    throw new Error(`OPENAPI_RATE_LIMITS must be a JSON object or the path of one: ${(err as Error).message}`, { cause: err });
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('OPENAPI_RATE_LIMITS must be a JSON object of rules');
  for (const [key, value] of Object.entries(parsed)) {
    const id = normalKey(key);
    for (const k of rules.keys()) if (normalKey(k) === id) rules.delete(k);
    if (value === null || value === false) {
      parseKey(key);
      continue;
    }
    rules.set(key.trim(), parseRule(key, value));
  }
  return [...rules.values()];
}

const normalKey = (key: string): string => {
  const p = key.trim().split(/\s+/);
  return p.length === 3 ? `${p[0]} ${p[1].toUpperCase()} ${p[2].replace(/^\/+/, '')}` : p.join(' ');
};

/** Whether `rule` counts a request. */
export function ruleMatches(rule: RateLimitRule, area: Area, method: string, path: string): boolean {
  if (rule.area !== area) return false;
  if (rule.endpoint === undefined) return true;
  return (rule.method === '*' || rule.method === method.toUpperCase()) && rule.endpoint === endpointOf(path);
}

/**
 * A booking: go after `waitMs` (at `at`, epoch ms on the store's clock: the Redis server's for the
 * Redis store), or refused (the wait would pass the bound) with the wait it needed.
 */
export type RateBooking = { ok: true; waitMs: number; at: number } | { ok: false; retryAfterMs: number };

/** Where bookings are kept: per key, the send times of the last window (some maybe in the future). */
export interface RateLimitStore {
  /**
   * Books the earliest time a request may be sent under `limit` per `windowMs` for `key`, if that
   * is within `maxWaitMs` from now; a refused booking takes nothing. Atomic.
   */
  book(key: string, limit: number, windowMs: number, maxWaitMs: number): Promise<RateBooking>;
}

/**
 * The earliest send time for a new request, given the booked times (ascending, all within the last
 * window or later): FIFO (not before the last booking), and, when `limit` are booked, one window
 * after the `limit`-th latest. One rule for the memory store and the Redis script.
 */
export function earliestSlot(times: readonly number[], now: number, limit: number, windowMs: number): number {
  let at = now;
  const n = times.length;
  if (n > 0) at = Math.max(at, times[n - 1]);
  if (n >= limit) at = Math.max(at, times[n - limit] + windowMs);
  return at;
}

/** Bookings in process memory (one process; several clients of it sharing the store share the rate). */
export class MemoryRateLimitStore implements RateLimitStore {
  private readonly keys: LRUCache<string, number[]>;

  constructor(
    maxKeys = 10_000,
    private readonly now: () => number = Date.now,
  ) {
    this.keys = new LRUCache({ ...entriesAtMost(maxKeys) });
  }

  async book(key: string, limit: number, windowMs: number, maxWaitMs: number): Promise<RateBooking> {
    const now = this.now();
    let times = this.keys.get(key);
    if (!times) this.keys.set(key, (times = []));
    let old = 0;
    while (old < times.length && times[old] <= now - windowMs) old++;
    if (old > 0) times.splice(0, old);
    const at = earliestSlot(times, now, limit, windowMs);
    if (at - now > maxWaitMs) return { ok: false, retryAfterMs: at - now };
    times.push(at);
    return { ok: true, waitMs: at - now, at };
  }
}

/** A call refused here because the rate would need a longer wait than allowed: never sent. */
export class RateLimitedError extends UpstreamError {
  constructor(
    area: Area,
    endpoint: string,
    readonly rule: RateLimitRule,
    waitMs: number,
    maxWaitMs: number,
  ) {
    super(
      'http',
      `request rate limit of ${rule.key} (${rule.limit} per ${rule.windowMs / 1000} s) reached: the next free slot is in ${Math.ceil(waitMs)} ms, more than the ${maxWaitMs} ms a call may wait (OPENAPI_RATE_MAX_WAIT_MS)`,
      area,
      endpoint,
      429,
      null,
      Math.max(1, Math.ceil(waitMs / 1000)),
    );
    this.neverSent = true;
  }
}

/** Who is calling what: the rules that match it, and the tenant for tenant-scoped ones. */
export interface RateCall {
  area: Area;
  method: string;
  path: string;
  tenant: string;
}

/** Holds every upstream attempt to the rules of the table: books a slot, then waits for it. */
export class RateLimiter {
  constructor(
    private readonly store: RateLimitStore,
    readonly rules: readonly RateLimitRule[],
    /** The longest a call may queue; beyond it, `RATE_LIMITED`. */
    readonly maxWaitMs: number,
  ) {}

  /** The store key of `rule` for `call`. */
  static keyOf(rule: RateLimitRule, call: RateCall): string {
    return `${rule.key}|${rule.scope === 'global' ? '*' : call.tenant}`;
  }

  /**
   * Resolves when the call may be sent (at once when no rule matches); throws `RateLimitedError`
   * when it would have to wait longer than `maxWaitMs`, and the signal's reason when it aborts.
   */
  async take(call: RateCall, signal?: AbortSignal): Promise<void> {
    let wait = 0;
    for (const rule of this.rules) {
      if (!ruleMatches(rule, call.area, call.method, call.path)) continue;
      const booking = await this.store.book(RateLimiter.keyOf(rule, call), rule.limit, rule.windowMs, this.maxWaitMs);
      if (!booking.ok) throw new RateLimitedError(call.area, endpointOf(call.path), rule, booking.retryAfterMs, this.maxWaitMs);
      wait = Math.max(wait, booking.waitMs);
    }
    if (wait > 0) await sleep(wait, signal);
  }
}
