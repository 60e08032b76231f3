/**
 * The life of a process of the layer (`npm start` and each separate service): start, print where it
 * listens, stop cleanly on SIGINT/SIGTERM (a second signal exits at once). A configuration mistake
 * (`ServiceConfigError`) is one line and exit code 1, not a stack trace.
 */
import { ServiceConfigError } from './build.ts';
import { DEFAULT_SHUTDOWN_TIMEOUT_MS } from '../platform/health.ts';
import { log } from '../platform/log.ts';
import { SettingsError } from '../platform/settings.ts';

export interface Running {
  /** Stops; a graceful drain says whether it finished in time (`clean`; the drain logged what was left). */
  close(): Promise<void | { clean: boolean }>;
  /** `SHUTDOWN_TIMEOUT_MS` of the process's settings: the drain's bound, past which a backstop exits. @default DEFAULT_SHUTDOWN_TIMEOUT_MS */
  shutdownTimeoutMs?: number;
}

/**
 * On SIGINT or SIGTERM: `close()`, then exit 0; 1 when closing failed or the drain was cut short by
 * `SHUTDOWN_TIMEOUT_MS`. A second signal exits 1 at once.
 */
export function stopOnSignals(running: Running): void {
  let stopping = false;
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    // The signals are handled here alone: Hive's runtime (@whatwg-node/server) disposes itself on
    // SIGINT/SIGTERM, which aborts the requests in flight (SHUTTING_DOWN) before any drain;
    // `running.close()` disposes it once drained instead.
    process.removeAllListeners(signal);
    process.on(signal, () => {
      if (stopping) {
        console.log(`\n${signal} again: exiting now`);
        process.exit(1);
      }
      stopping = true;
      console.log(`\n${signal}: shutting down`);
      // A backstop past the drain's own bound (SHUTDOWN_TIMEOUT_MS): a stuck close never keeps the process.
      setTimeout(
        () => {
          log.error(`${signal}: not stopped in time, exiting`);
          process.exit(1);
        },
        (running.shutdownTimeoutMs ?? DEFAULT_SHUTDOWN_TIMEOUT_MS) + 5_000,
      ).unref();
      running.close().then(
        (result) => process.exit(result && !result.clean ? 1 : 0),
        (err: unknown) => {
          log.error({ err }, 'closing failed');
          process.exit(1);
        },
      );
    });
  }
}

/**
 * Starts a service: `start` builds it and returns it with the lines to print; then it runs until
 * a signal. `name` prefixes error lines.
 */
export async function runService(name: string, start: () => Promise<Running & { banner: string[] }>): Promise<void> {
  let running: Running & { banner: string[] };
  try {
    running = await start();
  } catch (err) {
    // A bad setting: its one line, on stderr whatever the log level (the value of a secret is never in it).
    if (err instanceof SettingsError) process.stderr.write(`[${name}] ${err.message}\n`);
    else if (err instanceof ServiceConfigError) log.error(`[${name}] ${err.message}`);
    else log.error({ err }, `[${name}] failed to start:`);
    process.exit(1);
  }
  for (const line of running.banner) console.log(line);
  stopOnSignals(running);
}
