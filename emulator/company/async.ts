/**
 * Asynchronous company requests: a slow dataset (IT-full/aml/marketing/stakeholders) being prepared,
 * whichever flow bought it: the POST + callback variant, or the GET (which waits for it, up to the
 * vendor's limit, `settled`, and answers 302 → IT-check_id past that). A request stays PENDING until
 * its due time on the emulator's clock (a job on the emulator's scheduler), then holds its dataset
 * (and, when it has a callback, the dataset is POSTed to it). The clock can be moved forward and
 * requests completed at once through the control API.
 */
import { hexId } from '../core.ts';
import { deliverCallback, type VendorCallback } from '../callbacks.ts';
import type { JobId, Scheduler } from '../scheduler.ts';

export interface AsyncRequest {
  id: string;
  /** Endpoint that created it (`IT-full`, …). */
  endpoint: string;
  vat: string;
  /** Owner of the token that asked: only that account can read it through IT-check_id. */
  owner: string;
  createdAt: number;
  dueAt: number;
  state: 'PENDING' | 'DONE';
  callback: VendorCallback | null;
  /** Builds the dataset when the request completes. */
  dataset: () => unknown;
  result?: unknown;
}

export class AsyncRequests {
  private readonly requests = new Map<string, AsyncRequest>();
  /** The scheduler job completing each pending request. */
  private readonly jobs = new Map<string, JobId>();
  /** Who waits for a pending request (`settled`): told `true` when it is DONE, `false` when given up. */
  private readonly waiters = new Map<string, Set<(done: boolean) => void>>();

  constructor(private readonly scheduler: Scheduler) {}

  /** The emulator's clock. */
  now(): number {
    return this.scheduler.now();
  }

  create(init: { endpoint: string; vat: string; owner: string; delayMs: number; callback: VendorCallback | null; dataset: () => unknown }): AsyncRequest {
    const now = this.now();
    const req: AsyncRequest = {
      id: hexId(),
      endpoint: init.endpoint,
      vat: init.vat,
      owner: init.owner,
      createdAt: now,
      dueAt: now + Math.max(0, init.delayMs),
      state: 'PENDING',
      callback: init.callback,
      dataset: init.dataset,
    };
    if (this.requests.size >= 10_000) for (const [id, r] of this.requests) if (r.state === 'DONE') this.requests.delete(id);
    this.requests.set(req.id, req);
    this.jobs.set(
      req.id,
      this.scheduler.schedule(req.dueAt, () => this.finish(req), `company ${req.endpoint} ${req.id}`),
    );
    return req;
  }

  /**
   * Whether the request is DONE within `waitMs` on the emulator's clock (a job on its scheduler, so
   * a manual clock holds the wait until it is moved): `true` as soon as it completes, `false` when
   * the wait ends first (or the module closes).
   */
  settled(req: AsyncRequest, waitMs: number): Promise<boolean> {
    if (req.state === 'DONE') return Promise.resolve(true);
    if (waitMs <= 0) return Promise.resolve(false);
    return new Promise<boolean>((resolve) => {
      let set = this.waiters.get(req.id);
      if (!set) this.waiters.set(req.id, (set = new Set()));
      const waiters = set;
      const tell = (done: boolean): void => {
        waiters.delete(tell);
        if (waiters.size === 0 && this.waiters.get(req.id) === waiters) this.waiters.delete(req.id);
        this.scheduler.cancel(timeout);
        resolve(done);
      };
      const timeout = this.scheduler.after(waitMs, () => tell(false), `company ${req.endpoint} ${req.id} wait`);
      waiters.add(tell);
    });
  }

  /** The request, brought up to date with the clock. */
  get(id: string): AsyncRequest | undefined {
    this.scheduler.catchUp();
    return this.requests.get(id.toLowerCase());
  }

  /** Moves the emulator's clock forward (what falls due completes now; callbacks are not awaited). */
  advance(ms: number): void {
    void this.scheduler.advance(Math.max(0, Number.isFinite(ms) ? ms : 0));
  }

  /** Completes one request (or all pending ones) now. Returns how many completed. */
  complete(id?: string): number {
    let n = 0;
    for (const r of [...this.requests.values()]) {
      if (r.state === 'PENDING' && (id === undefined || r.id === id)) {
        r.dueAt = this.now();
        void this.finish(r);
        n++;
      }
    }
    return n;
  }

  pending(): number {
    let n = 0;
    for (const r of this.requests.values()) if (r.state === 'PENDING') n++;
    return n;
  }

  clear(): void {
    this.close();
    this.requests.clear();
  }

  /** Cancels the jobs of pending requests (they stay PENDING; `complete` still completes them); ends the waits. */
  close(): void {
    for (const job of this.jobs.values()) this.scheduler.cancel(job);
    this.jobs.clear();
    this.tell([...this.waiters.keys()], false);
  }

  private tell(ids: string[], done: boolean): void {
    for (const id of ids) for (const waiter of [...(this.waiters.get(id) ?? [])]) waiter(done);
  }

  /** DONE with its dataset; the callback's delivery is what the job returns. */
  private finish(r: AsyncRequest): Promise<unknown> {
    const job = this.jobs.get(r.id);
    if (job !== undefined) this.scheduler.cancel(job);
    this.jobs.delete(r.id);
    if (r.state === 'DONE') return Promise.resolve();
    r.state = 'DONE';
    r.result = r.dataset();
    this.tell([r.id], true);
    if (!r.callback) return Promise.resolve();
    const payload: Record<string, unknown> = { data: r.result };
    if (r.callback.custom !== undefined) payload.custom = r.callback.custom;
    return deliverCallback(r.callback, payload);
  }
}
