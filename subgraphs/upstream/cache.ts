/**
 * The upstream answer cache (per tenant: the tenant is part of every key), in-flight
 * de-duplication, and the slow datasets still pending upstream. Each shared store is an async
 * interface with an in-memory implementation here (one process, the default) and a Redis one in
 * `redis-cache.ts` (every replica), tested by one spec (`test/upstream/e2e/stores.test.ts`).
 *
 * An entry is fresh for its TTL; after that it is kept, stale, for a further `staleSeconds`: a read
 * never uses it, but when the upstream fails the client may answer from it and say so.
 */
import { LRUCache } from 'lru-cache';
import { entriesAtMost } from '../../platform/lru.ts';

export interface CacheEntry {
  value: unknown;
  /** Whether the entry is within its TTL. */
  fresh: boolean;
  /** Milliseconds since the entry stopped being fresh (0 while fresh). */
  staleForMs: number;
}

export interface CacheStore {
  /** The entry under `key`, fresh or stale; undefined when there is none (or it is past its staleness). */
  get(key: string): Promise<CacheEntry | undefined>;
  /** Stores `value`, fresh for `ttlSeconds` and then kept stale for `staleSeconds`. */
  set(key: string, value: unknown, ttlSeconds: number, staleSeconds?: number): Promise<void>;
  /** Drops the entry under `key` (fresh or stale); nothing when there is none. */
  delete(key: string): Promise<void>;
  clear(): Promise<void>;
}

interface Stored {
  value: unknown;
  freshUntil: number;
  keepUntil: number;
}

/** In-memory store: bounded (least recently used evicted first), with expiry on an injectable clock. */
export class MemoryCacheStore implements CacheStore {
  private readonly entries: LRUCache<string, Stored>;

  constructor(
    maxEntries = 10_000,
    private readonly now: () => number = Date.now,
  ) {
    this.entries = new LRUCache({ ...entriesAtMost(maxEntries) });
  }

  async get(key: string): Promise<CacheEntry | undefined> {
    const e = this.entries.get(key);
    if (!e) return undefined;
    const now = this.now();
    if (e.keepUntil <= now) {
      this.entries.delete(key);
      return undefined;
    }
    return { value: e.value, fresh: e.freshUntil > now, staleForMs: Math.max(0, now - e.freshUntil) };
  }

  async set(key: string, value: unknown, ttlSeconds: number, staleSeconds = 0): Promise<void> {
    if (ttlSeconds <= 0) return;
    const freshUntil = this.now() + ttlSeconds * 1000;
    this.entries.set(key, { value, freshUntil, keepUntil: freshUntil + Math.max(0, staleSeconds) * 1000 });
  }

  async delete(key: string): Promise<void> {
    this.entries.delete(key);
  }

  async clear(): Promise<void> {
    this.entries.clear();
  }
}

/** Joins identical concurrent work: the second caller of `run(key)` gets the first one's promise. */
export class InFlight {
  private readonly running = new Map<string, Promise<unknown>>();

  /** `joined` tells the caller whether it shared someone else's call. */
  run<T>(key: string, work: () => Promise<T>): { promise: Promise<T>; joined: boolean } {
    const existing = this.running.get(key);
    if (existing) return { promise: existing as Promise<T>, joined: true };
    const promise = work().finally(() => this.running.delete(key));
    this.running.set(key, promise);
    return { promise, joined: false };
  }
}

/** The lead of one piece of identical work across replicas (see `InFlightMarkers`). */
export interface InFlightLease {
  /** Keeps the lead for another lease period from now; false when it was lost (expired, taken over). */
  extend(): Promise<boolean>;
  /** Ends the lead (only this lease's: a lease that has expired and been taken over is left alone). */
  release(): Promise<void>;
}

/**
 * Markers of identical work in flight across replicas: the first to `acquire` a key leads (buys
 * the answer and writes it to the cache, then releases); the others `wait` until the marker is gone
 * (released, or expired when its leader died) and then read the cache or try to lead themselves.
 * In-process joining stays `InFlight`'s (one promise per key per process); markers only decide
 * between processes (or between clients sharing one memory store).
 */
export interface InFlightMarkers {
  /** The lead of `key` for at most `leaseMs`, or null when someone else holds it. */
  acquire(key: string, leaseMs: number): Promise<InFlightLease | null>;
  /**
   * Resolves when `key` has no marker (released or expired), or after `timeoutMs`, whichever comes
   * first; rejects when `signal` aborts.
   */
  wait(key: string, timeoutMs: number, signal?: AbortSignal): Promise<void>;
}

/** Markers shared by the clients of one process (the default; `RedisInFlightMarkers` across replicas). */
export class MemoryInFlightMarkers implements InFlightMarkers {
  private readonly held = new Map<string, { token: symbol; expires: number; timer: NodeJS.Timeout }>();
  private readonly waiters = new Map<string, Set<() => void>>();

  async acquire(key: string, leaseMs: number): Promise<InFlightLease | null> {
    const current = this.held.get(key);
    if (current && current.expires > Date.now()) return null;
    if (current) this.drop(key, current.token);
    const token = Symbol(key);
    this.hold(key, token, leaseMs);
    return {
      extend: async () => {
        if (this.held.get(key)?.token !== token) return false;
        this.hold(key, token, leaseMs);
        return true;
      },
      release: async () => this.drop(key, token),
    };
  }

  private hold(key: string, token: symbol, leaseMs: number): void {
    const current = this.held.get(key);
    if (current) clearTimeout(current.timer);
    // Expiry wakes the waiters like a release would (a leader that never releases).
    const timer = setTimeout(() => this.drop(key, token), Math.max(1, leaseMs));
    timer.unref();
    this.held.set(key, { token, expires: Date.now() + leaseMs, timer });
  }

  private drop(key: string, token: symbol): void {
    const current = this.held.get(key);
    if (!current || current.token !== token) return;
    clearTimeout(current.timer);
    this.held.delete(key);
    const waiting = this.waiters.get(key);
    this.waiters.delete(key);
    for (const wake of waiting ?? []) wake();
  }

  wait(key: string, timeoutMs: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason as Error);
      const current = this.held.get(key);
      if (!current || current.expires <= Date.now()) return resolve();
      let set = this.waiters.get(key);
      if (!set) this.waiters.set(key, (set = new Set()));
      const done = (): void => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', abort);
        this.waiters.get(key)?.delete(done);
        resolve();
      };
      const abort = (): void => {
        clearTimeout(timer);
        this.waiters.get(key)?.delete(done);
        reject(signal?.reason as Error);
      };
      const timer = setTimeout(done, Math.max(0, timeoutMs));
      set.add(done);
      signal?.addEventListener('abort', abort, { once: true });
    });
  }
}

/** A slow dataset paid for and still being prepared upstream: its `IT-check_id` request id. */
export interface PendingDataset {
  id: string;
}

/**
 * Slow datasets paid for and still pending upstream, by cache key (so per tenant): a later call,
 * on any replica sharing the store, resumes polling the same id instead of buying it again.
 */
export interface PendingStore {
  get(key: string): Promise<PendingDataset | undefined>;
  /** Remembers `id` for `key` for `ttlMs` (replacing what was there). */
  set(key: string, id: string, ttlMs: number): Promise<void>;
  delete(key: string): Promise<void>;
  /** Deletes `key` only if it still holds `id` (atomic: a newer mark is never deleted); whether it did. */
  deleteIf(key: string, id: string): Promise<boolean>;
}

/** In-process pending datasets: bounded (least recently used first), each for its TTL. */
export class MemoryPendingStore implements PendingStore {
  private readonly entries: LRUCache<string, PendingDataset>;

  constructor(maxEntries = 10_000) {
    this.entries = new LRUCache({ ...entriesAtMost(maxEntries), ttl: 600_000 });
  }

  async get(key: string): Promise<PendingDataset | undefined> {
    return this.entries.get(key);
  }

  async set(key: string, id: string, ttlMs: number): Promise<void> {
    if (ttlMs <= 0) return void this.entries.delete(key);
    this.entries.set(key, { id }, { ttl: ttlMs });
  }

  async delete(key: string): Promise<void> {
    this.entries.delete(key);
  }

  async deleteIf(key: string, id: string): Promise<boolean> {
    if (this.entries.get(key)?.id !== id) return false;
    return this.entries.delete(key);
  }
}
