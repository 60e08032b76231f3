/**
 * The risk area's asynchronous machinery, shared by every family: which ids exist and whose they
 * are (records are per token owner), the jobs that move work to its final state, and callback
 * delivery. A family registers a record here; when the record reaches its last state before
 * completion the family `arm`s it: a job on the emulator's scheduler completes it
 * `completeAfterMs` later on the emulator's clock (or sooner: on `advance`, or on the sandbox
 * `?callback` simulation) and delivers the callback.
 */
import { deliverCallback, isCallback, type StoredCallback } from '../callbacks.ts';
import type { JobId, Scheduler } from '../scheduler.ts';
import { HEX24 } from './util.ts';

/** Work waiting to complete. */
export interface PendingWork {
  id: string;
  /** Moves the record to its final state (complete / COMPLETED / ACTIVATED). */
  complete: () => void;
  /** The record as its `GET /:id` returns it: the callback payload's `data`. */
  view: () => unknown;
  callback: () => StoredCallback | null;
}

/** How an id relates to a caller: not an id, no such record, someone else's (or another family's), or theirs. */
export type IdLookup = 'malformed' | 'unknown' | 'foreign' | 'ok';

export class RiskJobs {
  private delayMs: number;
  private readonly owners = new Map<string, { owner: string; family: string }>();
  /** Pending work and the scheduler job completing it (null: only `advance` / `?callback` will). */
  private readonly pending = new Map<string, { work: PendingWork; job: JobId | null }>();
  private readonly deliveries = new Set<Promise<unknown>>();

  constructor(
    completeAfterMs: number,
    private readonly scheduler: Scheduler,
  ) {
    this.delayMs = completeAfterMs;
  }

  get completeAfterMs(): number {
    return this.delayMs;
  }

  /** Records that `id` exists and belongs to `owner` in `family`. */
  register(id: string, owner: string, family: string): void {
    this.owners.set(id, { owner, family });
  }

  lookup(id: string, owner: string, family: string): IdLookup {
    if (!HEX24.test(id)) return 'malformed';
    const entry = this.owners.get(id.toLowerCase());
    if (!entry) return 'unknown';
    return entry.owner === owner && entry.family === family ? 'ok' : 'foreign';
  }

  /** Starts the countdown to completion (restarting it when already armed). */
  arm(work: PendingWork): void {
    this.disarm(work.id);
    const job = this.delayMs > 0 ? this.scheduler.after(this.delayMs, () => this.complete(work.id), `risk complete ${work.id}`) : null;
    this.pending.set(work.id, { work, job });
  }

  isPending(id: string): boolean {
    return this.pending.has(id);
  }

  /** Completes pending work now and delivers its callback; false when `id` was not pending. */
  async complete(id: string): Promise<boolean> {
    const entry = this.pending.get(id);
    if (!entry) return false;
    this.disarm(id);
    entry.work.complete();
    await this.notify(entry.work);
    return true;
  }

  /** Delivers the record's callback, if it has one: the full success envelope of its GET. */
  notify(work: Pick<PendingWork, 'view' | 'callback'>): Promise<void> {
    const cb = work.callback();
    if (!cb || !isCallback(cb)) return Promise.resolve();
    const payload = { data: work.view(), success: true, message: '', error: null };
    const delivery = deliverCallback(cb, payload).then(() => undefined);
    this.deliveries.add(delivery);
    void delivery.finally(() => this.deliveries.delete(delivery));
    return delivery;
  }

  /** Completes one pending record (`id`) or every pending record; returns the ids completed. */
  async advance(id?: string): Promise<string[]> {
    const ids = id === undefined ? [...this.pending.keys()] : this.pending.has(id) ? [id] : [];
    const done: string[] = [];
    for (const each of ids) if (await this.complete(each)) done.push(each);
    return done;
  }

  /** Changes the delay; pending work restarts its countdown with the new value (≤ 0: never by itself). */
  setCompleteAfterMs(ms: number): void {
    this.delayMs = ms;
    for (const { work } of [...this.pending.values()]) this.arm(work);
  }

  /** Ids of pending work. */
  pendingIds(): string[] {
    return [...this.pending.keys()];
  }

  /** Resolves when every callback delivery started so far has finished. */
  async drain(): Promise<void> {
    while (this.deliveries.size > 0) await Promise.allSettled([...this.deliveries]);
  }

  /** Forgets every record and job (control `reset`). */
  reset(): void {
    this.close();
    this.pending.clear();
    this.owners.clear();
  }

  /** Cancels every job; pending work stays pending (it can still be advanced). */
  close(): void {
    for (const entry of this.pending.values()) {
      if (entry.job !== null) this.scheduler.cancel(entry.job);
      entry.job = null;
    }
  }

  private disarm(id: string): void {
    const entry = this.pending.get(id);
    if (entry && entry.job !== null) this.scheduler.cancel(entry.job);
    this.pending.delete(id);
  }
}

/** What every family module receives. */
export interface RiskContext {
  jobs: RiskJobs;
  /** The emulator's clock, epoch milliseconds (record times follow it). */
  now: () => number;
  /** The same, in whole seconds (the vendor's timestamps). */
  nowSeconds: () => number;
  /** Registers what a control `reset` must also forget (a family's records). */
  onReset: (fn: () => void) => void;
  /**
   * Registers a handler for the control `monitorEvent {id}` (a simulated change on an ACTIVATED
   * monitor); it answers true when `id` was its monitor and the change was delivered.
   */
  onMonitorEvent: (fn: (id: string) => Promise<boolean>) => void;
  /**
   * Milliseconds between the creation of a bureau request and its delegation form existing (the
   * delegation download answers 406 until then); 0 or less: at once.
   */
  delegationAfterMs: () => number;
  /** Runs `job` `delayMs` later on the emulator's clock (the area's scheduler). */
  later: (delayMs: number, job: () => void, label: string) => void;
}
