/**
 * Starts the whole layer in one process: the embedded emulator (unless `OPENAPI_ENV` names a real
 * environment), the subgraphs, and the gateway. `npm start` and the end-to-end tests both use it.
 */
import { startEmulator, DEFAULT_TOKEN } from './emulator/server.ts';
import { startGateway, type RunningGateway } from './gateway/index.ts';
import { subgraphRoute } from './gateway/proxy.ts';
import { createSubgraphs } from './subgraphs/index.ts';
import { startSubgraphServer, type RunningSubgraphs } from './subgraphs/runtime/server.ts';
import { UpstreamClient } from './subgraphs/upstream/client.ts';
import { loadUpstreamConfig, type UpstreamConfig } from './subgraphs/upstream/config.ts';

export interface StackOptions {
  /** Environment variables to read configuration from. @default process.env */
  env?: NodeJS.ProcessEnv;
  /** Gateway port (0 = any free port). @default PORT or 4000 */
  port?: number;
  host?: string;
  /** Emulator options when it runs embedded. */
  emulator?: Parameters<typeof startEmulator>[0];
}

export interface Stack {
  gateway: RunningGateway;
  subgraphs: RunningSubgraphs;
  upstream: UpstreamClient;
  config: UpstreamConfig;
  /** The embedded emulator's URL, when it runs. */
  emulatorUrl: string | null;
  close(): Promise<void>;
}

export async function startStack(opts: StackOptions = {}): Promise<Stack> {
  const env = opts.env ?? process.env;
  const wantsEmulator = (env.OPENAPI_ENV ?? 'emulator').trim().toLowerCase() === 'emulator';
  const emulator = wantsEmulator ? await startEmulator({ port: 0, ...opts.emulator }) : null;
  const closers: Array<() => Promise<void>> = [];
  try {
    if (emulator) closers.push(() => emulator.close());
    const config = loadUpstreamConfig(env, emulator?.url);
    const upstream = new UpstreamClient(config);
    closers.push(() => upstream.close());
    let publicUrl = env.PUBLIC_URL?.replace(/\/+$/, '') ?? '';
    const list = createSubgraphs(env);
    const subgraphs = await startSubgraphServer({ subgraphs: list,
      upstream,
      // With the embedded emulator, callers without a token use its built-in account, so that
      // `npm start` works with no account at all.
      auth: { serviceToken: config.serviceToken, fallbackToken: emulator ? DEFAULT_TOKEN : null },
      host: '127.0.0.1', publicUrl: () => publicUrl });
    closers.push(() => subgraphs.close());
    const areaBases = Object.fromEntries(list.map((s) => [s.name, subgraphs.url]));
    const gateway = await startGateway({
      subgraphUrls: Object.fromEntries(list.map((s) => [s.name, subgraphs.graphqlUrl(s.name)])),
      subscriptionSubgraphs: list.map((s) => s.name),
      port: opts.port ?? Number(env.PORT ?? 4000),
      host: opts.host ?? env.HOST ?? '127.0.0.1',
      routes: [subgraphRoute('callbacks', areaBases), subgraphRoute('files', areaBases)],
    });
    if (!publicUrl) publicUrl = gateway.url;
    closers.push(() => gateway.close());
    return {
      gateway,
      subgraphs,
      upstream,
      config,
      emulatorUrl: emulator?.url ?? null,
      async close() {
        for (const c of closers.reverse()) await c().catch((err: unknown) => console.error('[stack] close failed', err));
      },
    };
  } catch (err) {
    for (const c of closers.reverse()) await c().catch(() => undefined);
    throw err;
  }
}
