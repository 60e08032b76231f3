/**
 * The emulator's one job scheduler: every area's asynchronous work (risk requests completing after
 * `completeAfterMs`, company slow datasets and callback requests) runs here, on one clock.
 *
 * The clock is injectable: `now()` (default `Date.now`) and a timer source (default Node's timers,
 * unref'd). The emulated time is the source's time plus whatever `advance` added.
 *
 * - **real** mode (the default): a job fires by itself once its time comes (one timer, armed for
 *   the earliest job); `advance(ms)` moves the clock forward and runs what became due at once.
 * - **manual** mode: the clock stands still and nothing fires by itself; only `advance(ms)` (which
 *   moves the time) and `runDue()` run jobs. Switching back to real lets time flow on from where the
 *   manual clock stood (it never goes back).
 *
 * Jobs run synchronously, in order of due time (ties: in the order they were scheduled); while
 * `advance` runs them, the clock reads each job's own due time, so a job that schedules another
 * within the advanced span sees it run too. A job may return a promise (a callback delivery): the
 * promise `advance` / `runDue` return settles once those have settled. A job's error goes to
 * `onError` and never stops the others.
 */

export type ClockMode = 'real' | 'manual';
export type JobId = number;
/** A job: runs once, at its time. What it returns is awaited by `advance` / `runDue`, never by the timer. */
export type Job = () => unknown;

/** Where real-mode timers come from (injectable for tests). */
export interface TimerSource {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export interface SchedulerOptions {
  /** Time source in epoch milliseconds. @default Date.now */
  now?: () => number;
  /** Timer source for real mode. @default Node's setTimeout / clearTimeout (unref'd) */
  timers?: TimerSource;
  /** @default 'real' */
  mode?: ClockMode;
  /** Told about a job that threw or rejected. @default console.error */
  onError?: (err: unknown, label: string) => void;
}

/** A scheduled job, as `pending()` lists it. */
export interface PendingJob {
  id: JobId;
  /** Due time, epoch milliseconds on the scheduler's clock. */
  at: number;
  label: string;
}

interface Entry extends PendingJob {
  seq: number;
  job: Job;
}

/** Node's longest timer delay (a longer one fires at once): longer waits re-arm on the way. */
const MAX_TIMER_MS = 2_147_483_647;
/** Jobs one pass may run: guards against a job that keeps scheduling itself for "now". */
const MAX_RUNS_PER_PASS = 1_000_000;

export const nodeTimers: TimerSource = {
  setTimeout(fn, ms) {
    const t = setTimeout(fn, ms);
    t.unref();
    return t;
  },
  clearTimeout(handle) {
    clearTimeout(handle as NodeJS.Timeout);
  },
};

const before = (a: Entry, b: Entry): boolean => a.at < b.at || (a.at === b.at && a.seq < b.seq);

export class Scheduler {
  private readonly source: () => number;
  private readonly timers: TimerSource;
  private readonly onError: (err: unknown, label: string) => void;
  private clockMode: ClockMode;
  /** Real mode: added to the source's time. */
  private offsetMs = 0;
  /** Manual mode: the time the clock stands at. */
  private frozenAt = 0;
  /** Min-heap on (at, seq); cancelled entries are dropped lazily. */
  private readonly heap: Entry[] = [];
  private readonly live = new Map<JobId, Entry>();
  private nextId = 1;
  private seq = 0;
  /** The armed timer and its deadline on the source's clock. */
  private timer: { handle: unknown; deadline: number } | null = null;
  private running = false;
  private closed = false;

  constructor(opts: SchedulerOptions = {}) {
    this.source = opts.now ?? Date.now;
    this.timers = opts.timers ?? nodeTimers;
    this.onError = opts.onError ?? ((err, label) => console.error(`emulator job ${label || '(unlabelled)'} failed:`, err));
    this.clockMode = opts.mode ?? 'real';
    if (this.clockMode === 'manual') this.frozenAt = this.source();
  }

  /** The emulated time, epoch milliseconds. */
  now(): number {
    return this.clockMode === 'manual' ? this.frozenAt : this.source() + this.offsetMs;
  }

  get mode(): ClockMode {
    return this.clockMode;
  }

  /** Manual: the clock stops where it is and nothing fires by itself. Real: time flows on from there. */
  setMode(mode: ClockMode): void {
    if (mode === this.clockMode) return;
    const now = this.now();
    this.clockMode = mode;
    if (mode === 'manual') this.frozenAt = now;
    else this.offsetMs = now - this.source();
    this.arm();
  }

  /** Runs `job` at `at` (epoch ms on this clock; a past time is due at once). Returns its id. */
  schedule(at: number, job: Job, label = ''): JobId {
    if (!Number.isFinite(at)) throw new RangeError(`schedule: the time must be a finite number (got ${at})`);
    const entry: Entry = { id: this.nextId++, at, label, seq: this.seq++, job };
    this.live.set(entry.id, entry);
    this.push(entry);
    this.arm();
    return entry.id;
  }

  /** Runs `job` `delayMs` from now. */
  after(delayMs: number, job: Job, label = ''): JobId {
    return this.schedule(this.now() + Math.max(0, delayMs), job, label);
  }

  /** Cancels a job not yet run; false when there is none with that id. */
  cancel(id: JobId): boolean {
    if (!this.live.delete(id)) return false;
    if (this.heap.length > 64 && this.heap.length > 2 * this.live.size) this.compact();
    this.arm();
    return true;
  }

  has(id: JobId): boolean {
    return this.live.has(id);
  }

  /** Jobs not yet run, earliest first. */
  pending(): PendingJob[] {
    return [...this.live.values()].sort((a, b) => (before(a, b) ? -1 : 1)).map(({ id, at, label }) => ({ id, at, label }));
  }

  /**
   * Runs every job due now (in any mode) and resolves with how many ran, once what they returned
   * has settled. Not re-entrant: called from inside a job, it runs nothing (the pass under way
   * picks up what is due).
   */
  async runDue(): Promise<number> {
    const results = this.drain(undefined);
    await Promise.allSettled(results);
    return results.length;
  }

  /**
   * Moves the clock `ms` forward (in either mode), running each job that falls due on the way at
   * its own time; resolves with how many ran, once what they returned has settled. Called from
   * inside a job, it only moves the clock.
   */
  async advance(ms: number): Promise<number> {
    if (!Number.isFinite(ms) || ms < 0) throw new RangeError(`advance: milliseconds must be a finite number ≥ 0 (got ${ms})`);
    const results = this.drain(this.now() + ms);
    await Promise.allSettled(results);
    return results.length;
  }

  /**
   * Real mode: runs at once whatever is due (a read must not see work a late timer has not completed
   * yet). Manual mode: nothing (only moving the time runs jobs).
   */
  catchUp(): void {
    // Not waited for: the jobs' promises never reject (`invoke` hands errors to `onError`).
    if (this.clockMode === 'real') void this.drain(undefined);
  }

  /** Drops every job and stops the timer; later `schedule` calls keep the jobs but arm no timer. */
  close(): void {
    this.closed = true;
    this.live.clear();
    this.heap.length = 0;
    this.disarm();
  }

  // -------------------------------------------------------------------------------------------

  /** Runs what is due up to `target` (moving the clock there) or up to now; returns the jobs' results. */
  private drain(target: number | undefined): Promise<unknown>[] {
    if (this.running) {
      if (target !== undefined) this.moveTo(target);
      return [];
    }
    this.running = true;
    const results: Promise<unknown>[] = [];
    try {
      for (let runs = 0; ; runs++) {
        const next = this.peek();
        if (!next || next.at > (target ?? this.now())) break;
        if (runs >= MAX_RUNS_PER_PASS) {
          this.onError(new Error(`more than ${MAX_RUNS_PER_PASS} jobs due in one pass; the rest wait`), next.label);
          break;
        }
        this.pop();
        this.live.delete(next.id);
        if (target !== undefined) this.moveTo(next.at);
        results.push(this.invoke(next));
      }
      if (target !== undefined) this.moveTo(target);
    } finally {
      this.running = false;
      this.arm();
    }
    return results;
  }

  private invoke(entry: Entry): Promise<unknown> {
    try {
      const out = entry.job();
      if (out instanceof Promise) return out.catch((err: unknown) => this.onError(err, entry.label));
      return Promise.resolve(out);
    } catch (err) {
      this.onError(err, entry.label);
      return Promise.resolve();
    }
  }

  /** Moves the clock forward to `t` (never back). */
  private moveTo(t: number): void {
    const by = t - this.now();
    if (by <= 0) return;
    if (this.clockMode === 'manual') this.frozenAt += by;
    else this.offsetMs += by;
  }

  /** Real mode: one timer for the earliest job. Manual mode (or closed, or nothing to run): none. */
  private arm(): void {
    const next = this.peek();
    if (this.closed || this.running || this.clockMode === 'manual' || !next) {
      this.disarm();
      return;
    }
    const deadline = next.at - this.offsetMs;
    if (this.timer && this.timer.deadline === deadline) return;
    this.disarm();
    const delay = Math.min(MAX_TIMER_MS, Math.max(0, next.at - this.now()));
    const handle = this.timers.setTimeout(() => {
      this.timer = null;
      if (this.clockMode === 'real') void this.drain(undefined); // as in `catchUp`: never rejects
      this.arm();
    }, delay);
    this.timer = { handle, deadline };
  }

  private disarm(): void {
    if (this.timer) this.timers.clearTimeout(this.timer.handle);
    this.timer = null;
  }

  // Min-heap with lazy deletion.

  /** Drops cancelled entries (when they outnumber the live ones). */
  private compact(): void {
    const keep = this.heap.filter((e) => this.live.has(e.id));
    this.heap.length = 0;
    for (const e of keep) this.push(e);
  }

  private peek(): Entry | undefined {
    while (this.heap.length > 0 && !this.live.has(this.heap[0].id)) this.pop();
    return this.heap[0];
  }

  private push(entry: Entry): void {
    const h = this.heap;
    h.push(entry);
    let i = h.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(h[i], h[parent])) break;
      [h[i], h[parent]] = [h[parent], h[i]];
      i = parent;
    }
  }

  private pop(): Entry | undefined {
    const h = this.heap;
    const top = h[0];
    const last = h.pop();
    if (h.length > 0 && last) {
      h[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < h.length && before(h[l], h[m])) m = l;
        if (r < h.length && before(h[r], h[m])) m = r;
        if (m === i) break;
        [h[i], h[m]] = [h[m], h[i]];
        i = m;
      }
    }
    return top;
  }
}
