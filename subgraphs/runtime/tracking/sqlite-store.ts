/**
 * The async-work kit's durable stores on the embedded SQLite database (`platform/sqlite.ts`), for
 * the layer without Redis: every row in the `kv` table under `<area>:<what>` namespaces, read and
 * written on every call (no copy in memory), so a new process, or a second connection to the same
 * file, sees the same state. Each change is one `BEGIN IMMEDIATE` transaction (the Redis stores'
 * Lua scripts), and the rules are the memory store's (`nextObservation`, `settled`).
 *
 * Namespaces (`<area>:` + ): `req` entries (key `<tenant>\0<id>`, tagged `u` while unfinished, for
 * the poller; finished ones expire after 30 days, unfinished after 8 days without an observation or
 * while a reservation lives); `relayed` relayed nonces; `res` reservations (expiring with their URL,
 * tagged with the request they are bound to); `rescfg` a configuration's reservation; `idem`
 * idempotency records (24 h); `idemres` the record a reservation settles; `poll` the poller's
 * budget, states and leases; `replay` accepted nonces; `grant`, `grantdoc` file grants.
 */
import { randomBytes } from 'node:crypto';
import { SqliteKv, type SqliteDatabase } from '../../../platform/sqlite.ts';
import type { ReplayGuard } from '../../../platform/signing.ts';
import type { TokenCipher } from './cipher.ts';
import type { FileGrant, FileGrantStore } from './files.ts';
import type { StatePolicy } from './policy.ts';
import type { PollBook, PollState } from './poller.ts';
import {
  FINISHED_RESERVATION_GRACE_S,
  IDEMPOTENCY_TTL_MS,
  nextObservation,
  openRelay,
  sealRelay,
  settled,
  type IdempotencyOutcome,
  type IdempotencyRecord,
  type ObserveOptions,
  type Observation,
  type Reservation,
  type TrackedRequest,
  type TrackedStore,
} from './store.ts';

interface Slot<F extends string> {
  entry: TrackedRequest<F>;
  token: string;
}

export interface SqliteTrackedStoreOptions {
  /** Seals the upstream tokens kept (from the layer secret, kept with the database). */
  cipher: TokenCipher;
  /** Namespace prefix (the area, `risk:`). @default '' */
  namespace?: string;
  /** How long a finished entry is kept. @default 30 days */
  finishedTtlMs?: number;
  /** How long an unfinished entry is kept without an observation (or while a reservation lives). @default 8 days */
  unfinishedTtlMs?: number;
  now?: () => number;
}

const slotKey = (tenant: string, id: string): string => `${tenant}\u0000${id.toLowerCase()}`;
const idemKey = (tenant: string, key: string): string => `${tenant}\u0000${key}`;
const UNFINISHED = 'u';

export class SqliteTrackedStore<F extends string = string> implements TrackedStore<F> {
  private readonly cipher: TokenCipher;
  private readonly finishedTtlMs: number;
  private readonly unfinishedTtlMs: number;
  private readonly now: () => number;
  private readonly req: SqliteKv;
  private readonly relayed: SqliteKv;
  private readonly res: SqliteKv;
  private readonly rescfg: SqliteKv;
  private readonly idem: SqliteKv;
  private readonly idemres: SqliteKv;

  constructor(
    private readonly db: SqliteDatabase,
    private readonly policy: StatePolicy,
    opts: SqliteTrackedStoreOptions,
  ) {
    this.cipher = opts.cipher;
    this.finishedTtlMs = opts.finishedTtlMs ?? 30 * 24 * 3600 * 1000;
    this.unfinishedTtlMs = opts.unfinishedTtlMs ?? 8 * 24 * 3600 * 1000;
    this.now = opts.now ?? Date.now;
    const ns = opts.namespace ?? '';
    const kv = (name: string): SqliteKv => new SqliteKv(db, `${ns}${name}`, () => this.now());
    this.req = kv('req');
    this.relayed = kv('relayed');
    this.res = kv('res');
    this.rescfg = kv('rescfg');
    this.idem = kv('idem');
    this.idemres = kv('idemres');
  }

  async reserve(r: Reservation<F>): Promise<void> {
    const stored: Reservation<F> = { ...r, id: r.config ? null : r.id, config: r.config ?? null, token: this.cipher.seal(r.token), relay: sealRelay(this.cipher, r.relay) };
    const exp = r.expiresAt * 1000;
    this.db.tx(() => {
      const bound = !stored.config && stored.id !== null ? slotKey(r.tenant, stored.id) : null;
      this.res.set(r.key, JSON.stringify(stored), { exp, tag: bound });
      if (r.config) this.rescfg.set(slotKey(r.tenant, r.config), r.key, { exp });
      if (bound) this.keepEntry(bound, exp);
    });
  }

  /** An unfinished entry lives at least as long as a reservation bound to it. */
  private keepEntry(slot: string, exp: number): void {
    const row = this.req.row(slot);
    if (row && row.tag === UNFINISHED && row.exp !== null && row.exp < exp) this.req.expire(slot, exp);
  }

  private rawReservation(key: string): Reservation<F> | undefined {
    const raw = this.res.get(key);
    return raw === undefined ? undefined : (JSON.parse(raw) as Reservation<F>);
  }

  async reservation(key: string): Promise<Reservation<F> | undefined> {
    const r = this.rawReservation(key);
    if (!r || r.expiresAt * 1000 <= this.now()) return undefined;
    return { ...r, token: this.cipher.open(r.token) ?? '', relay: openRelay(this.cipher, r.relay) };
  }

  async configReservation(tenant: string, config: string): Promise<Reservation<F> | undefined> {
    const key = this.rescfg.get(slotKey(tenant, config));
    return key === undefined ? undefined : this.reservation(key);
  }

  async bindKey(key: string, id: string): Promise<void> {
    this.db.tx(() => {
      this.bindIdempotency(key, id);
      const r = this.rawReservation(key);
      if (!r || r.id !== null || r.config) return;
      const slot = slotKey(r.tenant, id);
      if (this.policy.isFinal(this.slot(slot)?.entry.rawState)) {
        // Finished already: nothing more will be delivered to this key.
        this.res.delete(key);
        return;
      }
      this.res.set(key, JSON.stringify({ ...r, id }), { keepExp: true, tag: slot });
      this.keepEntry(slot, r.expiresAt * 1000);
    });
  }

  async dropReservation(key: string): Promise<void> {
    this.db.tx(() => {
      const r = this.rawReservation(key);
      this.res.delete(key);
      if (r?.config) {
        const ck = slotKey(r.tenant, r.config);
        if (this.rescfg.get(ck) === key) this.rescfg.delete(ck);
      }
    });
  }

  private slot(k: string): Slot<F> | undefined {
    const raw = this.req.get(k);
    return raw === undefined ? undefined : (JSON.parse(raw) as Slot<F>);
  }

  /** An entry as handed out: its relay headers opened (kept sealed). */
  private opened(entry: TrackedRequest<F>): TrackedRequest<F> {
    return entry.relay ? { ...entry, relay: openRelay(this.cipher, entry.relay) } : entry;
  }

  async get(tenant: string, id: string): Promise<TrackedRequest<F> | undefined> {
    const s = this.slot(slotKey(tenant, id));
    return s ? this.opened(s.entry) : undefined;
  }

  async observe(tenant: string, family: F, record: Record<string, unknown>, opts: ObserveOptions = {}): Promise<Observation<F>> {
    const k = slotKey(tenant, String(record.id));
    return this.db.tx(() => {
      const cur = this.slot(k);
      const now = this.now();
      const sealed = { ...opts, relay: opts.relay ? sealRelay(this.cipher, opts.relay) : opts.relay };
      const obs = nextObservation(this.policy, cur?.entry, tenant, family, record, sealed, now);
      const token = opts.token ? this.cipher.seal(opts.token) : (cur?.token ?? '');
      const final = this.policy.isFinal(obs.entry.rawState);
      const value = JSON.stringify({ entry: obs.entry, token } satisfies Slot<F>);
      if (final) {
        this.req.set(k, value, { exp: now + this.finishedTtlMs });
        // A finished request's keys live on for the grace period (a late or retried delivery is still answered).
        const until = Math.floor(now / 1000) + FINISHED_RESERVATION_GRACE_S;
        for (const row of this.res.tagged(k)) {
          const r = JSON.parse(row.v) as Reservation<F>;
          if (r.expiresAt > until) this.res.set(row.k, JSON.stringify({ ...r, expiresAt: until }), { exp: until * 1000, tag: k });
        }
      } else {
        const held = Math.max(0, ...this.res.tagged(k).map((row) => row.exp ?? 0));
        this.req.set(k, value, { exp: Math.max(now + this.unfinishedTtlMs, held), tag: UNFINISHED });
      }
      return { entry: this.opened(obs.entry), changed: obs.changed };
    });
  }

  async list(tenant: string, family?: F): Promise<TrackedRequest<F>[]> {
    return this.req
      .scan(`${tenant}\u0000`)
      .map((row) => (JSON.parse(row.v) as Slot<F>).entry)
      .filter((e) => e.tenant === tenant && (!family || e.family === family))
      .map((e) => this.opened(e))
      .sort((a, b) => a.changedAt - b.changedAt);
  }

  async unfinished(): Promise<TrackedRequest<F>[]> {
    return this.req
      .tagged(UNFINISHED)
      .map((row) => (JSON.parse(row.v) as Slot<F>).entry)
      .filter((e) => !this.policy.isFinal(e.rawState))
      .map((e) => this.opened(e));
  }

  async markChecked(tenant: string, id: string, at: number): Promise<void> {
    const k = slotKey(tenant, id);
    this.db.tx(() => {
      const row = this.req.row(k);
      if (!row) return;
      const s = JSON.parse(row.v) as Slot<F>;
      this.req.set(k, JSON.stringify({ ...s, entry: { ...s.entry, checkedAt: at } }), { keepExp: true, tag: row.tag });
    });
  }

  async tokenOf(tenant: string, id: string): Promise<string | undefined> {
    const t = this.slot(slotKey(tenant, id))?.token;
    return t ? this.cipher.open(t) : undefined;
  }

  async markRelayed(tenant: string, id: string, nonce: string): Promise<boolean> {
    const k = slotKey(tenant, id);
    return this.db.tx(() => {
      if (!this.req.row(k)) return false;
      return this.relayed.setNx(`${k}\u0000${nonce}`, '1', { exp: this.now() + this.finishedTtlMs });
    });
  }

  async claimIdempotencyKey(record: IdempotencyRecord<F>): Promise<IdempotencyRecord<F> | undefined> {
    const k = idemKey(record.tenant, record.key);
    return this.db.tx(() => {
      const exp = this.now() + IDEMPOTENCY_TTL_MS;
      if (!this.idem.setNx(k, JSON.stringify({ ...record, relay: sealRelay(this.cipher, record.relay) }), { exp })) return this.record(k);
      if (record.reservation !== null) this.idemres.set(record.reservation, k, { exp });
      return undefined;
    });
  }

  private record(k: string): IdempotencyRecord<F> | undefined {
    const raw = this.idem.get(k);
    if (raw === undefined) return undefined;
    const r = JSON.parse(raw) as IdempotencyRecord<F>;
    return { ...r, relay: openRelay(this.cipher, r.relay) };
  }

  async idempotencyRecord(tenant: string, key: string): Promise<IdempotencyRecord<F> | undefined> {
    return this.record(idemKey(tenant, key));
  }

  async settleIdempotencyKey(tenant: string, key: string, outcome: IdempotencyOutcome): Promise<void> {
    this.db.tx(() => this.settle(idemKey(tenant, key), outcome));
  }

  private settle(k: string, outcome: IdempotencyOutcome): void {
    const raw = this.idem.get(k);
    if (raw === undefined) return;
    const next = settled(JSON.parse(raw) as IdempotencyRecord<F>, outcome);
    // The key keeps its expiry (24 h from the claim).
    if (next) this.idem.set(k, JSON.stringify(next), { keepExp: true });
  }

  async releaseIdempotencyKey(tenant: string, key: string): Promise<void> {
    const k = idemKey(tenant, key);
    this.db.tx(() => {
      const raw = this.idem.get(k);
      if (raw === undefined) return;
      const r = JSON.parse(raw) as IdempotencyRecord<F>;
      this.idem.delete(k);
      if (r.reservation !== null && this.idemres.get(r.reservation) === k) this.idemres.delete(r.reservation);
    });
  }

  /** A reservation bound to a request settles the idempotency record that carried it (inside the caller's transaction). */
  private bindIdempotency(reservation: string, id: string): void {
    const k = this.idemres.get(reservation);
    if (k === undefined) return;
    const raw = this.idem.get(k);
    if (raw === undefined) return;
    const r = JSON.parse(raw) as IdempotencyRecord<F>;
    if (r.reservation !== reservation || r.state === 'created') return;
    this.settle(k, { state: 'created', id });
  }

  /** The sealed token of a request, as kept (tests: never the token in clear). */
  sealedTokenOf(tenant: string, id: string): string | undefined {
    return this.slot(slotKey(tenant, id))?.token;
  }
}

/** The poller's bookkeeping in the database: one budget, one state per entry and one lease per read for every process on the file. */
export class SqlitePollBook implements PollBook {
  private readonly kv: SqliteKv;
  private readonly now: () => number;
  /** Lease values this book holds, by key (a release frees only its own lease). */
  private readonly held = new Map<string, string>();

  constructor(
    private readonly db: SqliteDatabase,
    opts: { namespace?: string; now?: () => number } = {},
  ) {
    this.now = opts.now ?? Date.now;
    this.kv = new SqliteKv(db, `${opts.namespace ?? ''}poll`, () => this.now());
  }

  /** Reads in the window ending at `now` (the call's own time, not the book's clock). */
  private used(now: number): number {
    this.db.run("DELETE FROM kv WHERE ns = ? AND k >= 'calls:' AND k < 'calls;' AND exp <= ?", this.kv.ns, now);
    return Number(this.db.get("SELECT COUNT(*) AS n FROM kv WHERE ns = ? AND k >= 'calls:' AND k < 'calls;'", this.kv.ns)?.n ?? 0);
  }

  async budgetLeft(now: number, max: number): Promise<number> {
    return Math.max(0, max - this.db.tx(() => this.used(now)));
  }

  async spend(now: number, max: number): Promise<boolean> {
    return this.db.tx(() => {
      if (this.used(now) >= max) return false;
      this.db.run('INSERT INTO kv (ns, k, v, exp) VALUES (?, ?, ?, ?)', this.kv.ns, `calls:${now}:${randomBytes(6).toString('hex')}`, '1', now + 60_000);
      return true;
    });
  }

  async state(key: string): Promise<PollState | undefined> {
    const raw = this.kv.get(`state:${key}`);
    return raw === undefined ? undefined : (JSON.parse(raw) as PollState);
  }

  async setState(key: string, st: PollState, ttlMs: number): Promise<void> {
    this.kv.set(`state:${key}`, JSON.stringify(st), { exp: this.now() + Math.max(1000, Math.ceil(ttlMs)) });
  }

  async clearState(key: string): Promise<void> {
    this.kv.delete(`state:${key}`);
  }

  /** States expire on their own. */
  async retain(): Promise<void> {}

  async lease(key: string, ms: number): Promise<boolean> {
    const mine = randomBytes(8).toString('hex');
    const ok = this.kv.setNx(`lease:${key}`, mine, { exp: this.now() + Math.max(1, Math.ceil(ms)) });
    if (ok) this.held.set(key, mine);
    return ok;
  }

  async release(key: string): Promise<void> {
    const mine = this.held.get(key);
    if (mine === undefined) return;
    this.held.delete(key);
    this.db.tx(() => {
      if (this.kv.get(`lease:${key}`) === mine) this.kv.delete(`lease:${key}`);
    });
  }

  async renew(key: string, ms: number): Promise<boolean> {
    const mine = this.held.get(key);
    if (mine === undefined) return false;
    const ok = this.db.tx(() => this.kv.get(`lease:${key}`) === mine && this.kv.expire(`lease:${key}`, this.now() + Math.max(1, Math.ceil(ms))));
    if (!ok) this.held.delete(key);
    return ok;
  }
}

/** The replay guard in the database: a nonce accepted once per scope until the scope's token expires, across processes and restarts. */
export class SqliteReplayGuard implements ReplayGuard {
  private readonly kv: SqliteKv;

  constructor(db: SqliteDatabase, opts: { namespace?: string; now?: () => number } = {}) {
    const now = opts.now ?? Date.now;
    this.kv = new SqliteKv(db, `${opts.namespace ?? ''}replay`, now);
    this.clock = now;
  }

  private readonly clock: () => number;

  async accept(scope: string, nonce: string, expiresAt: number): Promise<boolean> {
    return this.kv.setNx(`${scope}\u0000${nonce}`, '1', { exp: Math.max(this.clock() + 1000, expiresAt * 1000) });
  }

  async seen(scope: string, nonce: string): Promise<boolean> {
    return this.kv.get(`${scope}\u0000${nonce}`) !== undefined;
  }
}

/** File grants in the database (the upstream token already sealed by `FileGrants`), each until its URL expires. */
export class SqliteFileGrantStore implements FileGrantStore {
  private readonly grants: SqliteKv;
  private readonly docs: SqliteKv;

  constructor(
    private readonly db: SqliteDatabase,
    opts: { namespace?: string; now?: () => number } = {},
  ) {
    const now = opts.now ?? Date.now;
    this.grants = new SqliteKv(db, `${opts.namespace ?? ''}grant`, now);
    this.docs = new SqliteKv(db, `${opts.namespace ?? ''}grantdoc`, now);
  }

  async put(grant: FileGrant, docKey: string): Promise<void> {
    const exp = grant.expiresAt * 1000;
    this.db.tx(() => {
      this.grants.set(grant.id, JSON.stringify(grant), { exp });
      this.docs.set(docKey, grant.id, { exp });
    });
  }

  async get(id: string): Promise<FileGrant | undefined> {
    const raw = this.grants.get(id);
    return raw === undefined ? undefined : (JSON.parse(raw) as FileGrant);
  }

  async forDocument(docKey: string): Promise<FileGrant | undefined> {
    const id = this.docs.get(docKey);
    return id === undefined ? undefined : this.get(id);
  }
}
