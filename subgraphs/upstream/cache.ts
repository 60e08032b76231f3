/**
 * The upstream answer cache (per tenant: the tenant is part of every key) and in-flight
 * de-duplication. The store is an interface so a shared implementation can replace the in-memory one.
 */

export interface CacheStore {
  get(key: string): Promise<unknown>;
  set(key: string, value: unknown, ttlSeconds: number): Promise<void>;
  clear(): Promise<void>;
}

/** In-memory store with expiry and a bound on entries (oldest inserted evicted first). */
export class MemoryCacheStore implements CacheStore {
  private readonly entries = new Map<string, { value: unknown; expires: number }>();
  constructor(private readonly maxEntries = 10_000) {}

  async get(key: string): Promise<unknown> {
    const e = this.entries.get(key);
    if (!e) return undefined;
    if (e.expires <= Date.now()) {
      this.entries.delete(key);
      return undefined;
    }
    return e.value;
  }

  async set(key: string, value: unknown, ttlSeconds: number): Promise<void> {
    if (ttlSeconds <= 0) return;
    this.entries.delete(key);
    this.entries.set(key, { value, expires: Date.now() + ttlSeconds * 1000 });
    while (this.entries.size > this.maxEntries) {
      const oldest = this.entries.keys().next().value;
      if (oldest === undefined) break;
      this.entries.delete(oldest);
    }
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
