/**
 * Where the REST suite lives and how hard to try: built once from the environment.
 *
 * - `OPENAPI_ENV` = `emulator` (default) | `sandbox` | `production`
 * - `OPENAPI_<AREA>_URL` overrides one area's base URL (AREA: COMPANY, RISK, OAUTH, PEC, PECMASSIVA,
 *   INVOICE, CAP)
 * - `OPENAPI_TOKEN` service token; without it the caller's `Authorization: Bearer` is passed through
 * - `OPENAPI_EMAIL`, `OPENAPI_APIKEY` the account's credentials (HTTP Basic, authorization area only)
 * - `OPENAPI_PRECHECK=on` scope and wallet pre-checks with those credentials (`account-guard.ts`)
 * - `OPENAPI_TIMEOUT_MS` forces one timeout on every endpoint (tests, slow links)
 * - `OPENAPI_RATE_LIMITS`, `OPENAPI_RATE_MAX_WAIT_MS`: request rates held before each call (`rate-limits.ts`)
 * - `RISK_BUREAU_PATH` sends the person bureau family to another path (the vendor's `/IT-crif-persona`)
 *
 * Every setting comes from the settings given (`platform/settings.ts`: parsed once at start, or from
 * a stack's env), never from `process.env` behind the caller's back.
 */
import { AREA_HOSTS, AREAS, type Area } from '../../contract/areas.ts';
import { rateLimitsFor, type RateLimitRule } from './rate-limits.ts';
import { settingsOf, type SettingName, type SettingsSource } from '../../platform/settings.ts';

export type OpenapiEnv = 'emulator' | 'sandbox' | 'production';

export interface UpstreamConfig {
  env: OpenapiEnv;
  /**
   * Settlement of money at risk (`upstream/settlement.ts`): how long after the layer gave up on a
   * paid call the service may still carry it out and charge it (ms). `OPENAPI_SETTLE_LATE_MS`. @default 60000
   */
  settleLateMs?: number;
  /** How often the settler runs in the background (ms; 0: on demand only). `OPENAPI_SETTLE_EVERY_MS`. @default 30000 */
  settleEveryMs?: number;
  /** Base URL per area, no trailing slash. */
  baseUrls: Record<Area, string>;
  /** Service token; when absent, callers must send their own bearer token. */
  serviceToken: string | null;
  /**
   * The account's e-mail and API key (`OPENAPI_EMAIL`, `OPENAPI_APIKEY`), sent as HTTP Basic to the
   * authorization area only; null when not configured (the account's fields then answer an error).
   * Never logged (the API key is a registered secret).
   */
  accountCredentials: { email: string; apikey: string } | null;
  /**
   * Scope and wallet pre-checks before each paid or scoped call (`upstream/account-guard.ts`):
   * `OPENAPI_PRECHECK=on`, effective with account credentials. @default false
   */
  precheck: boolean;
  /** Timeout of an endpoint without its own. @default 10000 */
  defaultTimeoutMs: number;
  /** When set, replaces every endpoint's timeout. */
  forcedTimeoutMs: number | null;
  /** Retries of idempotent GETs after the first attempt. @default 2 */
  maxRetries: number;
  /** First back-off between retries (doubles). @default 150 */
  retryBaseMs: number;
  /** A `Retry-After` longer than this is not waited for: the error goes to the client. @default 5 */
  maxRetryAfterSeconds: number;
  /** How long the 302 → IT-check_id flow may poll before giving up. @default 60000 */
  slowBudgetMs: number;
  /** Bounds of the wait between IT-check_id polls (the upstream's Retry-After is clamped to them). */
  pollMinMs: number;
  pollMaxMs: number;
  /** Entries the in-memory cache keeps before evicting the oldest. @default 10000 */
  cacheMaxEntries: number;
  /**
   * Euro one client operation may spend upstream, across every subgraph and entity fetch of its
   * query plan; an operation whose estimate passes it is refused before any call, and a paid call
   * past it is refused with `COST_LIMIT_EXCEEDED`. `OPENAPI_MAX_EURO_PER_OPERATION`; 0 means no limit. @default 50
   */
  maxEuroPerOperation: number | null;
  /**
   * Euro one tenant may spend upstream per calendar day (Italian time), on the shared cost ledger.
   * `OPENAPI_MAX_EURO_PER_DAY`; unset or 0 means no limit.
   */
  maxEuroPerDay: number | null;
  /**
   * Seconds a "not found" answer of a cached endpoint (a VAT number the register does not know) is
   * remembered per tenant, so that it is not bought again at once. `OPENAPI_NOT_FOUND_TTL_S`;
   * 0 switches it off. @default 600
   */
  notFoundTtlSeconds: number;
  /**
   * Seconds an expired cache entry may still answer when the upstream fails (5xx, reset, timeout):
   * the call is reported with `source: "stale"` and the response carries a warning.
   * `OPENAPI_MAX_STALE_S`; 0 switches it off. @default 86400
   */
  maxStaleSeconds: number;
  /**
   * How many items the cost estimate assumes for a list field without a documented limit
   * (managers, shareholders, owners…). `OPENAPI_ESTIMATE_LIST_SIZE`. @default 5
   */
  estimateListSize: number;
  /**
   * Request rates held before each upstream attempt: the built-in table of `rate-limits.ts` for
   * this environment, changed by `OPENAPI_RATE_LIMITS` (JSON, inline or a file path).
   */
  rateLimits: RateLimitRule[];
  /**
   * The longest a call queues for its rate; past it the call fails with `RATE_LIMITED` and nothing
   * is sent. `OPENAPI_RATE_MAX_WAIT_MS`. @default 5000
   */
  rateMaxWaitMs: number;
  /**
   * Per area, endpoint names (first path segments, as the contract and the area's table spell them)
   * that this deployment's upstream serves under another name: `{ risk: { 'IT-bureau-persona':
   * 'IT-crif-persona' } }` with `RISK_BUREAU_PATH=/IT-crif-persona`. Only the URL sent changes:
   * prices, rate limits and cache keys keep the contract's name.
   */
  pathAliases: Partial<Record<Area, Readonly<Record<string, string>>>>;
}

/** Base URL of an area in a real environment (REFERENCE §0: sandbox hosts carry `test.`). */
export function realBaseUrl(area: Area, env: Exclude<OpenapiEnv, 'emulator'>): string {
  return `https://${env === 'sandbox' ? 'test.' : ''}${AREA_HOSTS[area]}`;
}

/** `RISK_BUREAU_PATH` (`/IT-crif-persona`, `IT-crif-persona/`) as an endpoint name, or null when unset. */
function endpointName(name: string, value: string | undefined): string | null {
  const v = value?.trim().replace(/^\/+|\/+$/g, '');
  if (!v) return null;
  if (!/^[A-Za-z0-9._-]+$/.test(v)) throw new Error(`${name} must be one path segment such as /IT-crif-persona (got "${value}")`);
  return v;
}

/** The person bureau family's endpoint in the contract (and in the risk area's table). */
export const CONTRACT_BUREAU_ENDPOINT = 'IT-bureau-persona';

/** The path sent upstream for an area's path: its first segment renamed by `pathAliases`. */
export function upstreamPath(config: Pick<UpstreamConfig, 'pathAliases'>, area: Area, path: string): string {
  const aliases = config.pathAliases[area];
  if (!aliases) return path;
  const m = /^\/([^/?]+)(.*)$/s.exec(path);
  const to = m ? aliases[m[1]] : undefined;
  return to === undefined ? path : `/${to}${m![2]}`;
}

/**
 * Builds the configuration. `emulatorUrl` is the embedded emulator's origin (areas live under
 * `/<area>`); it is required when the environment is `emulator` and no override covers an area.
 */
export function loadUpstreamConfig(source: SettingsSource, emulatorUrl?: string): UpstreamConfig {
  const env = settingsOf(source);
  const openapiEnv = env.OPENAPI_ENV;
  const baseUrls = {} as Record<Area, string>;
  for (const area of AREAS) {
    const override = env[`OPENAPI_${area.toUpperCase()}_URL` as SettingName] as string | null;
    if (override) baseUrls[area] = override.replace(/\/+$/, '');
    else if (openapiEnv === 'emulator') {
      if (!emulatorUrl) throw new Error(`OPENAPI_ENV=emulator needs the emulator's URL (or OPENAPI_${area.toUpperCase()}_URL)`);
      baseUrls[area] = `${emulatorUrl.replace(/\/+$/, '')}/${area}`;
    } else baseUrls[area] = realBaseUrl(area, openapiEnv);
  }
  // 0 (or unset) means "per endpoint", never "time out at once".
  const forced = env.OPENAPI_TIMEOUT_MS || null;
  const bureau = endpointName('RISK_BUREAU_PATH', env.RISK_BUREAU_PATH ?? undefined);
  return {
    env: openapiEnv,
    baseUrls,
    serviceToken: env.OPENAPI_TOKEN,
    accountCredentials: env.OPENAPI_EMAIL && env.OPENAPI_APIKEY ? { email: env.OPENAPI_EMAIL, apikey: env.OPENAPI_APIKEY } : null,
    precheck: env.OPENAPI_PRECHECK,
    defaultTimeoutMs: 10_000,
    forcedTimeoutMs: forced,
    maxRetries: env.OPENAPI_MAX_RETRIES,
    retryBaseMs: env.OPENAPI_RETRY_BASE_MS,
    maxRetryAfterSeconds: env.OPENAPI_MAX_RETRY_AFTER_S,
    slowBudgetMs: env.OPENAPI_SLOW_BUDGET_MS,
    pollMinMs: env.OPENAPI_POLL_MIN_MS,
    pollMaxMs: env.OPENAPI_POLL_MAX_MS,
    cacheMaxEntries: env.OPENAPI_CACHE_MAX_ENTRIES,
    maxEuroPerOperation: env.OPENAPI_MAX_EURO_PER_OPERATION || null,
    maxEuroPerDay: env.OPENAPI_MAX_EURO_PER_DAY || null,
    notFoundTtlSeconds: env.OPENAPI_NOT_FOUND_TTL_S,
    maxStaleSeconds: env.OPENAPI_MAX_STALE_S,
    estimateListSize: Math.max(1, Math.floor(env.OPENAPI_ESTIMATE_LIST_SIZE)),
    rateLimits: rateLimitsFor(openapiEnv, env.OPENAPI_RATE_LIMITS ?? undefined),
    rateMaxWaitMs: env.OPENAPI_RATE_MAX_WAIT_MS,
    pathAliases: bureau && bureau !== CONTRACT_BUREAU_ENDPOINT ? { risk: { [CONTRACT_BUREAU_ENDPOINT]: bureau } } : {},
    settleLateMs: env.OPENAPI_SETTLE_LATE_MS,
    settleEveryMs: env.OPENAPI_SETTLE_EVERY_MS,
  };
}
