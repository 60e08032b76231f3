/**
 * The kit's bounded poller: work still waiting for the upstream whose callback is late is read
 * (GET of the record: free, but still counted) so completion arrives even when callbacks do not.
 * It cannot run up costs: at most `maxCallsPerMinute` reads in any 60 s window, an entry is read at
 * most once per its period (`lateAfterMs`), and only states that wait for the upstream are polled
 * (the area's `StatePolicy` says which).
 *
 * Beyond that, slowly (at most once per `slowEveryMs`): running monitors, whose callbacks come at
 * any time (a lost one is noticed by the next read), and pending work older than `maxAgeMs`. A read
 * that fails backs off (doubling, up to `maxBackoffMs`); one answered 400, 401, 403, 404 or 406
 * stops the polling of that entry (logged) until something else (a callback, a read) changes it.
 *
 * Its bookkeeping (the per-minute budget, what it remembers of each entry between rounds, and a
 * lease per read) lives behind the async `PollBook`: `MemoryPollBook` for one process,
 * `RedisPollBook` (`redis-store.ts`) for replicas sharing one budget, where the lease
 * (`SET lease:<id> NX PX <period>`) makes each late entry read once in all, not once per replica.
 *
 * Environment (prefix per area, e.g. `RISK_`): `<P>POLL_INTERVAL_MS` (tick, default 5000),
 * `<P>POLL_LATE_AFTER_MS` (default 60000), `<P>POLL_MAX_CALLS_PER_MIN` (default 60; 0 switches the
 * poller off), `<P>MONITOR_POLL_MS` (the slow rate, default one day), `<P>POLL_MAX_AGE_MS` (default
 * 7 days), `<P>POLL_MAX_BACKOFF_MS` (default: the slow rate).
 */
import { LRUCache } from 'lru-cache';
import { entriesAtMost } from '../../../platform/lru.ts';
import { UpstreamError } from '../../upstream/errors.ts';
import type { FamilyTable, StatePolicy } from './policy.ts';
import { areaSetting, settingsOf, type SettingsSource } from '../../../platform/settings.ts';
import type { TrackedRequest } from './store.ts';
import { pollerReads } from '../../../platform/metrics.ts';
import { log } from '../../../platform/log.ts';

const DAY = 24 * 3600 * 1000;

export interface PollerOptions {
  /** Milliseconds between ticks. @default 5000 */
  intervalMs?: number;
  /** An entry unchanged and unread for this long is late. @default 60000 */
  lateAfterMs?: number;
  /** Reads allowed in any 60-second window (0: never poll). @default 60 */
  maxCallsPerMinute?: number;
  /** Running monitors, and pending work past `maxAgeMs`, are read at most this often. @default 86400000 (1 day) */
  slowEveryMs?: number;
  /** Pending work created longer ago than this is read only at the slow rate. @default 604800000 (7 days) */
  maxAgeMs?: number;
  /** Longest wait after failed reads (the wait doubles per failure from the period). @default slowEveryMs */
  maxBackoffMs?: number;
  /** The poller's bookkeeping. @default a `MemoryPollBook` */
  book?: PollBook;
  /** Log prefix. @default 'poller' */
  label?: string;
  now?: () => number;
}

export interface PollerDeps<F extends string = string> {
  unfinished(): Promise<TrackedRequest<F>[]>;
  /** Reads one entry upstream and applies what it finds; resolves when done (errors are the poller's to log). */
  refresh(entry: TrackedRequest<F>): Promise<void>;
  /** Notes a read that failed, so the entry is not retried before its period. */
  markChecked(entry: TrackedRequest<F>, at: number): Promise<void>;
}

/** What the poller remembers of an entry between rounds (reset when the entry changes). */
export interface PollState {
  seq: number;
  failures: number;
  /** Not before this time (ms); null: no wait (never stored as Infinity). */
  nextAt: number | null;
  /** Why polling stopped, when it did. */
  gaveUp: string | null;
}

/** The poller's bookkeeping, shared by replicas when it lives in Redis. */
export interface PollBook {
  /** Reads still allowed in the 60 s window ending at `now`. */
  budgetLeft(now: number, max: number): Promise<number>;
  /** Takes one read from the budget (atomic); false when none is left. */
  spend(now: number, max: number): Promise<boolean>;
  state(key: string): Promise<PollState | undefined>;
  /** Keeps `st` for `ttlMs` at least (a shared book may forget it after). */
  setState(key: string, st: PollState, ttlMs: number): Promise<void>;
  clearState(key: string): Promise<void>;
  /** Forgets the states of entries no longer unfinished (a shared book lets them expire instead). */
  retain(live: Set<string>): Promise<void>;
  /** Takes the lease to read `key` for `ms` (atomic across replicas); false when another holder has it. */
  lease(key: string, ms: number): Promise<boolean>;
  /** Gives back a lease this book took (e.g. the budget refused the read), so another replica may read the entry. */
  release(key: string): Promise<void>;
  /**
   * Extends a lease this book holds to `ms` from now, for work held longer than one lease (a bulk
   * sending's queue); false when it is no longer this book's (expired, or taken by another holder).
   * A book without it is one process's: its leases never lapse.
   */
  renew?(key: string, ms: number): Promise<boolean>;
}

export interface MemoryPollBookOptions {
  /** Entry states kept at most (least recently used go first). @default 100000 */
  maxStates?: number;
  /** Clock of the states' expiry (ms): the poller's. @default Date.now */
  now?: () => number;
}

/** One process's poller bookkeeping. */
export class MemoryPollBook implements PollBook {
  private readonly calls: number[] = [];
  private readonly states: LRUCache<string, PollState>;

  constructor(opts: MemoryPollBookOptions = {}) {
    const now = opts.now ?? Date.now;
    // Each state expires after the ttl it was set with (as on Redis), on the given clock.
    this.states = new LRUCache({ ...entriesAtMost(opts.maxStates ?? 100_000), ttlResolution: 0, perf: { now } });
  }

  async budgetLeft(now: number, max: number): Promise<number> {
    const cutoff = now - 60_000;
    while (this.calls.length > 0 && this.calls[0] <= cutoff) this.calls.shift();
    return Math.max(0, max - this.calls.length);
  }

  async spend(now: number, max: number): Promise<boolean> {
    if ((await this.budgetLeft(now, max)) === 0) return false;
    this.calls.push(now);
    return true;
  }

  async state(key: string): Promise<PollState | undefined> {
    return this.states.get(key);
  }

  async setState(key: string, st: PollState, ttlMs: number): Promise<void> {
    this.states.set(key, st, { ttl: Math.max(1, Math.ceil(ttlMs)) });
  }

  async clearState(key: string): Promise<void> {
    this.states.delete(key);
  }

  async retain(live: Set<string>): Promise<void> {
    for (const k of [...this.states.keys()]) if (!live.has(k)) this.states.delete(k);
  }

  /** One process polls alone: the lease is always granted (the round itself never reads one entry twice). */
  async lease(): Promise<boolean> {
    return true;
  }

  async release(): Promise<void> {}

  async renew(): Promise<boolean> {
    return true;
  }
}

/** Poller settings from `<PREFIX>POLL_*` variables of `env` (e.g. `RISK_POLL_INTERVAL_MS`). */
export function pollerOptionsFromEnv(env: SettingsSource, area: string): Required<Omit<PollerOptions, 'now' | 'book' | 'label'>> {
  const s = settingsOf(env);
  const slowEveryMs = areaSetting(s, area, 'MONITOR_POLL_MS');
  return {
    intervalMs: Math.max(10, areaSetting(s, area, 'POLL_INTERVAL_MS')),
    lateAfterMs: areaSetting(s, area, 'POLL_LATE_AFTER_MS'),
    maxCallsPerMinute: areaSetting(s, area, 'POLL_MAX_CALLS_PER_MIN'),
    slowEveryMs,
    maxAgeMs: areaSetting(s, area, 'POLL_MAX_AGE_MS'),
    maxBackoffMs: areaSetting(s, area, 'POLL_MAX_BACKOFF_MS') ?? slowEveryMs,
  };
}

/** Upstream answers after which reading the entry again cannot help. */
export const PERMANENT = new Set([400, 401, 403, 404, 406]);

export const pollKeyOf = (e: { tenant: string; id: string }): string => `${e.tenant}\u0000${e.id.toLowerCase()}`;

export class Poller<F extends string = string, K extends string = string> {
  private readonly intervalMs: number;
  private readonly lateAfterMs: number;
  private readonly maxCalls: number;
  private readonly slowEveryMs: number;
  private readonly maxAgeMs: number;
  private readonly maxBackoffMs: number;
  private readonly now: () => number;
  private readonly label: string;
  readonly book: PollBook;
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  /** Why polling stopped per entry (this process's view, for tests and operations). */
  private readonly gaveUp = new Map<string, string>();
  /** Reads made by this process since start (for tests and metrics). */
  polled = 0;

  constructor(
    private readonly families: FamilyTable<F, K>,
    private readonly policy: StatePolicy<K>,
    private readonly deps: PollerDeps<F>,
    opts: PollerOptions = {},
  ) {
    this.intervalMs = opts.intervalMs ?? 5000;
    this.lateAfterMs = opts.lateAfterMs ?? 60_000;
    this.maxCalls = opts.maxCallsPerMinute ?? 60;
    this.slowEveryMs = opts.slowEveryMs ?? DAY;
    this.maxAgeMs = opts.maxAgeMs ?? 7 * DAY;
    this.maxBackoffMs = opts.maxBackoffMs ?? this.slowEveryMs;
    this.now = opts.now ?? Date.now;
    this.book = opts.book ?? new MemoryPollBook({ now: this.now });
    this.label = opts.label ?? 'poller';
  }

  start(): void {
    if (this.timer || this.maxCalls <= 0) return;
    this.timer = setInterval(() => void this.tick().catch((err: unknown) => log.error(`[${this.label}] round failed: ${(err as Error).message}`)), this.intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running?.catch(() => undefined);
  }

  /** One round: the late entries, least recently checked first, within the budget. */
  tick(): Promise<void> {
    if (this.running) return this.running;
    this.running = this.round().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  /** Reads still allowed in the current 60-second window. */
  budgetLeft(): Promise<number> {
    return this.book.budgetLeft(this.now(), this.maxCalls);
  }

  /** Why polling of an entry stopped (null while it is polled). */
  gaveUpOn(tenant: string, id: string): string | null {
    return this.gaveUp.get(pollKeyOf({ tenant, id })) ?? null;
  }

  /** How often an entry may be read now (ms), or null when it is not polled at all. */
  private periodOf(e: TrackedRequest<F>, now: number): number | null {
    const kind = this.families[e.family].kind;
    if (this.policy.awaitsUpstream(kind, e.rawState)) {
      const since = e.createdAt !== null ? e.createdAt * 1000 : e.changedAt;
      return now - since > this.maxAgeMs ? Math.max(this.lateAfterMs, this.slowEveryMs) : this.lateAfterMs;
    }
    if (this.policy.isActiveMonitor(kind, e.rawState)) return Math.max(this.lateAfterMs, this.slowEveryMs);
    return null;
  }

  private async round(): Promise<void> {
    if ((await this.budgetLeft()) === 0) return;
    const now = this.now();
    const unfinished = await this.deps.unfinished();
    const live = new Set<string>();
    const due: Array<{ entry: TrackedRequest<F>; period: number }> = [];
    for (const entry of unfinished) {
      const k = pollKeyOf(entry);
      live.add(k);
      const period = this.periodOf(entry, now);
      if (period === null) continue;
      if (now - Math.max(entry.changedAt, entry.checkedAt) < period) continue;
      let st = await this.book.state(k);
      if (st && st.seq !== entry.seq) {
        // The entry changed since (a callback, a read): start afresh.
        await this.book.clearState(k);
        this.gaveUp.delete(k);
        st = undefined;
      }
      if (st?.gaveUp) continue;
      if (st && st.nextAt !== null && now < st.nextAt) continue;
      due.push({ entry, period });
    }
    for (const k of this.gaveUp.keys()) if (!live.has(k)) this.gaveUp.delete(k);
    await this.book.retain(live);
    due.sort((a, b) => a.entry.checkedAt - b.entry.checkedAt);
    for (const { entry, period } of due) {
      const k = pollKeyOf(entry);
      // Another replica reads it (or just did): skip, without spending budget.
      if (!(await this.book.lease(k, period))) continue;
      if (!(await this.book.spend(this.now(), this.maxCalls))) {
        // Out of budget: give the lease back, so a replica with budget is not kept off the entry for a period.
        await this.book.release(k);
        return;
      }
      this.polled++;
      pollerReads.inc({ poller: this.label });
      try {
        await this.deps.refresh(entry);
        await this.book.clearState(k);
      } catch (err) {
        const at = this.now();
        await this.deps.markChecked(entry, at);
        const prev = await this.book.state(k);
        const failures = (prev?.failures ?? 0) + 1;
        if (err instanceof UpstreamError && err.kind === 'http' && PERMANENT.has(err.status)) {
          const reason = `upstream answered ${err.status}${err.upstreamCode !== null ? ` (error ${err.upstreamCode})` : ''}`;
          await this.book.setState(k, { seq: entry.seq, failures, nextAt: null, gaveUp: reason }, this.maxAgeMs);
          this.gaveUp.set(k, reason);
          log.warn(`[${this.label}] no longer polling ${entry.family} ${entry.id}: ${reason}`);
          continue;
        }
        const wait = Math.min(Math.max(this.maxBackoffMs, period), period * 2 ** failures);
        await this.book.setState(k, { seq: entry.seq, failures, nextAt: at + wait, gaveUp: null }, wait + period);
        log.error(`[${this.label}] ${entry.family} ${entry.id}: ${(err as Error).message} (failure ${failures}, next read in ${Math.round(wait / 1000)} s at the earliest)`);
      }
    }
  }
}
