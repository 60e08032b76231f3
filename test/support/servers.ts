/**
 * Servers and stores that stop themselves: `track()` returns a registry; everything given to it is
 * closed after each test (or after the file, with `track('all')`), last started first, so a failing
 * assertion never leaves a port open or a timer running.
 *
 *   const started = track();
 *   const emu = started(await startEmulator());
 */
import { afterAll, afterEach } from 'vitest';

/** Anything with a `close()` (servers, stacks, stubs, receivers, stores). */
export interface Closable {
  close(): unknown;
}

export interface Tracker {
  /** Registers `thing` to be closed after the test (or file); returns it. */
  <T extends Closable>(thing: T): T;
  /** Closes everything registered so far, last registered first (the hook does it too). */
  closeAll(): Promise<void>;
}

/** A registry closed by `afterEach` (`'each'`, the default) or `afterAll` (`'all'`). */
export function track(when: 'each' | 'all' = 'each'): Tracker {
  const open: Closable[] = [];
  const closeAll = async (): Promise<void> => {
    const errors: unknown[] = [];
    while (open.length > 0) {
      try {
        await open.pop()?.close();
      } catch (err) {
        errors.push(err);
      }
    }
    if (errors.length > 0) throw errors[0];
  };
  (when === 'each' ? afterEach : afterAll)(closeAll);
  const tracker = <T extends Closable>(thing: T): T => {
    open.push(thing);
    return thing;
  };
  return Object.assign(tracker, { closeAll });
}
