/**
 * The emulator's clock, driven over its control API (`/_emulator/clock`): stop it (`manual`), move
 * it (`advance`), let it run (`real`). Asynchronous upstream work (risk completions, slow company
 * datasets, callback requests) is a job on that clock, so a test moves time instead of sleeping.
 */
import { request } from 'undici';

export interface ClockState {
  mode: 'real' | 'manual';
  now: string;
  nowMs: number;
  pending: number;
  jobs: Array<{ id: number; at: string; label: string }>;
  /** Jobs run by the last `advance` (POST answers only). */
  ran?: number;
}

export interface EmulatorClock {
  state(): Promise<ClockState>;
  /** Stops the clock: nothing fires by itself any more. */
  manual(): Promise<ClockState>;
  /** Lets the clock run on from where it stands. */
  real(): Promise<ClockState>;
  /** Moves the clock `ms` forward, running (and awaiting the callbacks of) every job due on the way. */
  advance(ms: number): Promise<ClockState>;
}

/** The clock of the emulator at `emulatorUrl` (its origin, e.g. `http://127.0.0.1:54321`). */
export function emulatorClock(emulatorUrl: string): EmulatorClock {
  const call = async (body?: Record<string, unknown>): Promise<ClockState> => {
    const res = await request(`${emulatorUrl}/_emulator/clock`, {
      method: body ? 'POST' : 'GET',
      headers: body ? { 'content-type': 'application/json' } : {},
      body: body ? JSON.stringify(body) : undefined,
    });
    const text = await res.body.text();
    if (res.statusCode !== 200) throw new Error(`emulator clock: ${res.statusCode} ${text}`);
    return JSON.parse(text) as ClockState;
  };
  return {
    state: () => call(),
    manual: () => call({ mode: 'manual' }),
    real: () => call({ mode: 'real' }),
    advance: (ms) => call({ advanceMs: ms }),
  };
}
