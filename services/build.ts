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
import { DEFAULT_APIKEY, DEFAULT_EMAIL, DEFAULT_TOKEN, type EmulatorOptions } from '../emulator/server.ts';
import type { GatewayOptions } from '../gateway/index.ts';
import type { PersistedOperationsOptions } from '../gateway/persisted.ts';
import { SUPERGRAPH_FILE } from '../gateway/compose.ts';
import { subgraphRoute } from '../gateway/proxy.ts';
import { createSubgraphs, SUBGRAPH_NAMES } from '../subgraphs/index.ts';
import { PRICING } from '../subgraphs/pricing.ts';
import { registerSecrets, secretsOfEnv } from '../subgraphs/runtime/redact.ts';
import { logLevelSettingOfEnv, routeConsole } from '../subgraphs/runtime/log.ts';
import { startSubgraphServer, subgraphRequestLimits, type RunningSubgraphs, type Subgraph } from '../subgraphs/runtime/server.ts';
import { jsonLimitsFromEnv, type JsonLimits } from '../platform/json-limits.ts';
import { layerSecret } from '../subgraphs/runtime/signing.ts';
import { UpstreamClient } from '../subgraphs/upstream/client.ts';
import { AREAS } from '../contract/areas.ts';
import { loadUpstreamConfig, parseEnv, type UpstreamConfig } from '../subgraphs/upstream/config.ts';
import { upstreamStores } from '../subgraphs/upstream/stores.ts';
import { ManagedServiceToken, graceMsFor, scopesFor } from '../subgraphs/upstream/service-token.ts';
import { workTokensOf } from '../subgraphs/upstream/work-tokens.ts';
import { redisPrefixFromEnv } from '../subgraphs/runtime/redis.ts';
import { storeChoiceFromEnv } from '../platform/store-choice.ts';
import { DEFAULT_SHUTDOWN_TIMEOUT_MS, redisCheck, type DrainResult } from '../subgraphs/runtime/health.ts';

/** A configuration mistake found before anything starts; its message says what to set. */
export class ServiceConfigError extends Error {
  override name = 'ServiceConfigError';
}

/** A TCP port from a variable: `dflt` when unset, else an integer 0–65535 (0 = any free port). */
export function portFromEnv(env: NodeJS.ProcessEnv, name: string, dflt: number): number {
  const raw = env[name]?.trim();
  if (raw === undefined || raw === '') return dflt;
  const port = Number(raw);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) throw new ServiceConfigError(`${name} must be a port number (0–65535), got "${raw}"`);
  return port;
}

const hostFromEnv = (env: NodeJS.ProcessEnv, name: string, dflt: string): string => env[name]?.trim() || dflt;

/** The bounds of a client's GraphQL request (`MAX_BODY_BYTES`, `MAX_UPLOAD_BYTES`, `MAX_JSON_DEPTH`, `MAX_JSON_VALUES`). */
export function requestLimitsFromEnv(env: NodeJS.ProcessEnv): JsonLimits {
  try {
    return jsonLimitsFromEnv(env);
  } catch (err) {
    throw new ServiceConfigError((err as Error).message);
  }
}

/**
 * The process's price table from `OPENAPI_PRICES` of `env` (`contract/prices.ts`: prices are per
 * process, shared by the cost meter, the estimate and the emulator's wallet).
 */
export function pricesFromEnv(env: NodeJS.ProcessEnv): void {
  try {
    configurePrices(env);
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

/** Milliseconds from a variable: undefined when unset, else an integer ≥ 0. */
export function durationMsFromEnv(env: NodeJS.ProcessEnv, name: string): number | undefined {
  const raw = env[name]?.trim();
  if (raw === undefined || raw === '') return undefined;
  const ms = Number(raw);
  if (!Number.isInteger(ms) || ms < 0) throw new ServiceConfigError(`${name} must be a number of milliseconds (an integer ≥ 0), got "${raw}"`);
  return ms;
}

/**
 * How long the emulator's risk requests take (`EMULATOR_RISK_COMPLETE_AFTER_MS`), when set: from
 * the order to `COMPLETE` (0: only the control API's `risk/advance` completes them).
 */
const riskTimingFromEnv = (env: NodeJS.ProcessEnv): Pick<EmulatorOptions, 'riskCompleteAfterMs'> => {
  const ms = durationMsFromEnv(env, 'EMULATOR_RISK_COMPLETE_AFTER_MS');
  return ms === undefined ? {} : { riskCompleteAfterMs: ms };
};

/**
 * The stand-alone emulator: `EMULATOR_PORT` (default 4010), `EMULATOR_HOST` (default 127.0.0.1) and
 * `EMULATOR_RISK_COMPLETE_AFTER_MS` (default 1500). Also sets the process's price table (its
 * wallet's) from `OPENAPI_PRICES`.
 */
export function emulatorOptionsFromEnv(env: NodeJS.ProcessEnv): EmulatorOptions {
  pricesFromEnv(env);
  return { port: portFromEnv(env, 'EMULATOR_PORT', 4010), host: hostFromEnv(env, 'EMULATOR_HOST', '127.0.0.1'), ...riskTimingFromEnv(env) };
}

/**
 * The emulator `npm start` embeds: the same settings as the stand-alone one, but any free port
 * unless `EMULATOR_PORT` pins it (`0` too means any), and the risk timing only when set (the
 * caller's default otherwise).
 */
export function embeddedEmulatorOptionsFromEnv(env: NodeJS.ProcessEnv): EmulatorOptions {
  return { port: portFromEnv(env, 'EMULATOR_PORT', 0), host: hostFromEnv(env, 'EMULATOR_HOST', '127.0.0.1'), ...riskTimingFromEnv(env) };
}

/**
 * `npm start`'s emulator when `EMULATOR_RISK_COMPLETE_AFTER_MS` is unset: a risk request completes
 * 30 s after its order, time for a person to copy its id into GraphiQL's WatchRequest tab and see
 * the status change (PROCESSING, then COMPLETE). Tests and `npm run emulator` keep 1500 ms.
 */
export const START_RISK_COMPLETE_AFTER_MS = 30_000;

/** True when `OPENAPI_ENV` (default `emulator`) names the emulator. */
export const wantsEmulator = (env: NodeJS.ProcessEnv): boolean => parseEnv(env.OPENAPI_ENV) === 'emulator';

// ---------------------------------------------------------------------------------------------
// Subgraphs

export interface SubgraphsFromEnvOptions {
  /** Where `OPENAPI_*`, `PUBLIC_URL`, `LAYER_SECRET`, `REDIS_URL` and the subgraphs' own settings are read. */
  env: NodeJS.ProcessEnv;
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
  const { env } = opts;
  const known: readonly string[] = SUBGRAPH_NAMES;
  const names = [...new Set(opts.names ?? known)];
  if (names.length === 0) throw new ServiceConfigError(`name at least one subgraph to serve (${known.join(', ')})`);
  const unknown = names.filter((n) => !known.includes(n));
  if (unknown.length > 0) throw new ServiceConfigError(`unknown subgraph ${unknown.map((n) => `"${n}"`).join(', ')}: the subgraphs are ${known.join(', ')}`);

  const rawPublic = env.PUBLIC_URL?.trim() ?? '';
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
  if (env.REDIS_URL?.trim() && !env.LAYER_SECRET) {
    // Shared state is signed and sealed with the secret: a random one per process would make it
    // unreadable after a restart and on every other replica.
    throw new ServiceConfigError(
      'LAYER_SECRET is required with REDIS_URL: callback URLs, download grants and the tokens kept on Redis are signed and sealed with it, and must verify after a restart and on every replica (set the same value of at least 16 characters everywhere)',
    );
  }
  if (env.LAYER_SECRET) {
    try {
      layerSecret(env);
    } catch (err) {
      throw new ServiceConfigError((err as Error).message);
    }
  }

  const rawEmulator = opts.emulatorUrl ?? (env.OPENAPI_EMULATOR_URL?.trim() || null);
  const emulatorUrl = rawEmulator ? httpUrl('OPENAPI_EMULATOR_URL', rawEmulator) : undefined;
  if (wantsEmulator(env) && !emulatorUrl) {
    const uncovered = AREAS.filter((a) => !env[`OPENAPI_${a.toUpperCase()}_URL`]);
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
  const { env } = opts;
  const settings = subgraphsSettingsFromEnv(opts);
  const { config, names, redisUrl, sqliteFile } = settings;
  pricesFromEnv(env);
  registerSecrets(secretsOfEnv(env));
  routeConsole();
  const port = opts.port ?? portFromEnv(env, 'SUBGRAPH_PORT', 4001);
  const host = opts.host ?? hostFromEnv(env, 'SUBGRAPH_HOST', '127.0.0.1');

  // The upstream side's shared state: on Redis with `REDIS_URL` (every replica shares the cache,
  // in-flight markers, pending slow datasets, rate limits and the cost ledger); else the pending
  // datasets and the ledger in the embedded database, the rest in memory; or all in memory.
  const stores = await upstreamStores(config, redisUrl, opts.clock, { prefix: redisPrefixFromEnv(env), sqliteFile: sqliteFile ?? undefined });
  // With the emulator and no account configured, the account area reads the emulator's built-in account.
  const upstream = new UpstreamClient(
    config.env === 'emulator' && !config.accountCredentials ? { ...config, accountCredentials: { email: DEFAULT_EMAIL, apikey: DEFAULT_APIKEY } } : config,
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
        : { serviceToken: config.serviceToken, fallbackToken: config.env === 'emulator' ? DEFAULT_TOKEN : null },
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
function usesServiceToken(env: NodeJS.ProcessEnv, config: UpstreamConfig): boolean {
  // A gateway deployed apart from the subgraphs holds no upstream credential: told by GATEWAY_SERVICE_TOKEN=on.
  if (config.serviceToken || env.GATEWAY_SERVICE_TOKEN?.trim().toLowerCase() === 'on') return true;
  return Boolean(env.OPENAPI_EMAIL?.trim() && env.OPENAPI_APIKEY?.trim()) && env.OPENAPI_MANAGED_TOKEN?.trim().toLowerCase() !== 'off';
}

/**
 * The layer's managed token (`upstream/service-token.ts`): with `OPENAPI_EMAIL` and `OPENAPI_APIKEY`
 * given, no `OPENAPI_TOKEN`, and `OPENAPI_MANAGED_TOKEN` not `off`; null otherwise (pass-through).
 * `OPENAPI_MANAGED_TOKEN_TTL_S` sets each token's lifetime (default 30 days; renewed a tenth before).
 */
function managedTokenFor(env: NodeJS.ProcessEnv, config: UpstreamConfig, names: readonly string[], upstream: UpstreamClient, clock?: () => number): ManagedServiceToken | null {
  const configured = env.OPENAPI_EMAIL?.trim() && env.OPENAPI_APIKEY?.trim();
  if (!configured || config.serviceToken || env.OPENAPI_MANAGED_TOKEN?.trim().toLowerCase() === 'off') return null;
  const ttl = Number(env.OPENAPI_MANAGED_TOKEN_TTL_S);
  return new ManagedServiceToken(upstream, scopesFor(config.env, names, env), env.OPENAPI_EMAIL!.trim(), {
    ...(Number.isFinite(ttl) && ttl > 0 ? { ttlSeconds: Math.floor(ttl) } : {}),
    ...(clock ? { now: clock } : {}),
    graceMs: graceMsFor(env),
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
export function subgraphUrlsFromEnv(env: NodeJS.ProcessEnv, names: readonly string[] = supergraphSubgraphNames()): Record<string, string> {
  const missing = names.filter((n) => !env[subgraphUrlVariable(n)]?.trim());
  if (missing.length > 0) {
    throw new ServiceConfigError(
      `the gateway needs the URL of every subgraph: set ${missing.map((n) => `${subgraphUrlVariable(n)} (e.g. http://127.0.0.1:4001/${n}/graphql)`).join(', ')}`,
    );
  }
  const urls: Record<string, string> = {};
  for (const name of names) {
    const variable = subgraphUrlVariable(name);
    const value = httpUrl(variable, env[variable]!.trim());
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
export function gatewayOptionsFromEnv(env: NodeJS.ProcessEnv, subgraphUrls: Record<string, string>, opts: GatewayFromEnvOptions = {}): GatewayOptions {
  // The gateway reads only the budget settings of the upstream configuration; base URLs are the
  // subgraphs' concern, so a placeholder stands for the emulator's.
  const config = loadUpstreamConfig(env, 'http://emulator.invalid');
  pricesFromEnv(env);
  // Callbacks and downloads of an area go to the subgraph of that name, at its server's origin.
  const areaBases = Object.fromEntries(Object.entries(subgraphUrls).map(([name, url]) => [name, new URL(url).origin]));
  return {
    subgraphUrls,
    subscriptionSubgraphs: Object.keys(subgraphUrls),
    port: opts.port ?? portFromEnv(env, 'PORT', 4000),
    host: opts.host ?? hostFromEnv(env, 'HOST', '127.0.0.1'),
    routes: [subgraphRoute('callbacks', areaBases), subgraphRoute('files', areaBases)],
    // LOG_LEVEL (or GATEWAY_LOG_LEVEL) of this environment; these secrets never reach a log line.
    logLevel: logLevelSettingOfEnv(env),
    logSecrets: secretsOfEnv(env),
    cost: { pricing: PRICING, maxEuroPerOperation: config.maxEuroPerOperation, defaultListSize: config.estimateListSize },
    corsOrigins: corsOriginsFromEnv(env),
    persisted: persistedFromEnv(env),
    requestLimits: requestLimitsFromEnv(env),
    // GATEWAY_COMPRESSION=off: answers go out uncompressed (e.g. behind a proxy that compresses).
    compression: env.GATEWAY_COMPRESSION?.trim().toLowerCase() === 'off' ? false : {},
    // Whole answers per tenant (`gateway/response-cache.ts`): on Redis with REDIS_URL; GATEWAY_RESPONSE_CACHE=off turns it off.
    // With a service token (OPENAPI_TOKEN, or the managed one) every change drops every caller's answers.
    responseCache:
      env.GATEWAY_RESPONSE_CACHE?.trim().toLowerCase() === 'off'
        ? false
        : {
            redisUrl: env.REDIS_URL?.trim() || null,
            redisPrefix: redisPrefixFromEnv(env),
            clock: opts.clock,
            serviceToken: usesServiceToken(env, config),
            // GATEWAY_RESPONSE_CACHE_MAX_ENTRIES: answers kept in memory (default 10,000).
            maxEntries: positiveInt(env.GATEWAY_RESPONSE_CACHE_MAX_ENTRIES),
          },
    // `/readyz`: with REDIS_URL, Redis must answer too.
    readiness: env.REDIS_URL?.trim() ? [redisCheck(env.REDIS_URL.trim())] : [],
  };
}

/** A positive whole number of a setting, else undefined (unset or not a number). */
function positiveInt(value: string | undefined): number | undefined {
  const n = Math.floor(Number(value?.trim() || NaN));
  return Number.isFinite(n) && n > 0 ? n : undefined;
}

/**
 * Persisted operations (`gateway/persisted.ts`): `PERSISTED_OPERATIONS` `apq` (default; on Redis with
 * `REDIS_URL`, else in the embedded database, or memory with `STORE=memory`), `trusted` (with `PERSISTED_OPERATIONS_MANIFEST`, a file of hash → document) or `off`.
 */
export function persistedFromEnv(env: NodeJS.ProcessEnv): PersistedOperationsOptions {
  const raw = env.PERSISTED_OPERATIONS?.trim().toLowerCase() || 'apq';
  if (raw !== 'apq' && raw !== 'trusted' && raw !== 'off') throw new ServiceConfigError(`PERSISTED_OPERATIONS must be apq, trusted or off, got "${raw}"`);
  const manifest = env.PERSISTED_OPERATIONS_MANIFEST?.trim() || undefined;
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
export function corsOriginsFromEnv(env: NodeJS.ProcessEnv): string[] {
  return (env.CORS_ORIGINS ?? '')
    .split(',')
    .map((o) => o.trim())
    .filter(Boolean)
    .map((o) => {
      const origin = URL.canParse(o) ? new URL(o).origin : 'null';
      if (origin === 'null') throw new Error(`CORS_ORIGINS: "${o}" is not an origin like https://app.example.com`);
      return origin;
    });
}
