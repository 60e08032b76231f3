/**
 * Asynchronous company requests: the POST + callback variant of IT-full/aml/marketing/stakeholders
 * and the slow GET that answers 302 → IT-check_id. A request stays PENDING until its due time on
 * the module's clock, then holds its dataset (and, when it has a callback, the dataset is POSTed to
 * it). The clock can be moved forward and requests completed at once through the control API.
 */
import { hexId } from '../core.ts';
import { deliverCallback, type VendorCallback } from '../callbacks.ts';

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
  private offsetMs = 0;
  private timer: NodeJS.Timeout | null = null;
  private closed = false;

  /** The module's clock (real time plus whatever `advance` added). */
  now(): number {
    return Date.now() + this.offsetMs;
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
    this.tick();
    return req;
  }

  /** The request, brought up to date with the clock. */
  get(id: string): AsyncRequest | undefined {
    this.tick();
    return this.requests.get(id.toLowerCase());
  }

  /** Moves the clock forward. */
  advance(ms: number): void {
    this.offsetMs += Math.max(0, ms);
    this.tick();
  }

  /** Completes one request (or all pending ones) now. Returns how many completed. */
  complete(id?: string): number {
    const now = this.now();
    let n = 0;
    for (const r of this.requests.values()) {
      if (r.state === 'PENDING' && (id === undefined || r.id === id)) {
        r.dueAt = now;
        n++;
      }
    }
    this.tick();
    return n;
  }

  pending(): number {
    let n = 0;
    for (const r of this.requests.values()) if (r.state === 'PENDING') n++;
    return n;
  }

  clear(): void {
    this.requests.clear();
  }

  close(): void {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private finish(r: AsyncRequest): void {
    r.state = 'DONE';
    r.result = r.dataset();
    if (r.callback) {
      const cb = r.callback;
      const payload: Record<string, unknown> = { data: r.result };
      if (cb.custom !== undefined) payload.custom = cb.custom;
      void deliverCallback(cb, payload);
    }
  }

  /** Completes what is due and schedules the next due request. */
  private tick(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const now = this.now();
    let next = Infinity;
    for (const r of this.requests.values()) {
      if (r.state !== 'PENDING') continue;
      if (r.dueAt <= now) this.finish(r);
      else next = Math.min(next, r.dueAt);
    }
    if (next !== Infinity && !this.closed) {
      this.timer = setTimeout(() => this.tick(), Math.max(1, next - now));
      this.timer.unref();
    }
  }
}
