/**
 * The bounded poller: requests still waiting for the upstream whose callback is late are read
 * (GET of the record: free, but still counted) so completion arrives even when callbacks do not.
 * It cannot run up costs: at most `maxCallsPerMinute` reads in any 60 s window, a request is read at
 * most once per `lateAfterMs`, and only states that wait for the upstream are polled (a bureau
 * request waiting for the caller's signed delegation is not).
 *
 * Environment: `RISK_POLL_INTERVAL_MS` (tick, default 5000), `RISK_POLL_LATE_AFTER_MS` (how long
 * after the last change or read a request counts as late, default 60000), `RISK_POLL_MAX_CALLS_PER_MIN`
 * (default 60; 0 switches the poller off).
 */
import { awaitsUpstream } from './model.ts';
import type { TrackedRequest } from './store.ts';
import { FAMILIES } from './upstream.ts';

export interface PollerOptions {
  /** Milliseconds between ticks. @default 5000 */
  intervalMs?: number;
  /** A request unchanged and unread for this long is late. @default 60000 */
  lateAfterMs?: number;
  /** Reads allowed in any 60-second window (0: never poll). @default 60 */
  maxCallsPerMinute?: number;
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
  return {
    intervalMs: Math.max(10, n('RISK_POLL_INTERVAL_MS', 5000)),
    lateAfterMs: n('RISK_POLL_LATE_AFTER_MS', 60_000),
    maxCallsPerMinute: n('RISK_POLL_MAX_CALLS_PER_MIN', 60),
  };
}

export class RiskPoller {
  private readonly intervalMs: number;
  private readonly lateAfterMs: number;
  private readonly maxCalls: number;
  private readonly now: () => number;
  private readonly calls: number[] = [];
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

  private async round(): Promise<void> {
    if (this.budgetLeft() === 0) return;
    const now = this.now();
    const late = (await this.deps.unfinished())
      .filter((e) => awaitsUpstream(FAMILIES[e.family].kind, e.rawState))
      .filter((e) => now - Math.max(e.changedAt, e.checkedAt) >= this.lateAfterMs)
      .sort((a, b) => a.checkedAt - b.checkedAt);
    for (const entry of late) {
      if (this.budgetLeft() === 0) return;
      this.calls.push(this.now());
      this.polled++;
      try {
        await this.deps.refresh(entry);
      } catch (err) {
        await this.deps.markChecked(entry, this.now());
        console.error(`[risk poller] ${entry.family} ${entry.id}: ${(err as Error).message}`);
      }
    }
  }
}
