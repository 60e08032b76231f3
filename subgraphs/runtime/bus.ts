/**
 * The event bus behind subscriptions: status changes are published to topics; subscribers get an
 * async iterator (what a GraphQL `subscribe` resolver returns). A subscription first yields the
 * latest known state (the topic's last event, and/or states the caller supplies from its store), then
 * live events, never going back in time for one identity, so a client that connects late or
 * reconnects misses nothing and never sees a stale state after a newer one.
 *
 * `EventBus` is the interface; `MemoryEventBus` serves one process. A multi-process deployment puts
 * a shared implementation (e.g. Redis pub/sub) behind the same interface.
 */

export interface SubscribeOptions<T> {
  /** Yield the topic's last published event first. @default true */
  replayLatest?: boolean;
  /** Known states to yield first (e.g. from a status store), after the replayed latest event. */
  initial?: () => T[] | Promise<T[]>;
  /** Live and initial events for which this is false are skipped. */
  filter?: (event: T) => boolean;
  /**
   * Identity of the thing an event is about (e.g. a request id), for ordering.
   * @default every event has the same identity
   */
  identity?: (event: T) => string;
  /**
   * Monotonic version of an event for its identity: an event whose version is not above the last
   * one yielded for its identity is skipped (duplicates, stale states). Without it nothing is skipped.
   */
  version?: (event: T) => number;
  /** The stream ends after yielding an event for which this is true (e.g. a final state). */
  until?: (event: T) => boolean;
  /** Live events kept while the consumer is slow; beyond it the oldest are dropped. @default 1000 */
  bufferSize?: number;
}

export interface EventBus<T> {
  publish(topic: string, event: T): void;
  /** The last event published to `topic`, if remembered. */
  latest(topic: string): T | undefined;
  subscribe(topic: string, opts?: SubscribeOptions<T>): AsyncIterableIterator<T>;
  /** Ends every open subscription. */
  close(): void;
}

export interface MemoryEventBusOptions {
  /** Topics whose last event is remembered (least recently published are forgotten first). @default 10000 */
  maxLatest?: number;
}

type Listener<T> = { push(event: T): void; end(): void };

export class MemoryEventBus<T> implements EventBus<T> {
  private readonly listeners = new Map<string, Set<Listener<T>>>();
  private readonly last = new Map<string, T>();
  private readonly maxLatest: number;

  constructor(opts: MemoryEventBusOptions = {}) {
    this.maxLatest = opts.maxLatest ?? 10_000;
  }

  publish(topic: string, event: T): void {
    this.last.delete(topic);
    this.last.set(topic, event);
    if (this.last.size > this.maxLatest) {
      const oldest = this.last.keys().next().value;
      if (oldest !== undefined) this.last.delete(oldest);
    }
    for (const l of [...(this.listeners.get(topic) ?? [])]) l.push(event);
  }

  latest(topic: string): T | undefined {
    return this.last.get(topic);
  }

  /** Open subscriptions on `topic` (for tests and metrics). */
  subscriberCount(topic: string): number {
    return this.listeners.get(topic)?.size ?? 0;
  }

  close(): void {
    for (const set of this.listeners.values()) for (const l of [...set]) l.end();
    this.listeners.clear();
  }

  subscribe(topic: string, opts: SubscribeOptions<T> = {}): AsyncIterableIterator<T> {
    const bufferSize = opts.bufferSize ?? 1000;
    const queue: T[] = [];
    const versions = new Map<string, number>();
    let waiting: ((r: IteratorResult<T>) => void) | null = null;
    let finished = false;
    let started: Promise<void> | null = null;

    const listener: Listener<T> = {
      push: (event) => {
        if (finished) return;
        queue.push(event);
        if (queue.length > bufferSize) queue.shift();
        wake();
      },
      end: () => {
        finish();
      },
    };
    // Attach before reading any initial state, so nothing published in between is lost.
    let set = this.listeners.get(topic);
    if (!set) {
      set = new Set();
      this.listeners.set(topic, set);
    }
    set.add(listener);

    const detach = (): void => {
      const s = this.listeners.get(topic);
      s?.delete(listener);
      if (s && s.size === 0) this.listeners.delete(topic);
    };
    function finish(): void {
      if (finished) return;
      finished = true;
      queue.length = 0;
      detach();
      const w = waiting;
      waiting = null;
      w?.({ value: undefined, done: true });
    }
    function wake(): void {
      if (!waiting) return;
      const next = take();
      if (next === undefined) return;
      const w = waiting;
      waiting = null;
      w(deliver(next));
    }
    /** The next event worth yielding, or undefined when the queue holds none. */
    function take(): T | undefined {
      while (queue.length > 0) {
        const e = queue.shift() as T;
        if (opts.filter && !opts.filter(e)) continue;
        if (opts.version) {
          const id = opts.identity ? opts.identity(e) : '';
          const v = opts.version(e);
          const seen = versions.get(id);
          if (seen !== undefined && v <= seen) continue;
          versions.set(id, v);
        }
        return e;
      }
      return undefined;
    }
    function deliver(event: T): IteratorResult<T> {
      if (opts.until?.(event)) {
        // Yield this one, then end: detach now so nothing else is queued.
        finished = true;
        queue.length = 0;
        detach();
      }
      return { value: event, done: false };
    }

    const replay = opts.replayLatest ?? true;
    const latest = (): T | undefined => (replay ? this.last.get(topic) : undefined);
    const start = async (): Promise<void> => {
      const first: T[] = [];
      const l = latest();
      if (l !== undefined) first.push(l);
      if (opts.initial) first.push(...(await opts.initial()));
      // Known states go before anything that arrived live meanwhile; versions drop duplicates.
      queue.unshift(...first);
    };

    const iterator: AsyncIterableIterator<T> = {
      [Symbol.asyncIterator]() {
        return iterator;
      },
      async next(): Promise<IteratorResult<T>> {
        if (!started) started = start();
        try {
          await started;
        } catch (err) {
          finish();
          throw err;
        }
        if (finished && queue.length === 0) return { value: undefined, done: true };
        const ready = take();
        if (ready !== undefined) return deliver(ready);
        if (finished) return { value: undefined, done: true };
        return new Promise<IteratorResult<T>>((resolve) => {
          waiting = resolve;
        });
      },
      async return(): Promise<IteratorResult<T>> {
        finish();
        return { value: undefined, done: true };
      },
      async throw(err?: unknown): Promise<IteratorResult<T>> {
        finish();
        throw err;
      },
    };
    return iterator;
  }
}
