/**
 * One way to build each part of the layer from an environment, shared by the one-process stack
 * (`stack.ts`, `npm start`) and the separate services (`services/emulator.ts`,
 * `services/subgraph.ts`, `services/gateway.ts`):
 *
 * - `emulatorOptionsFromEnv`: where the stand-alone emulator listens (`EMULATOR_PORT`, `EMULATOR_HOST`)
 *   and how long its risk requests take (`EMULATOR_RISK_COMPLETE_AFTER_MS`);
 *   `embeddedEmulatorOptionsFromEnv`: the same for the emulator `npm start` embeds;
 * - `startSubgraphsFromEnv`: the upstream client, the named subgraphs and their HTTP server, from
 *   `OPENAPI_*`, `PUBLIC_URL`, `LAYER_SECRET`, `REDIS_URL` and the emulator's URL;
 * - `subgraphUrlsFromEnv` + `gatewayOptionsFromEnv`: the gateway over subgraphs at those URLs, with the
 *   `/callbacks/<area>` and `/files/<area>` routes toward the subgraph owning each area, the cost
 *   options, CORS origins, log level and secrets.
 */
import { readFileSync } from 'node:fs';
import { configurePrices } from '../contract/prices.ts';
import type { EmulatorOptions } from '../emulator/server.ts';
import type { GatewayOptions } from '../gateway/index.ts';
import type { PersistedOperationsOptions } from '../gateway/persisted.ts';
import { SUPERGRAPH_FILE } from '../gateway/supergraph-file.ts';
import { subgraphRoute } from '../gateway/proxy.ts';
import { createSubgraphs, GATEWAY_AREAS, PRICING, SUBGRAPH_NAMES, tokenEndpoints, tokenHoldMs } from '../subgraphs/index.ts';
import { registerSecrets, secretsOfEnv } from '../platform/redact.ts';
import { logLevelSettingOfEnv, routeConsole } from '../platform/log.ts';
import { startSubgraphServer, subgraphRequestLimits, type RunningSubgraphs, type Subgraph } from '../subgraphs/runtime/server.ts';
import { jsonLimitsFromEnv, type JsonLimits } from '../platform/json-limits.ts';
import { UpstreamClient } from '../subgraphs/upstream/client.ts';
import { AREAS } from '../contract/areas.ts';
import { loadUpstreamConfig, type UpstreamConfig } from '../subgraphs/upstream/config.ts';
import { upstreamStores } from '../subgraphs/upstream/stores.ts';
import { ManagedServiceToken, graceMsFor, scopesFor } from '../subgraphs/upstream/service-token.ts';
import { workTokensOf } from '../subgraphs/upstream/work-tokens.ts';
import { redisPrefixFromEnv } from '../platform/redis.ts';
import { storeChoiceFromEnv } from '../platform/store-choice.ts';
import { settingsOf, type SettingName, type Settings, type SettingsSource } from '../platform/settings.ts';
import { DEFAULT_SHUTDOWN_TIMEOUT_MS, redisCheck, type DrainResult } from '../platform/health.ts';

/** A configuration mistake found before anything starts; its message says what to set. */
export class ServiceConfigError extends Error {
  override name = 'ServiceConfigError';
}

/** A TCP port setting (an integer 0–65535, 0 = any free port; `platform/settings.ts` checks it): `dflt` when unset. */
export function portFromEnv(env: SettingsSource, name: 'PORT' | 'SUBGRAPH_PORT' | 'EMULATOR_PORT', dflt: number): number {
  return settingsOf(env)[name] ?? dflt;
}

const hostFromEnv = (env: SettingsSource, name: 'HOST' | 'SUBGRAPH_HOST' | 'EMULATOR_HOST'): string => settingsOf(env)[name];

/** The bounds of a client's GraphQL request (`MAX_BODY_BYTES`, `MAX_UPLOAD_BYTES`, `MAX_JSON_DEPTH`, `MAX_JSON_VALUES`). */
export function requestLimitsFromEnv(env: SettingsSource): JsonLimits {
  return jsonLimitsFromEnv(env);
}

/**
 * The process's price table from `OPENAPI_PRICES` of `env` (`contract/prices.ts`: prices are per
 * process, shared by the cost meter, the estimate and the emulator's wallet).
 */
export function pricesFromEnv(env: SettingsSource): void {
  const settings = settingsOf(env);
  try {
    configurePrices(settings);
  } catch (err) {
    throw new ServiceConfigError((err as Error).message);
  }
}

/** An http(s) URL without trailing slashes, or a `ServiceConfigError` naming the variable. */
function httpUrl(name: string, value: string): string {
  const url = URL.canParse(value) ? new URL(value) : null;
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) throw new ServiceConfigError(`${name} must be an http(s) URL, got "${value}"`);
  return value.replace(/\/+$/, '');
}

// ---------------------------------------------------------------------------------------------
// Emulator

/**
 * How long the emulator's risk requests take (`EMULATOR_RISK_COMPLETE_AFTER_MS`), when set: from
 * the order to `COMPLETE` (0: only the control API's `risk/advance` completes them).
 */
const riskTimingFromEnv = (env: Settings): Pick<EmulatorOptions, 'riskCompleteAfterMs'> => {
  const ms = env.EMULATOR_RISK_COMPLETE_AFTER_MS;
  return ms === null ? {} : { riskCompleteAfterMs: ms };
};

/** The emulator's built-in credentials and token bound (`EMULATOR_TOKEN`, `EMULATOR_EMAIL`, `EMULATOR_APIKEY`, `EMULATOR_MAX_TOKENS`, `EMULATOR_COMPANY_*`). */
const emulatorIdentityOf = (env: Settings): Pick<EmulatorOptions, 'settings'> => ({
  settings: {
    token: env.EMULATOR_TOKEN,
    email: env.EMULATOR_EMAIL,
    apikey: env.EMULATOR_APIKEY,
    maxTokens: env.EMULATOR_MAX_TOKENS,
    companyPrepareMs: env.EMULATOR_COMPANY_PREPARE_MS,
    companyGetWaitMs: env.EMULATOR_COMPANY_GET_WAIT_MS,
  },
});

/**
 * The stand-alone emulator: `EMULATOR_PORT` (default 4010), `EMULATOR_HOST` (default 127.0.0.1) and
 * `EMULATOR_RISK_COMPLETE_AFTER_MS` (default 1500). Also sets the process's price table (its
 * wallet's) from `OPENAPI_PRICES`.
 */
export function emulatorOptionsFromEnv(source: SettingsSource): EmulatorOptions {
  const env = settingsOf(source);
  pricesFromEnv(env);
  return { port: portFromEnv(env, 'EMULATOR_PORT', 4010), host: hostFromEnv(env, 'EMULATOR_HOST'), ...riskTimingFromEnv(env), ...emulatorIdentityOf(env) };
}

/**
 * The emulator `npm start` embeds: the same settings as the stand-alone one, but any free port
 * unless `EMULATOR_PORT` pins it (`0` too means any), and the risk timing only when set (the
 * caller's default otherwise).
 */
export function embeddedEmulatorOptionsFromEnv(source: SettingsSource): EmulatorOptions {
  const env = settingsOf(source);
  return { port: portFromEnv(env, 'EMULATOR_PORT', 0), host: hostFromEnv(env, 'EMULATOR_HOST'), ...riskTimingFromEnv(env), ...emulatorIdentityOf(env) };
}

/**
 * `npm start`'s emulator when `EMULATOR_RISK_COMPLETE_AFTER_MS` is unset: a risk request completes
 * 30 s after its order, time for a person to copy its id into GraphiQL's WatchRequest tab and see
 * the status change (PROCESSING, then COMPLETE). Tests and `npm run emulator` keep 1500 ms.
 */
export const START_RISK_COMPLETE_AFTER_MS = 30_000;

/** True when `OPENAPI_ENV` (default `emulator`) names the emulator. */
export const wantsEmulator = (env: SettingsSource): boolean => settingsOf(env).OPENAPI_ENV === 'emulator';

// ---------------------------------------------------------------------------------------------
// Subgraphs

export interface SubgraphsFromEnvOptions {
  /** Where `OPENAPI_*`, `PUBLIC_URL`, `LAYER_SECRET`, `REDIS_URL` and the subgraphs' own settings are read (parsed at start, or variables). */
  env: SettingsSource;
  /** Subgraphs to serve, by name. @default every subgraph */
  names?: readonly string[];
  /**
   * The emulator's origin, for `OPENAPI_ENV=emulator` (areas without an `OPENAPI_<AREA>_URL`
   * override live under `<emulatorUrl>/<area>`). @default `OPENAPI_EMULATOR_URL`
   */
  emulatorUrl?: string | null;
  /**
   * Running as its own process: `LAYER_SECRET` and `PUBLIC_URL` are required (signatures must
   * verify in whichever process receives the callback or the download, and the gateway's URL cannot
   * be learnt from it), and so is the emulator's URL when `OPENAPI_ENV=emulator`. @default false
   */
  standalone?: boolean;
  /** @default `SUBGRAPH_PORT` or 4001 */
  port?: number;
  /** @default `SUBGRAPH_HOST` or 127.0.0.1 */
  host?: string;
  /**
   * The gateway's URL, for callback and download URLs when `PUBLIC_URL` is unset (in one process it
   * is known once the gateway listens). `PUBLIC_URL` wins when set.
   */
  gatewayUrl?: () => string;
  /** Clock of the upstream cache (tests move time forward with it). @default Date.now */
  clock?: () => number;
}

/** What `startSubgraphsFromEnv` reads from the environment, checked. */
export interface SubgraphsSettings {
  config: UpstreamConfig;
  names: string[];
  /** `REDIS_URL`: where shared stores live; null = the embedded database or memory (see `sqliteFile`). */
  redisUrl: string | null;
  /** The embedded database (`<DATA_DIR>/layer.db`, the default without `REDIS_URL`); null = Redis or memory (`STORE=memory`). */
  sqliteFile: string | null;
  /** `PUBLIC_URL`, without trailing slash; '' when unset. */
  publicUrl: string;
}

export interface RunningSubgraphsFromEnv extends SubgraphsSettings {
  subgraphs: RunningSubgraphs;
  upstream: UpstreamClient;
  /** The subgraphs served. */
  list: Subgraph[];
  /** GraphQL URL of each subgraph served, by name. */
  graphqlUrls: Record<string, string>;
  /** Stops the server, the subgraphs' own work (pollers) and the upstream client. */
  close(): Promise<void>;
  /** As `close`, after a graceful drain of the server bounded by `timeoutMs` (SIGTERM; see `RunningSubgraphs.shutdown`). */
  shutdown(timeoutMs?: number): Promise<DrainResult>;
}

/** Reads and checks the subgraphs' settings; throws `ServiceConfigError` with what to set. */
export function subgraphsSettingsFromEnv(opts: SubgraphsFromEnvOptions): SubgraphsSettings {
  const env = settingsOf(opts.env);
  const known: readonly string[] = SUBGRAPH_NAMES;
  const names = [...new Set(opts.names ?? known)];
  if (names.length === 0) throw new ServiceConfigError(`name at least one subgraph to serve (${known.join(', ')})`);
  const unknown = names.filter((n) => !known.includes(n));
  if (unknown.length > 0) throw new ServiceConfigError(`unknown subgraph ${unknown.map((n) => `"${n}"`).join(', ')}: the subgraphs are ${known.join(', ')}`);

  const rawPublic = env.PUBLIC_URL ?? '';
  const publicUrl = rawPublic ? httpUrl('PUBLIC_URL', rawPublic) : '';
  if (opts.standalone) {
    if (!env.LAYER_SECRET) {
      throw new ServiceConfigError(
        'LAYER_SECRET is required when a subgraph runs as its own service: callback and download URLs signed by one process must verify in every other (set the same value of at least 16 characters in every subgraph process)',
      );
    }
    if (!publicUrl)
      throw new ServiceConfigError(
        "PUBLIC_URL is required when a subgraph runs as its own service: the gateway's public URL, used in callback and download URLs (e.g. http://127.0.0.1:4000)",
      );
  }
  if (env.REDIS_URL && !env.LAYER_SECRET) {
    // Shared state is signed and sealed with the secret: a random one per process would make it
    // unreadable after a restart and on every other replica.
    throw new ServiceConfigError(
      'LAYER_SECRET is required with REDIS_URL: callback URLs, download grants and the tokens kept on Redis are signed and sealed with it, and must verify after a restart and on every replica (set the same value of at least 16 characters everywhere)',
    );
  }
  const rawEmulator = opts.emulatorUrl ?? env.OPENAPI_EMULATOR_URL;
  const emulatorUrl = rawEmulator ? httpUrl('OPENAPI_EMULATOR_URL', rawEmulator) : undefined;
  if (wantsEmulator(env) && !emulatorUrl) {
    const uncovered = AREAS.filter((a) => !env[`OPENAPI_${a.toUpperCase()}_URL` as SettingName]);
    if (uncovered.length > 0) {
      throw new ServiceConfigError(
        `OPENAPI_ENV=emulator needs the emulator's URL: set OPENAPI_EMULATOR_URL (the URL \`npm run emulator\` prints, e.g. http://127.0.0.1:4010) or OPENAPI_<AREA>_URL for ${uncovered.map((a) => a.toUpperCase()).join(', ')}`,
      );
    }
  }
  const config = loadUpstreamConfig(env, emulatorUrl);
  const store = storeChoiceFromEnv(env);
  return { config, names, redisUrl: store.kind === 'redis' ? store.url : null, sqliteFile: store.kind === 'sqlite' ? store.file : null, publicUrl };
}

/**
 * The upstream client, the named subgraphs and one HTTP server serving them (each at
 * `/<name>/graphql`), configured from the environment as `npm start` configures them. Console lines
 * of the process are redacted (the secrets of `env` included).
 */
export async function startSubgraphsFromEnv(opts: SubgraphsFromEnvOptions): Promise<RunningSubgraphsFromEnv> {
  // Parsed once here (a bad value is refused before anything starts), then handed down.
  const env = settingsOf(opts.env);
  const settings = subgraphsSettingsFromEnv({ ...opts, env });
  const { config, names, redisUrl, sqliteFile } = settings;
  pricesFromEnv(env);
  registerSecrets(secretsOfEnv(env));
  routeConsole();
  const port = opts.port ?? portFromEnv(env, 'SUBGRAPH_PORT', 4001);
  const host = opts.host ?? hostFromEnv(env, 'SUBGRAPH_HOST');

  // The upstream side's shared state: on Redis with `REDIS_URL` (every replica shares the cache,
  // in-flight markers, pending slow datasets, rate limits and the cost ledger); else the pending
  // datasets and the ledger in the embedded database, the rest in memory; or all in memory.
  const stores = await upstreamStores(config, redisUrl, opts.clock, { prefix: redisPrefixFromEnv(env), sqliteFile: sqliteFile ?? undefined });
  // With the emulator and no account configured, the account area reads the emulator's built-in account.
  const upstream = new UpstreamClient(
    config.env === 'emulator' && !config.accountCredentials ? { ...config, accountCredentials: { email: env.EMULATOR_EMAIL, apikey: env.EMULATOR_APIKEY } } : config,
    stores,
  );
  // Money at risk is settled in the background from the account's wallet history (and on demand).
  upstream.settler?.start(config.settleEveryMs ?? 30_000);
  // With the account's credentials and no service token, the layer mints its own and renews it.
  const managed = managedTokenFor(env, config, names, upstream, opts.clock);
  try {
    await managed?.start();
    const list = createSubgraphs(env, names);
    const subgraphs = await startSubgraphServer({
      subgraphs: list,
      upstream,
      // One ledger for every subgraph of the server: an operation's budget holds across its query plan.
      ledger: stores.ledger,
      // With the emulator, callers without a token use its built-in account, so that `npm start`
      // works with no account at all (`EMULATOR_TOKEN` must match the emulator's when it runs apart).
      auth: managed
        ? { serviceToken: () => managed.current(), serviceTenant: managed.tenant }
        : { serviceToken: config.serviceToken, fallbackToken: config.env === 'emulator' ? env.EMULATOR_TOKEN : null },
      // Background work keeps the layer's own token as a marker, resolved when it calls (rotations, restarts).
      tokens: workTokensOf(managed, config.serviceToken),
      port,
      host,
      publicUrl: () => settings.publicUrl || (opts.gatewayUrl?.() ?? ''),
      // `/readyz`: with REDIS_URL, Redis must answer.
      readiness: redisUrl ? [redisCheck(redisUrl)] : [],
      requestLimits: subgraphRequestLimits(requestLimitsFromEnv(env)),
    });
    const stop = async (drainMs: number | null): Promise<DrainResult> => {
      try {
        const drained = drainMs === null ? (await subgraphs.close(), { clean: true, requests: 0, sockets: 0 }) : await subgraphs.shutdown(drainMs);
        // After the subgraphs' own work stops: the layer's tokens are deleted upstream.
        await managed?.close();
        return drained;
      } finally {
        await upstream.close();
        await stores.close();
      }
    };
    return {
      ...settings,
      subgraphs,
      upstream,
      list,
      graphqlUrls: Object.fromEntries(list.map((s) => [s.name, subgraphs.graphqlUrl(s.name)])),
      close: async () => void (await stop(null)),
      shutdown: (timeoutMs) => stop(timeoutMs ?? DEFAULT_SHUTDOWN_TIMEOUT_MS),
    };
  } catch (err) {
    await managed?.close().catch(() => undefined);
    await upstream.close().catch(() => undefined);
    await stores.close().catch(() => undefined);
    throw err;
  }
}

/** Whether the subgraphs answer every caller with a service token: `OPENAPI_TOKEN`, or the managed token (`managedTokenFor`). */
function usesServiceToken(env: Settings, config: UpstreamConfig): boolean {
  // A gateway deployed apart from the subgraphs holds no upstream credential: told by GATEWAY_SERVICE_TOKEN=on.
  if (config.serviceToken || env.GATEWAY_SERVICE_TOKEN) return true;
  return Boolean(env.OPENAPI_EMAIL && env.OPENAPI_APIKEY) && env.OPENAPI_MANAGED_TOKEN;
}

/**
 * The layer's managed token (`upstream/service-token.ts`): with `OPENAPI_EMAIL` and `OPENAPI_APIKEY`
 * given, no `OPENAPI_TOKEN`, and `OPENAPI_MANAGED_TOKEN` not `off`; null otherwise (pass-through).
 * `OPENAPI_MANAGED_TOKEN_TTL_S` sets each token's lifetime (default 30 days; renewed a tenth before).
 */
function managedTokenFor(env: Settings, config: UpstreamConfig, names: readonly string[], upstream: UpstreamClient, clock?: () => number): ManagedServiceToken | null {
  if (!env.OPENAPI_EMAIL || !env.OPENAPI_APIKEY || config.serviceToken || !env.OPENAPI_MANAGED_TOKEN) return null;
  const ttl = env.OPENAPI_MANAGED_TOKEN_TTL_S;
  return new ManagedServiceToken(upstream, scopesFor(config.env, tokenEndpoints(names, env)), env.OPENAPI_EMAIL, {
    ...(ttl !== null ? { ttlSeconds: ttl } : {}),
    ...(clock ? { now: clock } : {}),
    graceMs: graceMsFor(tokenHoldMs(env)),
  });
}

// ---------------------------------------------------------------------------------------------
// Gateway

/** Names of the subgraphs in a supergraph SDL (its `join__Graph` values). @default the checked-in supergraph */
export function supergraphSubgraphNames(supergraph: string = readFileSync(SUPERGRAPH_FILE, 'utf8')): string[] {
  return [...supergraph.matchAll(/@join__graph\(\s*name:\s*"([^"]+)"/g)].map((m) => m[1]);
}

/** The variable holding one subgraph's URL: `SUBGRAPH_<NAME>_URL`. */
export const subgraphUrlVariable = (name: string): string => `SUBGRAPH_${name.toUpperCase().replace(/[^A-Z0-9]/g, '_')}_URL`;

/**
 * The GraphQL URL of every subgraph of the supergraph, from `SUBGRAPH_<NAME>_URL`
 * (`SUBGRAPH_COMPANY_URL=http://127.0.0.1:4001/company/graphql`). A bare origin
 * (`http://127.0.0.1:4001`) means `<origin>/<name>/graphql`. Every subgraph needs one.
 */
export function subgraphUrlsFromEnv(source: SettingsSource, names: readonly string[] = supergraphSubgraphNames()): Record<string, string> {
  const settings: Readonly<Record<string, unknown>> = settingsOf(source);
  const urlOf = (name: string): string | null => (typeof settings[subgraphUrlVariable(name)] === 'string' ? (settings[subgraphUrlVariable(name)] as string) : null);
  const missing = names.filter((n) => !urlOf(n));
  if (missing.length > 0) {
    throw new ServiceConfigError(
      `the gateway needs the URL of every subgraph: set ${missing.map((n) => `${subgraphUrlVariable(n)} (e.g. http://127.0.0.1:4001/${n}/graphql)`).join(', ')}`,
    );
  }
  const urls: Record<string, string> = {};
  for (const name of names) {
    const variable = subgraphUrlVariable(name);
    const value = httpUrl(variable, urlOf(name)!);
    const url = new URL(value);
    if (url.pathname === '/' || url.pathname === '') url.pathname = `/${name}/graphql`;
    if (url.pathname !== `/${name}/graphql` || url.search || url.hash) {
      throw new ServiceConfigError(`${variable} must be the subgraph's GraphQL URL, <origin>/${name}/graphql (or just <origin>), got "${value}"`);
    }
    urls[name] = url.href;
  }
  return urls;
}

export interface GatewayFromEnvOptions {
  /** @default `PORT` or 4000 */
  port?: number;
  /** @default `HOST` or 127.0.0.1 */
  host?: string;
  /** Clock of the response cache's lifetimes (tests move time forward with it). @default Date.now */
  clock?: () => number;
}

/**
 * The gateway's options: over the subgraphs at `subgraphUrls` (GraphQL URLs `<origin>/<name>/graphql`,
 * each serving subscriptions over graphql-ws), with `/callbacks/<area>` and `/files/<area>` streamed
 * to the subgraph of that name, and the cost (`OPENAPI_MAX_EURO_PER_OPERATION`,
 * `OPENAPI_ESTIMATE_LIST_SIZE`, and the process's price table from `OPENAPI_PRICES`), `CORS_ORIGINS`,
 * `GATEWAY_LOG_LEVEL` and log secrets of `env`.
 */
export function gatewayOptionsFromEnv(source: SettingsSource, subgraphUrls: Record<string, string>, opts: GatewayFromEnvOptions = {}): GatewayOptions {
  const env = settingsOf(source);
  // The gateway reads only the budget settings of the upstream configuration; base URLs are the
  // subgraphs' concern, so a placeholder stands for the emulator's.
  const config = loadUpstreamConfig(env, 'http://emulator.invalid');
  pricesFromEnv(env);
  // Callbacks and downloads of an area go to the subgraph of that name, at its server's origin, for
  // the areas whose descriptor has those routes.
  const basesFor = (route: 'callbacks' | 'files'): Record<string, string> =>
    Object.fromEntries(
      Object.entries(subgraphUrls).flatMap(([name, url]) => (GATEWAY_AREAS.some((a) => a.name === name && a.routes?.includes(route)) ? [[name, new URL(url).origin]] : [])),
    );
  return {
    subgraphUrls,
    areas: GATEWAY_AREAS,
    subscriptionSubgraphs: Object.keys(subgraphUrls),
    port: opts.port ?? portFromEnv(env, 'PORT', 4000),
    host: opts.host ?? hostFromEnv(env, 'HOST'),
    routes: [subgraphRoute('callbacks', basesFor('callbacks')), subgraphRoute('files', basesFor('files'))],
    // LOG_LEVEL (or GATEWAY_LOG_LEVEL) of this environment; these secrets never reach a log line.
    logLevel: logLevelSettingOfEnv(env),
    logSecrets: secretsOfEnv(env),
    cost: { pricing: PRICING, maxEuroPerOperation: config.maxEuroPerOperation, defaultListSize: config.estimateListSize },
    corsOrigins: corsOriginsFromEnv(env),
    persisted: persistedFromEnv(env),
    requestLimits: requestLimitsFromEnv(env),
    // GATEWAY_COMPRESSION=off: answers go out uncompressed (e.g. behind a proxy that compresses).
    compression: env.GATEWAY_COMPRESSION ? {} : false,
    // Whole answers per tenant (`gateway/response-cache.ts`): on Redis with REDIS_URL; GATEWAY_RESPONSE_CACHE=off turns it off.
    // With a service token (OPENAPI_TOKEN, or the managed one) every change drops every caller's answers.
    responseCache: !env.GATEWAY_RESPONSE_CACHE
      ? false
      : {
          redisUrl: env.REDIS_URL,
          redisPrefix: redisPrefixFromEnv(env),
          clock: opts.clock,
          serviceToken: usesServiceToken(env, config),
          // GATEWAY_RESPONSE_CACHE_MAX_ENTRIES: answers kept in memory (default 10,000).
          maxEntries: env.GATEWAY_RESPONSE_CACHE_MAX_ENTRIES ?? undefined,
        },
    // `/readyz`: with REDIS_URL, Redis must answer too.
    readiness: env.REDIS_URL ? [redisCheck(env.REDIS_URL)] : [],
  };
}

/**
 * Persisted operations (`gateway/persisted.ts`): `PERSISTED_OPERATIONS` `apq` (default; on Redis with
 * `REDIS_URL`, else in the embedded database, or memory with `STORE=memory`), `trusted` (with `PERSISTED_OPERATIONS_MANIFEST`, a file of hash → document) or `off`.
 */
export function persistedFromEnv(source: SettingsSource): PersistedOperationsOptions {
  const env = settingsOf(source);
  const raw = env.PERSISTED_OPERATIONS;
  const manifest = env.PERSISTED_OPERATIONS_MANIFEST ?? undefined;
  if (raw === 'trusted' && !manifest) {
    throw new ServiceConfigError(
      'PERSISTED_OPERATIONS=trusted needs PERSISTED_OPERATIONS_MANIFEST: the path of the manifest of allowed operations (JSON, hash → document, as a client build emits it)',
    );
  }
  const store = storeChoiceFromEnv(env);
  return {
    mode: raw,
    manifest,
    redisUrl: store.kind === 'redis' ? store.url : null,
    sqliteFile: store.kind === 'sqlite' ? store.file : null,
    redisPrefix: redisPrefixFromEnv(env),
  };
}

/** `CORS_ORIGINS`: comma-separated browser origins allowed cross-origin; none by default. */
export function corsOriginsFromEnv(env: SettingsSource): string[] {
  return (settingsOf(env).CORS_ORIGINS ?? '')
    .split(',')
    .map((o) => o.trim())
    .filter(Boolean)
    .map((o) => {
      const origin = URL.canParse(o) ? new URL(o).origin : 'null';
      if (origin === 'null') throw new Error(`CORS_ORIGINS: "${o}" is not an origin like https://app.example.com`);
      return origin;
    });
}
