/**
 * Deterministic pseudo-randomness: every generated value derives from a string seed (usually the
 * VAT number plus a purpose), so the same company looks the same on every call and every run.
 */

/** 32-bit FNV-1a of the string, finished with a murmur-style avalanche. */
export function hash32(seed: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < seed.length; i++) h = Math.imul(h ^ seed.charCodeAt(i), 0x01000193);
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** An integer in [0, mod) derived from the seed. */
export const hashMod = (seed: string, mod: number): number => hash32(seed) % mod;

/** A small seeded generator (splitmix-style); independent streams come from different seeds. */
export class Rng {
  private state: number;

  constructor(seed: string) {
    this.state = hash32(seed) || 0x9e3779b9;
  }

  /** A float in [0, 1). */
  next(): number {
    this.state = (this.state + 0x9e3779b9) >>> 0;
    let z = this.state;
    z = Math.imul(z ^ (z >>> 16), 0x21f0aaad);
    z = Math.imul(z ^ (z >>> 15), 0x735a2d97);
    z ^= z >>> 15;
    return (z >>> 0) / 4294967296;
  }

  /** An integer in [min, max] (both included). */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  /** A float in [min, max) rounded to `decimals`. */
  float(min: number, max: number, decimals = 2): number {
    const f = 10 ** decimals;
    return Math.round((min + this.next() * (max - min)) * f) / f;
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error('pick from an empty list');
    return items[Math.floor(this.next() * items.length)];
  }

  /** Picks by weight: `[[value, weight], …]`. */
  weighted<T>(entries: ReadonlyArray<readonly [T, number]>): T {
    const total = entries.reduce((s, [, w]) => s + w, 0);
    let r = this.next() * total;
    for (const [v, w] of entries) {
      r -= w;
      if (r < 0) return v;
    }
    return entries[entries.length - 1][0];
  }

  /** `count` distinct items (or all of them when there are fewer). */
  sample<T>(items: readonly T[], count: number): T[] {
    const pool = items.slice();
    const out: T[] = [];
    while (out.length < count && pool.length > 0) out.push(pool.splice(Math.floor(this.next() * pool.length), 1)[0]);
    return out;
  }
}

/** `YYYY-MM-DD` of a UTC date. */
export const isoDay = (d: Date): string => d.toISOString().slice(0, 10);

/** A random day between two years (inclusive), as `YYYY-MM-DD`. */
export function dayBetween(rng: Rng, fromYear: number, toYear: number): string {
  const from = Date.UTC(fromYear, 0, 1);
  const to = Date.UTC(toYear, 11, 31);
  return isoDay(new Date(from + Math.floor(rng.next() * ((to - from) / 86_400_000)) * 86_400_000));
}

/** Unix seconds of a `YYYY-MM-DD` day at midnight UTC. */
export const dayToSeconds = (day: string): number => Math.floor(Date.parse(`${day}T00:00:00Z`) / 1000);
