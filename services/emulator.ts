/**
 * `npm run emulator`: the emulator of the REST suite alone, so that the layer can be restarted while
 * the upstream it talks to keeps its state. Listens on `EMULATOR_PORT` (default 4010) and
 * `EMULATOR_HOST` (default 127.0.0.1); prints its URL; `/healthz` and `/readyz`; on SIGINT/SIGTERM
 * drains (`/readyz` 503, requests in flight answered) within `SHUTDOWN_TIMEOUT_MS` and exits.
 * Subgraphs reach it with `OPENAPI_ENV=emulator OPENAPI_EMULATOR_URL=<that URL>`.
 */
import { startEmulator } from '../emulator/server.ts';
import { redactConsole } from '../platform/redact.ts';
import { emulatorOptionsFromEnv } from './build.ts';
import { runService } from './run.ts';
import { loadSettings } from '../platform/settings.ts';

await runService('emulator', async () => {
  // Parsed once, first: a bad value stops the start with one line naming it.
  const settings = loadSettings();
  redactConsole();
  const emulator = await startEmulator(emulatorOptionsFromEnv(settings));
  return {
    shutdownTimeoutMs: settings.SHUTDOWN_TIMEOUT_MS,
    close: async () => {
      const timeoutMs = settings.SHUTDOWN_TIMEOUT_MS;
      const drained = await emulator.shutdown(timeoutMs);
      if (!drained.clean) console.warn(`[emulator] drain cut short after ${timeoutMs} ms (SHUTDOWN_TIMEOUT_MS): ${drained.requests} requests left`);
      return drained;
    },
    banner: [
      `emulator listening on ${emulator.url}`,
      `  areas under ${emulator.url}/<area>, control API ${emulator.url}/_emulator/calls`,
      `  subgraphs reach it with OPENAPI_ENV=emulator OPENAPI_EMULATOR_URL=${emulator.url}`,
    ],
  };
});
