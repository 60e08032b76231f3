/**
 * Waits with deadlines: the test kit's one way to wait for something that happens later.
 *
 * - `waitFor(probe, what)`: probes an observable condition (a call in the emulator's log, a row in
 *   a store, a metric) until it holds, and fails after `deadline` ms with `what` in the message.
 * - `waitForEvent(emitter, event, what)`: the next `event` (that `filter` accepts), or the same failure.
 * - `signal<T>()`: a latch a stub or hook sets (`fire(value)`) and a test awaits (`wait(what)`).
 *
 * None of them is a sleep: each ends as soon as its condition holds, and a deadline is a safety
 * limit that fails the test with a clear message instead of letting it hang.
 */
import type { EventEmitter } from 'node:events';

/** How long a wait may take before the test fails. @default 10_000 */
export const DEFAULT_DEADLINE_MS = 10_000;

export interface WaitOptions {
  /** Milliseconds before the wait fails. @default DEFAULT_DEADLINE_MS */
  deadline?: number;
  /** Milliseconds between two probes. @default 10 */
  every?: number;
}

/** A value a probe may answer: anything but `undefined`, `null` and `false` ends the wait. */
type Probed<T> = T | undefined | null | false;

const tick = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * `probe`'s first answer that is not `undefined`, `null` or `false`, probed every `every` ms until
 * `deadline`; then fails with `timed out waiting for <what>`. The condition is what the test
 * observes (emulator call log, store, metrics), so the wait lasts exactly as long as it must.
 */
export async function waitFor<T>(probe: () => Probed<T> | Promise<Probed<T>>, what: string, opts: WaitOptions = {}): Promise<T> {
  const deadline = opts.deadline ?? DEFAULT_DEADLINE_MS;
  const every = opts.every ?? 10;
  const until = Date.now() + deadline;
  let last: unknown;
  for (;;) {
    try {
      const v = await probe();
      if (v !== undefined && v !== null && v !== false) return v;
      last = v;
    } catch (err) {
      last = err;
    }
    if (Date.now() >= until) {
      const why = last instanceof Error ? ` (last probe threw: ${last.message})` : '';
      throw new Error(`timed out waiting for ${what} after ${deadline} ms${why}`);
    }
    await tick(every);
  }
}

/**
 * The arguments of `emitter`'s next `event` that `filter` accepts (the first argument when there is
 * one), or a failure naming `what` after `deadline` ms.
 */
export function waitForEvent<T = unknown>(emitter: EventEmitter, event: string, what: string, opts: { deadline?: number; filter?: (value: T) => boolean } = {}): Promise<T> {
  const deadline = opts.deadline ?? DEFAULT_DEADLINE_MS;
  return new Promise<T>((resolve, reject) => {
    const onEvent = (value: T): void => {
      if (opts.filter && !opts.filter(value)) return;
      clearTimeout(timer);
      emitter.off(event, onEvent);
      resolve(value);
    };
    const timer = setTimeout(() => {
      emitter.off(event, onEvent);
      reject(new Error(`timed out waiting for ${what} (event '${event}') after ${deadline} ms`));
    }, deadline);
    emitter.on(event, onEvent);
  });
}

/** `p`, or a failure naming `what` once `deadline` ms have passed. */
export async function within<T>(p: Promise<T>, what: string, deadline = DEFAULT_DEADLINE_MS): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out waiting for ${what} after ${deadline} ms`)), deadline);
  });
  try {
    return await Promise.race([p, limit]);
  } finally {
    clearTimeout(timer);
  }
}

export interface Signal<T> {
  /** Sets the signal (the first value wins). */
  fire(value: T): void;
  readonly fired: boolean;
  /** The value once fired, or a failure naming `what` after `deadline` ms. */
  wait(what: string, deadline?: number): Promise<T>;
}

/** A one-shot latch: a stub's handler or a hook fires it, the test waits on it. */
export function signal<T = void>(): Signal<T> {
  let resolve!: (v: T) => void;
  const p = new Promise<T>((r) => (resolve = r));
  let fired = false;
  return {
    fire(value: T) {
      if (fired) return;
      fired = true;
      resolve(value);
    },
    get fired() {
      return fired;
    },
    wait: (what, deadline) => within(p, what, deadline),
  };
}

/**
 * Lets already-queued I/O callbacks and microtasks run once (one turn of the event loop, via
 * `setImmediate`): for asserting that something did *not* happen as a direct result of an action,
 * without waiting on the wall clock.
 */
export const nextTurn = (): Promise<void> => new Promise((r) => setImmediate(r));
