/**
 * Child processes a test starts (the layer as `npm start` runs it): stopped as the service manager
 * would, SIGTERM first, SIGKILL if it has not exited by the deadline.
 */
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { within } from './wait.ts';

/** Stops `proc` (SIGTERM, then SIGKILL after `deadline` ms); resolves once it has exited. */
export async function stopProcess(proc: ChildProcess | null | undefined, deadline = 10_000): Promise<void> {
  if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
  const exited = once(proc, 'exit');
  proc.kill('SIGTERM');
  try {
    await within(exited, 'the process to exit on SIGTERM', deadline);
  } catch {
    proc.kill('SIGKILL');
    await exited;
  }
}
