/**
 * Where the REST suite lives and how hard to try: built once from the environment.
 *
 * - `OPENAPI_ENV` = `emulator` (default) | `sandbox` | `production`
 * - `OPENAPI_<AREA>_URL` overrides one area's base URL (AREA: COMPANY, RISK, OAUTH, PEC, PECMASSIVA,
 *   INVOICE, CAP)
 * - `OPENAPI_TOKEN` service token; without it the caller's `Authorization: Bearer` is passed through
 * - `OPENAPI_TIMEOUT_MS` forces one timeout on every endpoint (tests, slow links)
 */
import { AREA_HOSTS, type Area } from '../../emulator/core.ts';

export type OpenapiEnv = 'emulator' | 'sandbox' | 'production';

export const AREAS = Object.keys(AREA_HOSTS) as Area[];

export interface UpstreamConfig {
  env: OpenapiEnv;
  /** Base URL per area, no trailing slash. */
  baseUrls: Record<Area, string>;
  /** Service token; when absent, callers must send their own bearer token. */
  serviceToken: string | null;
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
   * Euro one GraphQL operation may spend upstream (per subgraph); a paid call past it is refused
   * with `COST_LIMIT_EXCEEDED`. `OPENAPI_MAX_EURO_PER_OPERATION`; 0 means no limit. @default 50
   */
  maxEuroPerOperation: number | null;
}

export function parseEnv(value: string | undefined): OpenapiEnv {
  const v = (value ?? 'emulator').trim().toLowerCase();
  if (v === 'emulator' || v === 'sandbox' || v === 'production') return v;
  throw new Error(`OPENAPI_ENV must be emulator, sandbox or production (got "${value}")`);
}

/** Base URL of an area in a real environment (REFERENCE §0: sandbox hosts carry `test.`). */
export function realBaseUrl(area: Area, env: Exclude<OpenapiEnv, 'emulator'>): string {
  return `https://${env === 'sandbox' ? 'test.' : ''}${AREA_HOSTS[area]}`;
}

const int = (v: string | undefined, dflt: number): number => {
  if (v === undefined || v === '') return dflt;
  const n = Number(v);
  if (!Number.isFinite(n) || n < 0) throw new Error(`expected a non-negative number, got "${v}"`);
  return n;
};

/**
 * Builds the configuration. `emulatorUrl` is the embedded emulator's origin (areas live under
 * `/<area>`); it is required when the environment is `emulator` and no override covers an area.
 */
export function loadUpstreamConfig(env: NodeJS.ProcessEnv = process.env, emulatorUrl?: string): UpstreamConfig {
  const openapiEnv = parseEnv(env.OPENAPI_ENV);
  const baseUrls = {} as Record<Area, string>;
  for (const area of AREAS) {
    const override = env[`OPENAPI_${area.toUpperCase()}_URL`];
    if (override) baseUrls[area] = override.replace(/\/+$/, '');
    else if (openapiEnv === 'emulator') {
      if (!emulatorUrl) throw new Error(`OPENAPI_ENV=emulator needs the emulator's URL (or OPENAPI_${area.toUpperCase()}_URL)`);
      baseUrls[area] = `${emulatorUrl.replace(/\/+$/, '')}/${area}`;
    } else baseUrls[area] = realBaseUrl(area, openapiEnv);
  }
  // 0 (or unset) means "per endpoint", never "time out at once".
  const forced = int(env.OPENAPI_TIMEOUT_MS, 0) || null;
  return {
    env: openapiEnv,
    baseUrls,
    serviceToken: env.OPENAPI_TOKEN?.trim() || null,
    defaultTimeoutMs: 10_000,
    forcedTimeoutMs: forced,
    maxRetries: int(env.OPENAPI_MAX_RETRIES, 2),
    retryBaseMs: int(env.OPENAPI_RETRY_BASE_MS, 150),
    maxRetryAfterSeconds: int(env.OPENAPI_MAX_RETRY_AFTER_S, 5),
    slowBudgetMs: int(env.OPENAPI_SLOW_BUDGET_MS, 60_000),
    pollMinMs: int(env.OPENAPI_POLL_MIN_MS, 200),
    pollMaxMs: int(env.OPENAPI_POLL_MAX_MS, 5_000),
    cacheMaxEntries: int(env.OPENAPI_CACHE_MAX_ENTRIES, 10_000),
    maxEuroPerOperation: int(env.OPENAPI_MAX_EURO_PER_OPERATION, 50) || null,
  };
}
