/**
 * The bound of the layer's in-memory LRU maps, without preallocation. lru-cache's `max` allocates
 * its arrays for `max` entries up front: a 100,000-entry map holds about 4 MB before its first
 * entry, and the layer has a score of them (stores, ledgers, pollers, grants): some 150 MB of an
 * idle process. `maxSize` with every entry of size 1 bounds the count the same way, and the arrays
 * grow with use.
 */
export const entriesAtMost = (n: number): { maxSize: number; sizeCalculation: () => number } => ({ maxSize: Math.max(1, Math.floor(n)), sizeCalculation: () => 1 });
