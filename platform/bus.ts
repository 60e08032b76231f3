/**
 * The event bus behind subscriptions: status changes are published to topics; subscribers get an
 * async iterator (what a GraphQL `subscribe` resolver returns). A subscription first yields the
 * latest known state (the topic's last event, and/or states the caller supplies from its store), then
 * live events, never going back in time for one identity, so a client that connects late or
 * reconnects misses nothing and never sees a stale state after a newer one.
 *
 * `EventBus` is the interface; `MemoryEventBus` serves one process; `RedisEventBus`
 * (`tracking/redis-bus.ts`) any number, on Redis pub/sub with the latest event per topic in Redis.
 * Both share the subscription logic here (`subscribeWith`).
 */
import { LRUCache } from 'lru-cache';
import { entriesAtMost } from './lru.ts';

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
  /** Resolves once the event is remembered as the topic's latest and sent to every subscriber's process. */
  publish(topic: string, event: T): Promise<void>;
  /** The last event published to `topic`, if remembered. */
  latest(topic: string): Promise<T | undefined>;
  subscribe(topic: string, opts?: SubscribeOptions<T>): AsyncIterableIterator<T>;
  /** Ends every open subscription (and, for shared buses, releases connections). */
  close(): void | Promise<void>;
}

export interface MemoryEventBusOptions {
  /** Topics whose last event is remembered (least recently published are forgotten first). @default 10000 */
  maxLatest?: number;
}

type Listener<T> = { push(event: T): void; end(): void };

/**
 * The subscribers of one process, by topic: what every bus implementation shares. `deliver` hands
 * an event to this process's subscribers of a topic; `subscribe` attaches one (reading the topic's
 * latest event through `latestOf` once attached, so nothing published in between is lost).
 */
export class LocalTopics<T> {
  private readonly listeners = new Map<string, Set<Listener<T>>>();

  /**
   * @param latestOf the topic's latest event (read once a subscriber is attached)
   * @param attached resolves once events of the topic reach this process (a shared bus's SUBSCRIBE), awaited before `latestOf`
   */
  constructor(
    private readonly latestOf: (topic: string) => Promise<T | undefined>,
    private readonly attached: (topic: string) => Promise<void> = async () => undefined,
  ) {}

  deliver(topic: string, event: T): void {
    for (const l of [...(this.listeners.get(topic) ?? [])]) l.push(event);
  }

  /** Open subscriptions on `topic`. */
  count(topic: string): number {
    return this.listeners.get(topic)?.size ?? 0;
  }

  /** Topics with at least one subscriber. */
  topics(): string[] {
    return [...this.listeners.keys()];
  }

  close(): void {
    for (const set of this.listeners.values()) for (const l of [...set]) l.end();
    this.listeners.clear();
  }

  /** Called when a topic gets its first subscriber or loses its last (shared buses (un)subscribe upstream). */
  onTopic: ((topic: string, active: boolean) => void) | null = null;

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
      this.onTopic?.(topic, true);
    }
    set.add(listener);

    const detach = (): void => {
      const s = this.listeners.get(topic);
      if (!s?.delete(listener)) return;
      if (s.size === 0) {
        this.listeners.delete(topic);
        this.onTopic?.(topic, false);
      }
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
    const start = async (): Promise<void> => {
      const first: T[] = [];
      await this.attached(topic);
      const l = replay ? await this.latestOf(topic) : undefined;
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

/** One process's event bus: subscribers here, the latest event per topic in a bounded LRU. */
export class MemoryEventBus<T> implements EventBus<T> {
  private readonly last: LRUCache<string, { event: T }>;
  private readonly local: LocalTopics<T>;

  constructor(opts: MemoryEventBusOptions = {}) {
    this.last = new LRUCache({ ...entriesAtMost(opts.maxLatest ?? 10_000) });
    this.local = new LocalTopics<T>(async (topic) => this.last.get(topic)?.event);
  }

  async publish(topic: string, event: T): Promise<void> {
    this.last.set(topic, { event });
    this.local.deliver(topic, event);
  }

  async latest(topic: string): Promise<T | undefined> {
    return this.last.get(topic)?.event;
  }

  /** Open subscriptions on `topic` (for tests and metrics). */
  subscriberCount(topic: string): number {
    return this.local.count(topic);
  }

  close(): void {
    this.local.close();
  }

  subscribe(topic: string, opts: SubscribeOptions<T> = {}): AsyncIterableIterator<T> {
    return this.local.subscribe(topic, opts);
  }
}
