/**
 * The risk area's status store: what the layer knows about each asynchronous request, keyed by
 * tenant, so a caller only ever finds its own requests. It is fed by the creating mutations, by
 * reads, by upstream callbacks and by the poller; every change bumps a sequence number, which
 * orders the states a subscriber sees.
 *
 * It also holds the callback reservations: before a paid creation the layer reserves a random key,
 * signs it into the upstream callback URL, and binds the key to the request id once known (from
 * the creation's answer or from the first callback, whichever comes first). A reservation lives
 * until its request reaches a final state (nothing more will be delivered) or its URL expires;
 * when the store is full, expired and finished ones go first, then the soonest-expiring (so a
 * monitor's long-lived key outlives the short-lived keys of one-off requests).
 *
 * `RequestStore` is the interface; `MemoryRequestStore` serves one process.
 */
import type { RiskFamilyName } from './upstream.ts';
import { isFinalState, rawStateOf, timestampsOf } from './model.ts';

/** A caller's own callback, to which the layer relays deliveries. */
export interface RelayTarget {
  url: string;
  method: 'JSON' | 'POST';
  field: string;
  headers: Record<string, string>;
  retry: number;
}

/** What the layer knows about one request (a snapshot: never mutated once handed out). */
export interface TrackedRequest {
  tenant: string;
  family: RiskFamilyName;
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
export interface Reservation {
  key: string;
  tenant: string;
  family: RiskFamilyName;
  /** Request id, once known. */
  id: string | null;
  relay: RelayTarget | null;
  /** Unix seconds after which the callback token no longer verifies. */
  expiresAt: number;
  /** The upstream token the request is created with (server side only; used to poll it). */
  token: string;
}

/** Result of applying an observed record. */
export interface Observation {
  entry: TrackedRequest;
  /** True when the state or last-change time moved forward (subscribers must hear of it). */
  changed: boolean;
}

export interface RequestStore {
  reserve(r: Reservation): Promise<void>;
  reservation(key: string): Promise<Reservation | undefined>;
  bindKey(key: string, id: string): Promise<void>;
  dropReservation(key: string): Promise<void>;
  get(tenant: string, id: string): Promise<TrackedRequest | undefined>;
  /**
   * Applies a record seen upstream. A record older than the known one, or a move away from a final
   * state, is ignored; a record with the same state and time refreshes the stored copy silently.
   * `family` is the caller's word for what the record is (it replaces the stored one). Once the
   * request is in a final state, its callback reservations are dropped.
   */
  observe(tenant: string, family: RiskFamilyName, record: Record<string, unknown>, opts?: { relay?: RelayTarget | null; token?: string }): Promise<Observation>;
  /** The caller's known requests, optionally of one family, oldest change first. */
  list(tenant: string, family?: RiskFamilyName): Promise<TrackedRequest[]>;
  /** Every request not in a final state, across tenants (for the poller). */
  unfinished(): Promise<TrackedRequest[]>;
  /** Notes that the state was confirmed now (no change). */
  markChecked(tenant: string, id: string, at: number): Promise<void>;
  /** The upstream token the request was created or last read with (server side only). */
  tokenOf(tenant: string, id: string): Promise<string | undefined>;
  /** Remembers that the delivery `nonce` was relayed to the caller's callback; false if it already was. */
  markRelayed(tenant: string, id: string, nonce: string): Promise<boolean>;
}

export interface MemoryRequestStoreOptions {
  /** Requests kept at most; finished ones are dropped first, oldest change first. @default 50000 */
  maxEntries?: number;
  /** Reservations kept at most; past it, expired and finished ones go first, then the soonest-expiring. @default 50000 */
  maxReservations?: number;
  /** Clock in ms. @default Date.now */
  now?: () => number;
}

interface Slot {
  entry: TrackedRequest;
  token: string;
  relayed: Set<string>;
}

export class MemoryRequestStore implements RequestStore {
  private readonly entries = new Map<string, Slot>();
  private readonly reservations = new Map<string, Reservation>();
  /** Reservation keys bound to each request (slot key). */
  private readonly keysOf = new Map<string, Set<string>>();
  private readonly maxEntries: number;
  private readonly maxReservations: number;
  private readonly now: () => number;

  constructor(opts: MemoryRequestStoreOptions = {}) {
    this.maxEntries = opts.maxEntries ?? 50_000;
    this.maxReservations = opts.maxReservations ?? 50_000;
    this.now = opts.now ?? Date.now;
  }

  async reserve(r: Reservation): Promise<void> {
    if (this.reservations.size >= this.maxReservations) this.evictReservation();
    this.reservations.set(r.key, { ...r });
  }

  async reservation(key: string): Promise<Reservation | undefined> {
    const r = this.reservations.get(key);
    if (!r) return undefined;
    if (r.expiresAt * 1000 <= this.now()) {
      this.forgetReservation(key);
      return undefined;
    }
    return { ...r };
  }

  async bindKey(key: string, id: string): Promise<void> {
    const r = this.reservations.get(key);
    if (!r || r.id !== null) return;
    const k = slotKey(r.tenant, id);
    if (isFinalState(this.entries.get(k)?.entry.rawState)) {
      // Finished already: nothing more will be delivered to this key.
      this.reservations.delete(key);
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

  async get(tenant: string, id: string): Promise<TrackedRequest | undefined> {
    return this.entries.get(slotKey(tenant, id))?.entry;
  }

  async observe(tenant: string, family: RiskFamilyName, record: Record<string, unknown>, opts: { relay?: RelayTarget | null; token?: string } = {}): Promise<Observation> {
    const id = String(record.id);
    const k = slotKey(tenant, id);
    const slot = this.entries.get(k);
    const now = this.now();
    const rawState = rawStateOf(record);
    const { createdAt, updatedAt } = timestampsOf(record);
    if (!slot) {
      const entry: TrackedRequest = {
        tenant,
        family,
        id,
        record: Object.freeze({ ...record }),
        rawState,
        createdAt,
        updatedAt,
        seq: 1,
        changedAt: now,
        checkedAt: now,
        relay: opts.relay ?? null,
      };
      if (this.entries.size >= this.maxEntries) this.evictEntry();
      this.entries.set(k, { entry, token: opts.token ?? '', relayed: new Set() });
      if (isFinalState(rawState)) this.dropReservationsOf(k);
      return { entry, changed: true };
    }
    const cur = slot.entry;
    if (opts.token) slot.token = opts.token;
    const relay = opts.relay !== undefined && opts.relay !== null ? opts.relay : cur.relay;
    const older = updatedAt !== null && cur.updatedAt !== null && updatedAt < cur.updatedAt;
    const leavesFinal = isFinalState(cur.rawState) && !isFinalState(rawState) && rawState !== cur.rawState;
    if (older || leavesFinal) {
      slot.entry = { ...cur, checkedAt: now, relay };
      return { entry: slot.entry, changed: false };
    }
    const moved = rawState !== cur.rawState || (updatedAt !== null && updatedAt !== cur.updatedAt);
    // Keep what an earlier, richer answer said (e.g. a record read after the creation's answer).
    const merged = Object.freeze({ ...cur.record, ...record });
    slot.entry = {
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
    // Refresh recency for eviction.
    this.entries.delete(k);
    this.entries.set(k, slot);
    if (isFinalState(rawState)) this.dropReservationsOf(k);
    return { entry: slot.entry, changed: moved };
  }

  async list(tenant: string, family?: RiskFamilyName): Promise<TrackedRequest[]> {
    const out: TrackedRequest[] = [];
    for (const { entry } of this.entries.values()) if (entry.tenant === tenant && (!family || entry.family === family)) out.push(entry);
    return out.sort((a, b) => a.changedAt - b.changedAt);
  }

  async unfinished(): Promise<TrackedRequest[]> {
    const out: TrackedRequest[] = [];
    for (const { entry } of this.entries.values()) if (!isFinalState(entry.rawState)) out.push(entry);
    return out;
  }

  async markChecked(tenant: string, id: string, at: number): Promise<void> {
    const slot = this.entries.get(slotKey(tenant, id));
    if (slot) slot.entry = { ...slot.entry, checkedAt: at };
  }

  async tokenOf(tenant: string, id: string): Promise<string | undefined> {
    const t = this.entries.get(slotKey(tenant, id))?.token;
    return t ? t : undefined;
  }

  async markRelayed(tenant: string, id: string, nonce: string): Promise<boolean> {
    const slot = this.entries.get(slotKey(tenant, id));
    if (!slot) return false;
    if (slot.relayed.has(nonce)) return false;
    slot.relayed.add(nonce);
    return true;
  }

  private evictEntry(): void {
    for (const [k, s] of this.entries) {
      if (isFinalState(s.entry.rawState)) {
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
    if (r.id === null) return;
    const k = slotKey(r.tenant, r.id);
    const keys = this.keysOf.get(k);
    keys?.delete(key);
    if (keys && keys.size === 0) this.keysOf.delete(k);
  }

  private dropReservationsOf(slot: string): void {
    for (const key of [...(this.keysOf.get(slot) ?? [])]) this.forgetReservation(key);
  }

  /** Expired and finished first; then the soonest-expiring (one-off requests before monitors). */
  private evictReservation(): void {
    const nowS = this.now() / 1000;
    for (const [key, r] of this.reservations) {
      const finished = r.id !== null && isFinalState(this.entries.get(slotKey(r.tenant, r.id))?.entry.rawState);
      if (r.expiresAt <= nowS || finished) this.forgetReservation(key);
    }
    if (this.reservations.size < this.maxReservations) return;
    // Make room for a batch, so a full store is not scanned on every reservation.
    const batch = Math.max(1, Math.floor(this.maxReservations / 100));
    const soonest = [...this.reservations.values()].sort((a, b) => a.expiresAt - b.expiresAt).slice(0, batch);
    for (const r of soonest) this.forgetReservation(r.key);
  }
}

const slotKey = (tenant: string, id: string): string => `${tenant}\u0000${id.toLowerCase()}`;
