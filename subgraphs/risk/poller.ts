/**
 * The bounded poller: requests still waiting for the upstream whose callback is late are read
 * (GET of the record: free, but still counted) so completion arrives even when callbacks do not.
 * It cannot run up costs: at most `maxCallsPerMinute` reads in any 60 s window, a request is read at
 * most once per `lateAfterMs`, and only states that wait for the upstream are polled (a bureau
 * request waiting for the caller's signed delegation is not).
 *
 * Beyond that, slowly (at most once per `slowEveryMs`): running monitors, whose callbacks come at
 * any time during their year (a lost one is noticed by the next read), and pending requests older
 * than `maxAgeMs`. A read that fails backs off (doubling, up to `maxBackoffMs`); one answered 400,
 * 401, 403, 404 or 406 stops the polling of that request (logged) until something else (a callback,
 * a read) changes it.
 *
 * Environment: `RISK_POLL_INTERVAL_MS` (tick, default 5000), `RISK_POLL_LATE_AFTER_MS` (how long
 * after the last change or read a request counts as late, default 60000), `RISK_POLL_MAX_CALLS_PER_MIN`
 * (default 60; 0 switches the poller off), `RISK_MONITOR_POLL_MS` (the slow rate, default one day),
 * `RISK_POLL_MAX_AGE_MS` (default 7 days), `RISK_POLL_MAX_BACKOFF_MS` (default: the slow rate).
 */
import { UpstreamError } from '../upstream/errors.ts';
import { awaitsUpstream, isActiveMonitor } from './model.ts';
import type { TrackedRequest } from './store.ts';
import { FAMILIES } from './upstream.ts';

const DAY = 24 * 3600 * 1000;

export interface PollerOptions {
  /** Milliseconds between ticks. @default 5000 */
  intervalMs?: number;
  /** A request unchanged and unread for this long is late. @default 60000 */
  lateAfterMs?: number;
  /** Reads allowed in any 60-second window (0: never poll). @default 60 */
  maxCallsPerMinute?: number;
  /** Running monitors, and pending requests past `maxAgeMs`, are read at most this often. @default 86400000 (1 day) */
  slowEveryMs?: number;
  /** A pending request created longer ago than this is read only at the slow rate. @default 604800000 (7 days) */
  maxAgeMs?: number;
  /** Longest wait after failed reads (the wait doubles per failure from `lateAfterMs`). @default slowEveryMs */
  maxBackoffMs?: number;
  now?: () => number;
}

export interface PollerDeps {
  unfinished(): Promise<TrackedRequest[]>;
  /** Reads one request upstream and applies what it finds; resolves when done (errors are the poller's to log). */
  refresh(entry: TrackedRequest): Promise<void>;
  /** Notes a read that failed, so the request is not retried before `lateAfterMs`. */
  markChecked(entry: TrackedRequest, at: number): Promise<void>;
}

export function pollerOptionsFromEnv(env: NodeJS.ProcessEnv = process.env): Required<Omit<PollerOptions, 'now'>> {
  const n = (name: string, dflt: number): number => {
    const v = env[name];
    if (v === undefined || v.trim() === '') return dflt;
    const x = Number(v);
    if (!Number.isFinite(x) || x < 0) throw new Error(`${name} must be a non-negative number (got "${v}")`);
    return x;
  };
  const slowEveryMs = n('RISK_MONITOR_POLL_MS', DAY);
  return {
    intervalMs: Math.max(10, n('RISK_POLL_INTERVAL_MS', 5000)),
    lateAfterMs: n('RISK_POLL_LATE_AFTER_MS', 60_000),
    maxCallsPerMinute: n('RISK_POLL_MAX_CALLS_PER_MIN', 60),
    slowEveryMs,
    maxAgeMs: n('RISK_POLL_MAX_AGE_MS', 7 * DAY),
    maxBackoffMs: n('RISK_POLL_MAX_BACKOFF_MS', slowEveryMs),
  };
}

/** Upstream answers after which reading the request again cannot help. */
const PERMANENT = new Set([400, 401, 403, 404, 406]);

/** What the poller remembers of a request between rounds (reset when the request changes). */
interface PollState {
  seq: number;
  failures: number;
  /** Not before this time (ms). */
  nextAt: number;
  /** Why polling stopped, when it did. */
  gaveUp: string | null;
}

const keyOf = (e: TrackedRequest): string => `${e.tenant}\u0000${e.id.toLowerCase()}`;

export class RiskPoller {
  private readonly intervalMs: number;
  private readonly lateAfterMs: number;
  private readonly maxCalls: number;
  private readonly slowEveryMs: number;
  private readonly maxAgeMs: number;
  private readonly maxBackoffMs: number;
  private readonly now: () => number;
  private readonly calls: number[] = [];
  private readonly states = new Map<string, PollState>();
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  /** Reads made since start (for tests and metrics). */
  polled = 0;

  constructor(
    private readonly deps: PollerDeps,
    opts: PollerOptions = {},
  ) {
    this.intervalMs = opts.intervalMs ?? 5000;
    this.lateAfterMs = opts.lateAfterMs ?? 60_000;
    this.maxCalls = opts.maxCallsPerMinute ?? 60;
    this.slowEveryMs = opts.slowEveryMs ?? DAY;
    this.maxAgeMs = opts.maxAgeMs ?? 7 * DAY;
    this.maxBackoffMs = opts.maxBackoffMs ?? this.slowEveryMs;
    this.now = opts.now ?? Date.now;
  }

  start(): void {
    if (this.timer || this.maxCalls <= 0) return;
    this.timer = setInterval(() => void this.tick(), this.intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running;
  }

  /** One round: the late requests, least recently checked first, within the budget. */
  tick(): Promise<void> {
    if (this.running) return this.running;
    this.running = this.round().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  /** Reads still allowed in the current 60-second window. */
  budgetLeft(): number {
    const cutoff = this.now() - 60_000;
    while (this.calls.length > 0 && (this.calls[0] as number) <= cutoff) this.calls.shift();
    return Math.max(0, this.maxCalls - this.calls.length);
  }

  /** Why polling of a request stopped (null while it is polled). */
  gaveUpOn(tenant: string, id: string): string | null {
    return this.states.get(`${tenant}\u0000${id.toLowerCase()}`)?.gaveUp ?? null;
  }

  /** How often a request may be read now (ms), or null when it is not polled at all. */
  private periodOf(e: TrackedRequest, now: number): number | null {
    const kind = FAMILIES[e.family].kind;
    if (awaitsUpstream(kind, e.rawState)) {
      const since = e.createdAt !== null ? e.createdAt * 1000 : e.changedAt;
      return now - since > this.maxAgeMs ? Math.max(this.lateAfterMs, this.slowEveryMs) : this.lateAfterMs;
    }
    if (isActiveMonitor(kind, e.rawState)) return Math.max(this.lateAfterMs, this.slowEveryMs);
    return null;
  }

  private async round(): Promise<void> {
    if (this.budgetLeft() === 0) return;
    const now = this.now();
    const unfinished = await this.deps.unfinished();
    const live = new Set<string>();
    const due: Array<{ entry: TrackedRequest; period: number }> = [];
    for (const entry of unfinished) {
      const k = keyOf(entry);
      live.add(k);
      let st = this.states.get(k);
      if (st && st.seq !== entry.seq) {
        // The request changed since (a callback, a read): start afresh.
        this.states.delete(k);
        st = undefined;
      }
      if (st?.gaveUp) continue;
      const period = this.periodOf(entry, now);
      if (period === null) continue;
      if (now - Math.max(entry.changedAt, entry.checkedAt) < period) continue;
      if (st && now < st.nextAt) continue;
      due.push({ entry, period });
    }
    for (const k of this.states.keys()) if (!live.has(k)) this.states.delete(k);
    due.sort((a, b) => a.entry.checkedAt - b.entry.checkedAt);
    for (const { entry, period } of due) {
      if (this.budgetLeft() === 0) return;
      this.calls.push(this.now());
      this.polled++;
      const k = keyOf(entry);
      try {
        await this.deps.refresh(entry);
        this.states.delete(k);
      } catch (err) {
        const at = this.now();
        await this.deps.markChecked(entry, at);
        const prev = this.states.get(k);
        const failures = (prev?.failures ?? 0) + 1;
        if (err instanceof UpstreamError && err.kind === 'http' && PERMANENT.has(err.status)) {
          const reason = `upstream answered ${err.status}${err.upstreamCode !== null ? ` (error ${err.upstreamCode})` : ''}`;
          this.states.set(k, { seq: entry.seq, failures, nextAt: Infinity, gaveUp: reason });
          console.warn(`[risk poller] no longer polling ${entry.family} ${entry.id}: ${reason}`);
          continue;
        }
        const wait = Math.min(Math.max(this.maxBackoffMs, period), period * 2 ** failures);
        this.states.set(k, { seq: entry.seq, failures, nextAt: at + wait, gaveUp: null });
        console.error(`[risk poller] ${entry.family} ${entry.id}: ${(err as Error).message} (failure ${failures}, next read in ${Math.round(wait / 1000)} s at the earliest)`);
      }
    }
  }
}
