/**
 * The kit's tracked-work store: what the layer knows about each piece of asynchronous work of an
 * area (a risk request, a mailbox, an invoice), keyed by tenant, so a caller only ever finds its own.
 * It is fed by the creating mutations, by reads, by upstream callbacks and by the poller; every
 * change bumps a sequence number, which orders the states a subscriber sees. What a state means
 * (final, awaiting the upstream) comes from the area's `StatePolicy`.
 *
 * It also holds the callback reservations: before a paid creation the layer reserves a random key,
 * signs it into the upstream callback URL, and binds the key either
 * - to one request (`id`, once known: from the creation's answer or from the first callback,
 *   whichever comes first); the reservation lives until its request reaches a final state or its
 *   URL expires; or
 * - to one configuration (`config`, e.g. an invoicing account's notification settings): every
 *   delivery names its own request, the reservation is never bound to one id, and it lives until
 *   its URL expires or it is dropped. `configReservation` finds it again, so a configuration keeps
 *   one URL.
 *
 * And it holds the idempotency keys of paid orders (per tenant, for 24 hours): what the first order
 * under a key asked for (a fingerprint of its upstream body), the callback reservation it carried,
 * and what became of it (in flight, created with an id, or sent without an answer). A callback that
 * binds the reservation also settles the key's record, so a retry finds the request without a call.
 *
 * The upstream tokens kept to act on the caller's behalf (poll, re-read) are sealed with a
 * `TokenCipher`, never kept in clear.
 *
 * `TrackedStore` is the interface; `MemoryTrackedStore` serves one process, `SqliteTrackedStore`
 * (`sqlite-store.ts`) the processes of one machine across restarts, `RedisTrackedStore`
 * (`redis-store.ts`) any number; `test/runtime/unit/tracking-stores.test.ts` runs one spec against the three.
 */
import { LRUCache } from 'lru-cache';
import { entriesAtMost } from '../../../platform/lru.ts';
import { randomBytes } from 'node:crypto';
import { TokenCipher } from './cipher.ts';
import type { StatePolicy } from './policy.ts';

/** A caller's own callback, to which the layer relays deliveries. */
export interface RelayTarget {
  url: string;
  method: 'JSON' | 'POST';
  field: string;
  headers: Record<string, string>;
  retry: number;
}

/** What stands for a caller's callback header value wherever it is shown or published (names kept). */
export const REDACTED_HEADER = '[redacted]';

/** The relay target with its header values replaced by `REDACTED_HEADER` (for records, the bus, logs). */
export function redactRelay(r: RelayTarget): RelayTarget;
export function redactRelay(r: RelayTarget | null): RelayTarget | null;
export function redactRelay(r: RelayTarget | null): RelayTarget | null {
  if (!r) return null;
  return { ...r, headers: Object.fromEntries(Object.keys(r.headers).map((k) => [k, REDACTED_HEADER])) };
}

/** The relay target as stores keep it: each header value sealed (they may carry the caller's credentials). */
export function sealRelay(cipher: TokenCipher, r: RelayTarget | null | undefined): RelayTarget | null {
  if (!r) return null;
  return { ...r, headers: Object.fromEntries(Object.entries(r.headers).map(([k, v]) => [k, cipher.seal(v)])) };
}

/** The relay target with its header values opened (a value that does not open is dropped). */
export function openRelay(cipher: TokenCipher, r: RelayTarget | null): RelayTarget | null {
  if (!r) return null;
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(r.headers)) {
    const plain = v === '' ? '' : cipher.open(v);
    if (plain !== undefined) headers[k] = plain;
  }
  return { ...r, headers };
}

/** What the layer knows about one request (a snapshot: never mutated once handed out). */
export interface TrackedRequest<F extends string = string> {
  tenant: string;
  family: F;
  id: string;
  /** The upstream record, with the layer's own callback address replaced by the caller's (or null). */
  record: Readonly<Record<string, unknown>>;
  /** The upstream state as given (`processing`, `PENDING` …). */
  rawState: string | null;
  /** Upstream creation and last-change times, Unix seconds. */
  createdAt: number | null;
  updatedAt: number | null;
  /** Bumped on every change of state or last-change time. */
  seq: number;
  /** Local clock (ms) of the last change. */
  changedAt: number;
  /** Local clock (ms) of the last time the state was confirmed (read, callback, poll). */
  checkedAt: number;
  relay: RelayTarget | null;
}

/** A reserved callback key. */
export interface Reservation<F extends string = string> {
  key: string;
  tenant: string;
  family: F;
  /** Request id, once known (reservations bound to one request). */
  id: string | null;
  /** The configuration the reservation serves (reservations bound to a configuration: never bound to an id). */
  config?: string | null;
  relay: RelayTarget | null;
  /** Unix seconds after which the callback token no longer verifies. */
  expiresAt: number;
  /** The upstream token the request is created with (server side only; used to poll it). */
  token: string;
}

/** Result of applying an observed record. */
export interface Observation<F extends string = string> {
  entry: TrackedRequest<F>;
  /** True when the state or last-change time moved forward (subscribers must hear of it). */
  changed: boolean;
}

/** How long an idempotency key holds (ms): 24 hours from the first order under it. */
export const IDEMPOTENCY_TTL_MS = 24 * 3600 * 1000;

/** What became of the order under an idempotency key. */
export type IdempotencyState =
  /** the paid call is in flight */
  | 'pending'
  /** the upstream created the request (`id`) */
  | 'created'
  /** the paid call got no answer: the request may exist upstream (and have been charged) */
  | 'unknown';

/** An idempotency key of one tenant: the first order under it and its outcome. */
export interface IdempotencyRecord<F extends string = string> {
  tenant: string;
  key: string;
  family: F;
  /** Hash of the family and the validated upstream body (without any callback): the same key with another fingerprint is refused. */
  fingerprint: string;
  /** The callback reservation key the order carried upstream; null when it carried none (no public URL). */
  reservation: string | null;
  /** The caller's own callback given with the first order. */
  relay: RelayTarget | null;
  state: IdempotencyState;
  /** The request id, once known (state `created`). */
  id: string | null;
  /** Local clock (ms) when the first order was sent. */
  startedAt: number;
  /** Euro the unanswered call may have cost (state `unknown`). */
  atRisk: number;
}

/** How an order under an idempotency key ended. */
export type IdempotencyOutcome = { state: 'created'; id: string } | { state: 'unknown'; atRisk: number };

export interface TrackedStore<F extends string = string> {
  reserve(r: Reservation<F>): Promise<void>;
  reservation(key: string): Promise<Reservation<F> | undefined>;
  /** The live reservation bound to a tenant's configuration, if any. */
  configReservation(tenant: string, config: string): Promise<Reservation<F> | undefined>;
  /**
   * Binds a reservation to its request id (first binding wins; a configuration's reservation is never bound). An idempotency record that carried
   * this reservation and is not settled yet becomes `created` with that id.
   */
  bindKey(key: string, id: string): Promise<void>;
  dropReservation(key: string): Promise<void>;
  get(tenant: string, id: string): Promise<TrackedRequest<F> | undefined>;
  /**
   * Applies a record seen upstream. A record older than the known one, or a move away from a final
   * state, is ignored; a record with the same state and time refreshes the stored copy silently.
   * `family` is the caller's word for what the record is (it replaces the stored one). Once the
   * request is in a final state, its callback reservations are dropped.
   */
  observe(tenant: string, family: F, record: Record<string, unknown>, opts?: ObserveOptions): Promise<Observation<F>>;
  /** The caller's known requests, optionally of one family, oldest change first. */
  list(tenant: string, family?: F): Promise<TrackedRequest<F>[]>;
  /** Every request not in a final state, across tenants (for the poller). */
  unfinished(): Promise<TrackedRequest<F>[]>;
  /** Notes that the state was confirmed now (no change). */
  markChecked(tenant: string, id: string, at: number): Promise<void>;
  /** The upstream token the request was created or last read with (server side only). */
  tokenOf(tenant: string, id: string): Promise<string | undefined>;
  /** Remembers that the delivery `nonce` was relayed to the caller's callback; false if it already was. */
  markRelayed(tenant: string, id: string, nonce: string): Promise<boolean>;

  /**
   * Claims `record.key` for `record.tenant` (atomic): stores the record and answers undefined, or
   * answers the record already held under that key (left unchanged). A key holds 24 hours from its claim.
   */
  claimIdempotencyKey(record: IdempotencyRecord<F>): Promise<IdempotencyRecord<F> | undefined>;
  /** The record held under a tenant's key, if any. */
  idempotencyRecord(tenant: string, key: string): Promise<IdempotencyRecord<F> | undefined>;
  /**
   * Notes how the order under a key ended. `unknown` never replaces a `created` (a callback may
   * have bound the request first). Keeps the key's expiry.
   */
  settleIdempotencyKey(tenant: string, key: string, outcome: IdempotencyOutcome): Promise<void>;
  /** Frees a key whose order certainly created nothing (a retry may order again). */
  releaseIdempotencyKey(tenant: string, key: string): Promise<void>;
}

export interface MemoryTrackedStoreOptions {
  /** Requests kept at most; finished ones are dropped first, oldest change first. @default 50000 */
  maxEntries?: number;
  /** Reservations kept at most; past it, expired and finished ones go first, then the soonest-expiring. @default 50000 */
  maxReservations?: number;
  /** Idempotency keys kept at most (each for 24 hours); past it the least recently used go first. @default 100000 */
  maxIdempotencyKeys?: number;
  /** Clock in ms. @default Date.now */
  now?: () => number;
  /** Seals the upstream tokens kept. @default a cipher under a random key (tokens die with the process, like the store) */
  cipher?: TokenCipher;
}

interface Slot<F extends string> {
  entry: TrackedRequest<F>;
  token: string;
  relayed: Set<string>;
}

export class MemoryTrackedStore<F extends string = string> implements TrackedStore<F> {
  private readonly entries = new Map<string, Slot<F>>();
  private readonly reservations = new Map<string, Reservation<F>>();
  /** Reservation<F> keys bound to each request (slot key). */
  private readonly keysOf = new Map<string, Set<string>>();
  private readonly maxEntries: number;
  private readonly maxReservations: number;
  private readonly now: () => number;
  /** Idempotency records by tenant and key. */
  private readonly idempotency: LRUCache<string, IdempotencyRecord<F>>;
  /** Idempotency record (slot key) of each callback reservation key. */
  private readonly idempotencyOfReservation: LRUCache<string, string>;

  private readonly cipher: TokenCipher;
  /** Reservation key of each tenant's configuration. */
  private readonly configKeys = new Map<string, string>();

  constructor(
    private readonly policy: StatePolicy,
    opts: MemoryTrackedStoreOptions = {},
  ) {
    this.cipher = opts.cipher ?? new TokenCipher(randomBytes(32));
    this.maxEntries = opts.maxEntries ?? 50_000;
    this.maxReservations = opts.maxReservations ?? 50_000;
    this.now = opts.now ?? Date.now;
    const max = opts.maxIdempotencyKeys ?? 100_000;
    // The store's clock, read on every check (no cached time), so an injected clock is obeyed at once.
    const perf = { now: () => this.now() };
    this.idempotency = new LRUCache({ ...entriesAtMost(max), ttl: IDEMPOTENCY_TTL_MS, ttlResolution: 0, perf });
    this.idempotencyOfReservation = new LRUCache({ ...entriesAtMost(max), ttl: IDEMPOTENCY_TTL_MS, ttlResolution: 0, perf });
  }

  async reserve(r: Reservation<F>): Promise<void> {
    if (this.reservations.size >= this.maxReservations) this.evictReservation();
    this.reservations.set(r.key, { ...r, id: r.config ? null : r.id, config: r.config ?? null, token: this.cipher.seal(r.token), relay: sealRelay(this.cipher, r.relay) });
    if (r.config) this.configKeys.set(slotKey(r.tenant, r.config), r.key);
  }

  async reservation(key: string): Promise<Reservation<F> | undefined> {
    const r = this.reservations.get(key);
    if (!r) return undefined;
    if (r.expiresAt * 1000 <= this.now()) {
      this.forgetReservation(key);
      return undefined;
    }
    return { ...r, token: this.cipher.open(r.token) ?? '', relay: openRelay(this.cipher, r.relay) };
  }

  /** An entry as handed out: its relay headers opened (kept sealed). */
  private opened(entry: TrackedRequest<F>): TrackedRequest<F> {
    return entry.relay ? { ...entry, relay: openRelay(this.cipher, entry.relay) } : entry;
  }

  async configReservation(tenant: string, config: string): Promise<Reservation<F> | undefined> {
    const key = this.configKeys.get(slotKey(tenant, config));
    return key === undefined ? undefined : this.reservation(key);
  }

  async bindKey(key: string, id: string): Promise<void> {
    this.bindIdempotency(key, id);
    const r = this.reservations.get(key);
    if (!r || r.id !== null || r.config) return;
    const k = slotKey(r.tenant, id);
    if (this.policy.isFinal(this.entries.get(k)?.entry.rawState)) {
      // Finished already: nothing more will be delivered to this key.
      this.forgetReservation(key);
      return;
    }
    r.id = id;
    const keys = this.keysOf.get(k) ?? new Set<string>();
    keys.add(key);
    this.keysOf.set(k, keys);
  }

  async dropReservation(key: string): Promise<void> {
    this.forgetReservation(key);
  }

  async get(tenant: string, id: string): Promise<TrackedRequest<F> | undefined> {
    const slot = this.entries.get(slotKey(tenant, id));
    return slot ? this.opened(slot.entry) : undefined;
  }

  async observe(tenant: string, family: F, record: Record<string, unknown>, opts: ObserveOptions = {}): Promise<Observation<F>> {
    const k = slotKey(tenant, String(record.id));
    const slot = this.entries.get(k);
    const obs = nextObservation(this.policy, slot?.entry, tenant, family, record, { ...opts, relay: opts.relay ? sealRelay(this.cipher, opts.relay) : opts.relay }, this.now());
    if (!slot) {
      if (this.entries.size >= this.maxEntries) this.evictEntry();
      this.entries.set(k, { entry: obs.entry, token: opts.token ? this.cipher.seal(opts.token) : '', relayed: new Set() });
    } else {
      if (opts.token) slot.token = this.cipher.seal(opts.token);
      slot.entry = obs.entry;
      // Refresh recency for eviction.
      this.entries.delete(k);
      this.entries.set(k, slot);
    }
    if (this.policy.isFinal(obs.entry.rawState)) this.finishReservationsOf(k);
    return { entry: this.opened(obs.entry), changed: obs.changed };
  }

  async list(tenant: string, family?: F): Promise<TrackedRequest<F>[]> {
    const out: TrackedRequest<F>[] = [];
    for (const { entry } of this.entries.values()) if (entry.tenant === tenant && (!family || entry.family === family)) out.push(this.opened(entry));
    return out.sort((a, b) => a.changedAt - b.changedAt);
  }

  async unfinished(): Promise<TrackedRequest<F>[]> {
    const out: TrackedRequest<F>[] = [];
    for (const { entry } of this.entries.values()) if (!this.policy.isFinal(entry.rawState)) out.push(this.opened(entry));
    return out;
  }

  async markChecked(tenant: string, id: string, at: number): Promise<void> {
    const slot = this.entries.get(slotKey(tenant, id));
    if (slot) slot.entry = { ...slot.entry, checkedAt: at };
  }

  async tokenOf(tenant: string, id: string): Promise<string | undefined> {
    const t = this.entries.get(slotKey(tenant, id))?.token;
    return t ? this.cipher.open(t) : undefined;
  }

  async markRelayed(tenant: string, id: string, nonce: string): Promise<boolean> {
    const slot = this.entries.get(slotKey(tenant, id));
    if (!slot) return false;
    if (slot.relayed.has(nonce)) return false;
    slot.relayed.add(nonce);
    return true;
  }

  async claimIdempotencyKey(record: IdempotencyRecord<F>): Promise<IdempotencyRecord<F> | undefined> {
    const k = idemKey(record.tenant, record.key);
    const held = this.idempotency.get(k);
    if (held) return { ...held, relay: openRelay(this.cipher, held.relay) };
    this.idempotency.set(k, { ...record, relay: sealRelay(this.cipher, record.relay) });
    if (record.reservation !== null) this.idempotencyOfReservation.set(record.reservation, k);
    return undefined;
  }

  async idempotencyRecord(tenant: string, key: string): Promise<IdempotencyRecord<F> | undefined> {
    const r = this.idempotency.get(idemKey(tenant, key));
    return r ? { ...r, relay: openRelay(this.cipher, r.relay) } : undefined;
  }

  async settleIdempotencyKey(tenant: string, key: string, outcome: IdempotencyOutcome): Promise<void> {
    const k = idemKey(tenant, key);
    const r = this.idempotency.get(k);
    const next = r && settled(r, outcome);
    // The key keeps its expiry (24 h from the claim).
    if (next) this.idempotency.set(k, next, { noUpdateTTL: true });
  }

  async releaseIdempotencyKey(tenant: string, key: string): Promise<void> {
    const k = idemKey(tenant, key);
    const r = this.idempotency.get(k);
    if (!r) return;
    this.idempotency.delete(k);
    if (r.reservation !== null && this.idempotencyOfReservation.get(r.reservation) === k) this.idempotencyOfReservation.delete(r.reservation);
  }

  /** A reservation bound to a request settles the idempotency record that carried it. */
  private bindIdempotency(reservation: string, id: string): void {
    const k = this.idempotencyOfReservation.get(reservation);
    const r = k === undefined ? undefined : this.idempotency.get(k);
    if (k === undefined || !r || r.reservation !== reservation || r.state === 'created') return;
    void this.settleIdempotencyKey(r.tenant, r.key, { state: 'created', id });
  }

  /** The sealed token of a request, as kept (tests: never the token in clear). */
  sealedTokenOf(tenant: string, id: string): string | undefined {
    return this.entries.get(slotKey(tenant, id))?.token;
  }

  private evictEntry(): void {
    for (const [k, s] of this.entries) {
      if (this.policy.isFinal(s.entry.rawState)) {
        this.entries.delete(k);
        return;
      }
    }
    const oldest = this.entries.keys().next().value;
    if (oldest !== undefined) this.entries.delete(oldest);
  }

  /** Reservations currently held (tests, metrics). */
  get reservationCount(): number {
    return this.reservations.size;
  }

  private forgetReservation(key: string): void {
    const r = this.reservations.get(key);
    if (!r) return;
    this.reservations.delete(key);
    if (r.config) {
      const ck = slotKey(r.tenant, r.config);
      if (this.configKeys.get(ck) === key) this.configKeys.delete(ck);
    }
    if (r.id === null) return;
    const k = slotKey(r.tenant, r.id);
    const keys = this.keysOf.get(k);
    keys?.delete(key);
    if (keys && keys.size === 0) this.keysOf.delete(k);
  }

  /** A finished request's keys live on for the grace period (a late or retried delivery is still answered). */
  private finishReservationsOf(slot: string): void {
    const until = Math.floor(this.now() / 1000) + FINISHED_RESERVATION_GRACE_S;
    for (const key of this.keysOf.get(slot) ?? []) {
      const r = this.reservations.get(key);
      if (r && r.expiresAt > until) r.expiresAt = until;
    }
  }

  /** Expired and finished first; then the soonest-expiring (one-off requests before monitors). */
  private evictReservation(): void {
    const nowS = this.now() / 1000;
    for (const [key, r] of this.reservations) {
      if (r.expiresAt <= nowS) this.forgetReservation(key);
    }
    if (this.reservations.size < this.maxReservations) return;
    // Make room for a batch, so a full store is not scanned on every reservation.
    const batch = Math.max(1, Math.floor(this.maxReservations / 100));
    const soonest = [...this.reservations.values()].sort((a, b) => a.expiresAt - b.expiresAt).slice(0, batch);
    for (const r of soonest) this.forgetReservation(r.key);
  }
}

/**
 * How long the callback reservations of a request live on once it is final: the upstream may still
 * be retrying a delivery of the final state (e.g. it was refused while the layer restarted, and the
 * poller saw the state first). Such a delivery is accepted (re-read, nothing new, nothing relayed
 * twice) instead of refused as unknown.
 */
export const FINISHED_RESERVATION_GRACE_S = 3600;

export interface ObserveOptions {
  relay?: RelayTarget | null;
  token?: string;
}

/**
 * What observing `record` makes of the known entry `cur` (every implementation applies this one
 * rule): a record older than the known one, or a move away from a final state, is ignored (only
 * the check time moves); a record with the same state and time refreshes the stored copy silently;
 * anything else is a change (`seq` bumped).
 */
export function nextObservation<F extends string>(
  policy: StatePolicy,
  cur: TrackedRequest<F> | undefined,
  tenant: string,
  family: F,
  record: Record<string, unknown>,
  opts: ObserveOptions,
  now: number,
): Observation<F> {
  const rawState = policy.stateOf(record);
  const { createdAt, updatedAt } = policy.timestampsOf(record);
  if (!cur) {
    const entry: TrackedRequest<F> = {
      tenant,
      family,
      id: String(record.id),
      record: Object.freeze({ ...record }),
      rawState,
      createdAt,
      updatedAt,
      seq: 1,
      changedAt: now,
      checkedAt: now,
      relay: opts.relay ?? null,
    };
    return { entry, changed: true };
  }
  const relay = opts.relay !== undefined && opts.relay !== null ? opts.relay : cur.relay;
  const older = updatedAt !== null && cur.updatedAt !== null && updatedAt < cur.updatedAt;
  const leavesFinal = policy.isFinal(cur.rawState) && !policy.isFinal(rawState) && rawState !== cur.rawState;
  if (older || leavesFinal) return { entry: { ...cur, checkedAt: now, relay }, changed: false };
  const version = policy.versionOf?.(record) ?? null;
  const moved = rawState !== cur.rawState || (updatedAt !== null && updatedAt !== cur.updatedAt) || (version !== null && version !== (policy.versionOf?.(cur.record) ?? null));
  // Keep what an earlier, richer answer said (e.g. a record read after the creation's answer).
  const merged = Object.freeze({ ...cur.record, ...record });
  const entry: TrackedRequest<F> = {
    ...cur,
    family,
    record: merged,
    rawState,
    createdAt: createdAt ?? cur.createdAt,
    updatedAt: updatedAt ?? cur.updatedAt,
    seq: moved ? cur.seq + 1 : cur.seq,
    changedAt: moved ? now : cur.changedAt,
    checkedAt: now,
    relay,
  };
  return { entry, changed: moved };
}

/** Settles an idempotency record (the one rule of every implementation); null when nothing changes. */
export function settled<F extends string>(r: IdempotencyRecord<F>, outcome: IdempotencyOutcome): IdempotencyRecord<F> | null {
  if (outcome.state === 'created') return { ...r, state: 'created', id: outcome.id.toLowerCase() };
  if (r.state === 'created') return null;
  return { ...r, state: 'unknown', atRisk: outcome.atRisk };
}

const slotKey = (tenant: string, id: string): string => `${tenant}\u0000${id.toLowerCase()}`;
/** Idempotency keys are case-sensitive (as the caller gave them). */
const idemKey = (tenant: string, key: string): string => `${tenant}\u0000${key}`;
