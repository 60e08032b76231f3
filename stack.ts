/**
 * Starts the whole layer in one process: the embedded emulator (unless `OPENAPI_ENV` names a real
 * environment), the subgraphs, and the gateway. `npm start` and the end-to-end tests both use it.
 * Each part is built as the separate services build it (`services/build.ts`).
 */
import { startEmulator, type EmulatorOptions } from './emulator/server.ts';
import { startGateway, type RunningGateway } from './gateway/index.ts';
import type { RunningSubgraphs } from './subgraphs/runtime/server.ts';
import type { UpstreamClient } from './subgraphs/upstream/client.ts';
import type { UpstreamConfig } from './subgraphs/upstream/config.ts';
import { embeddedEmulatorOptionsFromEnv, gatewayOptionsFromEnv, pricesFromEnv, startSubgraphsFromEnv, wantsEmulator } from './services/build.ts';
import { log } from './platform/log.ts';
import { DEFAULT_SHUTDOWN_TIMEOUT_MS } from './platform/health.ts';
import { settingsOf, type SettingsSource } from './platform/settings.ts';

export interface StackOptions {
  /** The settings (`platform/settings.ts`: parsed, or variables to parse now). @default the process's environment */
  env?: SettingsSource;
  /** Gateway port (0 = any free port). @default PORT or 4000 */
  port?: number;
  host?: string;
  /** Clock of the layer's caches (tests move time forward with it). @default Date.now */
  clock?: () => number;
  /** Emulator options when it runs embedded (over its settings: `EMULATOR_PORT`, …). */
  emulator?: EmulatorOptions;
  /**
   * Defaults of the embedded emulator under its settings (`main.ts` gives `npm start`'s risk
   * timing, `START_RISK_COMPLETE_AFTER_MS`). @default the emulator's
   */
  emulatorDefaults?: EmulatorOptions;
  /**
   * An emulator running elsewhere (its origin) instead of the embedded one, with `OPENAPI_ENV=emulator`
   * (the benches keep its CPU out of the layer's). @default `OPENAPI_EMULATOR_URL`, else the embedded emulator
   */
  emulatorUrl?: string;
  /**
   * The gateway calls the subgraphs in process (`gateway/in-process.ts`); false sends queries over
   * loopback HTTP as separate services do (benches compare the two). @default true
   */
  inProcess?: boolean;
  /**
   * Queries one in-process subgraph answers whole skip the runtime's planning and delegation
   * (`gateway/in-process.ts`, `useDirectQueries`); false keeps every query on the planned path
   * (tests comparing both). @default true
   */
  directQueries?: boolean;
}

export interface Stack {
  gateway: RunningGateway;
  subgraphs: RunningSubgraphs;
  upstream: UpstreamClient;
  config: UpstreamConfig;
  /** The emulator's URL, when one is used (embedded, or given as `emulatorUrl`). */
  emulatorUrl: string | null;
  /** Stops at once (open sockets cut). */
  close(): Promise<void>;
  /**
   * Graceful stop (`npm start` on SIGTERM): the gateway drains (`/readyz` 503, requests in flight
   * answered, subscriptions closed with 1001 so that clients reconnect), then the subgraphs and the
   * layer's own work, within `timeoutMs` in all; then the emulator stops. `clean` false when the
   * time ran out (the drain logged what was left). @default timeoutMs DEFAULT_SHUTDOWN_TIMEOUT_MS
   */
  shutdown(timeoutMs?: number): Promise<{ clean: boolean }>;
}

export async function startStack(opts: StackOptions = {}): Promise<Stack> {
  // Parsed once, here (a bad value is refused before anything starts), then handed to every part.
  const env = settingsOf(opts.env);
  // One price table for the emulator's wallet and the layer's meter, from this env (per process).
  pricesFromEnv(env);
  // An emulator running apart (`npm run emulator`): `emulatorUrl`, else `OPENAPI_EMULATOR_URL`.
  const external = opts.emulatorUrl ?? env.OPENAPI_EMULATOR_URL ?? undefined;
  // The embedded emulator: any free port unless EMULATOR_PORT pins it (`embeddedEmulatorOptionsFromEnv`).
  const emulator = wantsEmulator(env) && !external ? await startEmulator({ ...opts.emulatorDefaults, ...embeddedEmulatorOptionsFromEnv(env), ...opts.emulator }) : null;
  const closers: Array<() => Promise<void>> = [];
  try {
    if (emulator) closers.push(() => emulator.close());
    // Callback and download URLs: PUBLIC_URL, else the gateway's own URL once it listens.
    let gatewayUrl = '';
    const layer = await startSubgraphsFromEnv({ env, emulatorUrl: emulator?.url ?? external, port: 0, host: '127.0.0.1', gatewayUrl: () => gatewayUrl, clock: opts.clock });
    closers.push(() => layer.close());
    // Queries and mutations reach the subgraphs in process (no loopback HTTP); subscriptions keep graphql-ws.
    const inProcess = opts.inProcess === false ? {} : Object.fromEntries(Object.keys(layer.graphqlUrls).map((name) => [name, layer.subgraphs.fetch(name)]));
    const inProcessExecutors = opts.inProcess === false ? {} : Object.fromEntries(Object.keys(layer.graphqlUrls).map((name) => [name, layer.subgraphs.execute(name)]));
    const gateway = await startGateway({
      ...gatewayOptionsFromEnv(env, layer.graphqlUrls, { port: opts.port, host: opts.host, clock: opts.clock }),
      inProcess,
      inProcessExecutors,
      directSubgraphs: opts.inProcess === false || opts.directQueries === false ? [] : [...layer.subgraphs.schemas].map(([name, schema]) => ({ name, schema })),
    });
    gatewayUrl = gateway.url;
    closers.push(() => gateway.close());
    return {
      gateway,
      subgraphs: layer.subgraphs,
      upstream: layer.upstream,
      config: layer.config,
      emulatorUrl: emulator?.url ?? external ?? null,
      async close() {
        for (const c of closers.reverse()) await c().catch((err: unknown) => log.error({ err }, '[stack] close failed'));
      },
      async shutdown(timeoutMs = DEFAULT_SHUTDOWN_TIMEOUT_MS) {
        const end = Date.now() + timeoutMs;
        // Gateway first: its requests in flight still need the subgraphs behind it.
        const front = await gateway.shutdown(timeoutMs);
        const back = await layer.shutdown(Math.max(0, end - Date.now()));
        await emulator?.close();
        return { clean: front.clean && back.clean };
      },
    };
  } catch (err) {
    for (const c of closers.reverse()) await c().catch(() => undefined);
    throw err;
  }
}
