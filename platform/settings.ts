/**
 * Every setting the layer, the gateway and the emulator read: one schema (name, type, default,
 * which process reads it, what it does, its bounds), parsed once at start into a typed, frozen
 * object that the code receives. Nothing else in product code reads `process.env`.
 *
 * ```ts
 * const settings = loadSettings();            // process.env, at a process's start
 * const settings = settingsOf(opts.env);      // a stack's env (tests), or settings already parsed
 * settings.OPENAPI_TIMEOUT_MS;                // number, typed from the schema
 * ```
 *
 * A bad value is a `SettingsError` whose message is one line naming the setting and what is
 * expected (`Invalid setting MAX_BODY_BYTES="abc": expected a whole number of bytes ≥ 1`); the
 * value of a secret is never shown. `docs/configuration.md` is generated from this schema
 * (`npm run settings-doc`); a test fails when it drifts.
 *
 * The per-area entries (`<AREA>_POLL_*`, `OPENAPI_<AREA>_URL`, `SUBGRAPH_<NAME>_URL`) are spelled here
 * by the areas' names only (`TRACKED_AREAS`, `SUBGRAPH_URL_NAMES`; a test checks them against the
 * areas); once the areas describe themselves (issue 19, item 1) their descriptors can supply them.
 */
import { AREAS } from '../contract/areas.ts';

/** Which process reads a setting (`all`: every process, the emulator included). */
export type SettingProcess = 'all' | 'gateway' | 'subgraph' | 'emulator';

/** The subjects `docs/configuration.md` groups settings by, in this order. */
export const SUBJECTS = {
  process: 'Processes, logs and traces',
  http: 'HTTP: ports, URLs, limits',
  state: 'State: Redis, the embedded store, the layer secret',
  upstream: 'Upstream: the REST suite, credentials, retries, caches',
  budget: 'Cost and budgets',
  gateway: 'Gateway',
  tracking: 'Asynchronous work (per area: company, risk, invoicing, pec)',
  company: 'Company area',
  pec: 'Certified mail (PEC) and bulk certified mail',
  account: 'Account area',
  emulator: 'Emulator',
} as const;
export type SettingSubject = keyof typeof SUBJECTS;

interface SpecBase {
  process: readonly SettingProcess[];
  subject: SettingSubject;
  description: string;
}

/** Numbers: `int` a whole number, `number` any finite number, `bytes` and `duration` whole numbers of bytes or of `unit`. */
export interface NumberSpec extends SpecBase {
  type: 'int' | 'number' | 'bytes' | 'duration';
  default: number | null;
  min?: number;
  max?: number;
  /** Durations: the unit the name ends with. */
  unit?: 'ms' | 's';
  /** What the default means when it is computed (documented; the value is then null). */
  defaultText?: string;
}

/** `1`/`true`/`yes`/`on` or `0`/`false`/`no`/`off` (any case). */
export interface BoolSpec extends SpecBase {
  type: 'bool';
  default: boolean;
}

export interface EnumSpec extends SpecBase {
  type: 'enum';
  values: readonly string[];
  /** Other spellings accepted for a value (`silent` → `off`). */
  aliases?: Readonly<Record<string, string>>;
  default: string | null;
  defaultText?: string;
}

/** Text: `url` an http(s) URL (or `schemes`), `secret` never shown in errors, logs or the reference. */
export interface TextSpec extends SpecBase {
  type: 'string' | 'url' | 'secret';
  default: string | null;
  defaultText?: string;
  minLength?: number;
  /** URLs: the schemes accepted. @default ['http', 'https'] */
  schemes?: readonly string[];
}

export type SettingSpec = NumberSpec | BoolSpec | EnumSpec | TextSpec;

/** The parsed value of a spec: null when unset and without a default. */
export type SettingValue<S> = S extends { type: 'bool' }
  ? boolean
  : S extends { type: 'enum'; values: readonly (infer V)[]; default: infer D }
    ? V | (D extends null ? null : never)
    : S extends { type: 'int' | 'number' | 'bytes' | 'duration'; default: infer D }
      ? number | (D extends null ? null : never)
      : S extends { default: infer D }
        ? string | (D extends null ? null : never)
        : never;

const ALL = ['all'] as const;
const GATEWAY = ['gateway'] as const;
const SUBGRAPH = ['subgraph'] as const;
const EMULATOR = ['emulator'] as const;
const LAYER = ['gateway', 'subgraph'] as const;

const SECOND_MS = 1000;
const DAY_MS = 24 * 3600 * SECOND_MS;
const DAY_S = 24 * 3600;
const YEAR_S = 365 * DAY_S;

const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'off'] as const;
const LOG_ALIASES = { silent: 'off', false: 'off', none: 'off', '0': 'off' } as const;

/** The areas with asynchronous work (the tracking kit): their `<AREA>_*` settings. */
export const TRACKED_AREAS = ['company', 'risk', 'invoicing', 'pec'] as const;
/** The areas whose uploads carry PDFs: `<AREA>_MAX_PDF_BYTES`. */
export const PDF_AREAS = ['risk', 'pec'] as const;
/** The subgraphs the gateway may be pointed at: `SUBGRAPH_<NAME>_URL`. */
export const SUBGRAPH_URL_NAMES = ['company', 'risk', 'postal', 'pec', 'invoicing', 'account'] as const;

/** The prefix of an area's settings: `risk` → `RISK_`. */
export const settingPrefix = <A extends string>(area: A): `${Uppercase<A>}_` => `${area.toUpperCase().replace(/[^A-Z0-9]+/g, '_')}_` as `${Uppercase<A>}_`;

/** The same specs under each area's prefix (`RISK_POLL_INTERVAL_MS`, …). */
function perArea<const P extends string, const A extends string, const T extends Record<string, SettingSpec>>(
  prefix: P,
  areas: readonly A[],
  specs: (area: A) => T,
): { [K in keyof T & string as `${P}${Uppercase<A>}_${K}`]: T[K] } {
  const out: Record<string, SettingSpec> = {};
  for (const area of areas) for (const [k, spec] of Object.entries(specs(area))) out[prefix + settingPrefix(area) + k] = spec;
  return out as { [K in keyof T & string as `${P}${Uppercase<A>}_${K}`]: T[K] };
}

const tracking = (area: string) =>
  ({
    CALLBACK_TTL_S: {
      type: 'duration',
      unit: 's',
      default: 30 * DAY_S,
      min: 1,
      process: SUBGRAPH,
      subject: 'tracking',
      description: `Lifetime of a callback URL the ${area} subgraph gives the upstream.`,
    },
    MONITOR_CALLBACK_TTL_S: {
      type: 'duration',
      unit: 's',
      default: 5 * YEAR_S,
      min: 1,
      process: SUBGRAPH,
      subject: 'tracking',
      description: `Lifetime of a ${area} monitor's callback URL (never less than a year and a day, nor than the callback lifetime).`,
    },
    FILE_URL_TTL_S: {
      type: 'duration',
      unit: 's',
      default: 300,
      min: 1,
      process: SUBGRAPH,
      subject: 'tracking',
      description: `Lifetime of a signed download URL of the ${area} area.`,
    },
    RELAY_ALLOW_PRIVATE: {
      type: 'bool',
      default: false,
      process: SUBGRAPH,
      subject: 'tracking',
      description: `Relay ${area} callbacks to loopback, private and link-local addresses too (SSRF guard off): development and tests only.`,
    },
    POLL_INTERVAL_MS: {
      type: 'duration',
      unit: 'ms',
      default: 5000,
      min: 0,
      process: SUBGRAPH,
      subject: 'tracking',
      description: `Pause between rounds of the ${area} poller (at least 10 ms).`,
    },
    POLL_LATE_AFTER_MS: {
      type: 'duration',
      unit: 'ms',
      default: 60_000,
      min: 0,
      process: SUBGRAPH,
      subject: 'tracking',
      description: `A ${area} callback later than this is polled for.`,
    },
    POLL_MAX_CALLS_PER_MIN: { type: 'number', default: 60, min: 0, process: SUBGRAPH, subject: 'tracking', description: `Upstream reads the ${area} poller may make per minute.` },
    MONITOR_POLL_MS: { type: 'duration', unit: 'ms', default: DAY_MS, min: 0, process: SUBGRAPH, subject: 'tracking', description: `Slow poll of the ${area} area's monitors.` },
    POLL_MAX_AGE_MS: {
      type: 'duration',
      unit: 'ms',
      default: 7 * DAY_MS,
      min: 0,
      process: SUBGRAPH,
      subject: 'tracking',
      description: `The ${area} poller gives up on work older than this.`,
    },
    POLL_MAX_BACKOFF_MS: {
      type: 'duration',
      unit: 'ms',
      default: null,
      defaultText: `${settingPrefix(area)}MONITOR_POLL_MS`,
      min: 0,
      process: SUBGRAPH,
      subject: 'tracking',
      description: `Longest back-off of the ${area} poller after failed reads.`,
    },
  }) as const satisfies Record<string, SettingSpec>;

const pdf = (area: string) =>
  ({
    MAX_PDF_BYTES: {
      type: 'bytes',
      default: 5 * 1024 * 1024,
      min: 1,
      process: SUBGRAPH,
      subject: 'tracking',
      description: `Largest PDF (decoded bytes) a ${area} upload may carry.`,
    },
  }) as const satisfies Record<string, SettingSpec>;

const upstreamUrl = (area: string) =>
  ({
    URL: {
      type: 'url',
      default: null,
      defaultText: `the emulator's /${area}, else the vendor's host`,
      process: SUBGRAPH,
      subject: 'upstream',
      description: `Base URL of the ${area} area of the REST suite (a proxy, a mock).`,
    },
  }) as const satisfies Record<string, SettingSpec>;

const subgraphUrl = (name: string) =>
  ({
    URL: {
      type: 'url',
      default: null,
      process: GATEWAY,
      subject: 'gateway',
      description: `The ${name} subgraph's GraphQL URL, <origin>/${name}/graphql or just <origin> (\`npm run gateway\`: required for every subgraph of the supergraph).`,
    },
  }) as const satisfies Record<string, SettingSpec>;

/** The schema: every setting, by its environment variable's name. */
export const SETTINGS_SCHEMA = {
  // Processes, logs and traces
  NODE_ENV: { type: 'string', default: null, process: ALL, subject: 'process', description: '`test` (set by test runners) makes `error` the default log level.' },
  LOG_LEVEL: {
    type: 'enum',
    values: LOG_LEVELS,
    aliases: LOG_ALIASES,
    default: null,
    defaultText: '`info` (`error` when NODE_ENV=test)',
    process: ALL,
    subject: 'process',
    description: 'Level of the JSON log lines (`off`, also `silent`, `none`, `false`, `0`: none).',
  },
  GATEWAY_LOG_LEVEL: {
    type: 'enum',
    values: LOG_LEVELS,
    aliases: LOG_ALIASES,
    default: null,
    process: ALL,
    subject: 'process',
    description: 'Older name of LOG_LEVEL, read when LOG_LEVEL is unset.',
  },
  SHUTDOWN_TIMEOUT_MS: {
    type: 'duration',
    unit: 'ms',
    default: 75_000,
    min: 0,
    process: ALL,
    subject: 'process',
    description: 'Bound of a graceful shutdown on SIGTERM/SIGINT: requests in flight are answered, then the process exits (1 when cut short).',
  },
  OTEL_EXPORTER_OTLP_ENDPOINT: {
    type: 'url',
    default: null,
    process: LAYER,
    subject: 'process',
    description: 'OpenTelemetry collector: traces go to `<it>/v1/traces` over OTLP/HTTP. Unset: no traces.',
  },
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: {
    type: 'url',
    default: null,
    process: LAYER,
    subject: 'process',
    description: 'Full URL of the OTLP/HTTP traces endpoint (wins over OTEL_EXPORTER_OTLP_ENDPOINT).',
  },
  OTEL_SERVICE_NAME: { type: 'string', default: null, defaultText: '`openapi-supergraph`', process: LAYER, subject: 'process', description: 'Service name on the traces.' },

  // HTTP: ports, URLs, limits
  PORT: { type: 'int', default: 4000, min: 0, max: 65_535, process: GATEWAY, subject: 'http', description: "The gateway's port (0: any free port)." },
  HOST: { type: 'string', default: '127.0.0.1', process: GATEWAY, subject: 'http', description: 'The address the gateway listens on (`0.0.0.0` in the Docker image).' },
  SUBGRAPH_PORT: { type: 'int', default: 4001, min: 0, max: 65_535, process: SUBGRAPH, subject: 'http', description: "`npm run subgraph`: the subgraphs' port." },
  SUBGRAPH_HOST: { type: 'string', default: '127.0.0.1', process: SUBGRAPH, subject: 'http', description: "`npm run subgraph`: the subgraphs' address." },
  PUBLIC_URL: {
    type: 'url',
    default: null,
    defaultText: "the gateway's own URL",
    process: SUBGRAPH,
    subject: 'http',
    description: "The gateway's public URL, in callback and download URLs (required when a subgraph runs as its own service).",
  },
  MAX_BODY_BYTES: {
    type: 'bytes',
    default: 1024 * 1024,
    min: 1,
    process: LAYER,
    subject: 'http',
    description: "Largest GraphQL request body, without its files' contents (subgraphs allow four times this).",
  },
  MAX_UPLOAD_BYTES: {
    type: 'bytes',
    default: 14 * 1024 * 1024,
    min: 0,
    process: LAYER,
    subject: 'http',
    description: 'Bytes of file contents (base64 PDFs) a request may carry on top (0: none).',
  },
  MAX_JSON_DEPTH: { type: 'int', default: 32, min: 1, process: LAYER, subject: 'http', description: "Deepest nesting of a request's JSON." },
  MAX_JSON_VALUES: { type: 'int', default: 10_000, min: 1, process: LAYER, subject: 'http', description: "Values in a request's JSON (subgraphs allow ten times this)." },

  // State
  STORE: {
    type: 'enum',
    values: ['memory', 'sqlite', 'redis'],
    default: null,
    defaultText: '`redis` with REDIS_URL, else `sqlite`',
    process: LAYER,
    subject: 'state',
    description:
      "Where the state the layer must not forget lives: `memory` (one process, lost on restart), `sqlite` (the embedded store under DATA_DIR), `redis`. A stack given its own env without REDIS_URL or DATA_DIR takes the process's (tests run on memory).",
  },
  REDIS_URL: {
    type: 'secret',
    schemes: ['redis', 'rediss'],
    default: null,
    process: LAYER,
    subject: 'state',
    description: 'Redis shared by every replica (`redis://[user:password@]host:port`); its password is a secret. Needs LAYER_SECRET.',
  },
  REDIS_PREFIX: {
    type: 'string',
    default: null,
    defaultText: '`openapi-supergraph:`',
    process: LAYER,
    subject: 'state',
    description: 'Prefix of every key and channel on Redis (several deployments on one server).',
  },
  DATA_DIR: {
    type: 'string',
    default: null,
    defaultText: '`.data` under the working directory',
    process: LAYER,
    subject: 'state',
    description: "The embedded store's directory (`layer.db`, `layer-secret`).",
  },
  LAYER_SECRET: {
    type: 'secret',
    minLength: 16,
    default: null,
    defaultText: 'kept in DATA_DIR, else random per process',
    process: LAYER,
    subject: 'state',
    description: 'Signs callback and download URLs and seals tokens kept in stores: the same in every process (required with REDIS_URL and for separate subgraph services).',
  },

  // Upstream
  OPENAPI_ENV: {
    type: 'enum',
    values: ['emulator', 'sandbox', 'production'],
    default: 'emulator',
    process: ALL,
    subject: 'upstream',
    description: "Which REST suite: the embedded emulator, the vendor's sandbox (`test.` hosts) or production.",
  },
  OPENAPI_EMULATOR_URL: {
    type: 'url',
    default: null,
    process: LAYER,
    subject: 'upstream',
    description: 'An emulator running apart (`npm run emulator`) instead of the embedded one.',
  },
  ...perArea('OPENAPI_', AREAS, upstreamUrl),
  OPENAPI_TOKEN: {
    type: 'secret',
    default: null,
    process: LAYER,
    subject: 'upstream',
    description: "Service token for every caller; unset: the caller's `Authorization: Bearer` is passed through (or the managed token).",
  },
  OPENAPI_EMAIL: {
    type: 'string',
    default: null,
    process: LAYER,
    subject: 'upstream',
    description: "The account's e-mail (HTTP Basic on the authorization area, with OPENAPI_APIKEY).",
  },
  OPENAPI_APIKEY: { type: 'secret', default: null, process: LAYER, subject: 'upstream', description: "The account's API key." },
  OPENAPI_API_KEY: {
    type: 'secret',
    default: null,
    process: ALL,
    subject: 'upstream',
    description: 'Not read as a credential (the name is OPENAPI_APIKEY): only kept out of every log line if set.',
  },
  OPENAPI_MANAGED_TOKEN: {
    type: 'bool',
    default: true,
    process: LAYER,
    subject: 'upstream',
    description: 'With OPENAPI_EMAIL and OPENAPI_APIKEY and no OPENAPI_TOKEN, the layer mints its own service token and renews it; `off`: pass-through.',
  },
  OPENAPI_MANAGED_TOKEN_TTL_S: {
    type: 'duration',
    unit: 's',
    default: null,
    defaultText: '2592000 (30 days)',
    min: 1,
    process: SUBGRAPH,
    subject: 'upstream',
    description: 'Lifetime asked for each managed token (renewed a tenth before).',
  },
  OPENAPI_PRECHECK: {
    type: 'bool',
    default: false,
    process: SUBGRAPH,
    subject: 'upstream',
    description: "Scope and wallet pre-checks before each paid or scoped call (needs the account's credentials).",
  },
  OPENAPI_TIMEOUT_MS: {
    type: 'duration',
    unit: 'ms',
    default: 0,
    min: 0,
    process: SUBGRAPH,
    subject: 'upstream',
    description: "One timeout for every endpoint (0: each endpoint's own). Never cuts a slow dataset's GET short.",
  },
  OPENAPI_SETTLE_LATE_MS: {
    type: 'duration',
    unit: 'ms',
    default: 60_000,
    min: 0,
    process: SUBGRAPH,
    subject: 'upstream',
    description: 'Settlement of money at risk: how long after the layer gave up on a paid call the service may still carry it out and charge it.',
  },
  OPENAPI_SETTLE_EVERY_MS: {
    type: 'duration',
    unit: 'ms',
    default: 30_000,
    min: 0,
    process: SUBGRAPH,
    subject: 'upstream',
    description: 'How often the settler reads the wallet history in the background (0: on demand only, `settleCosts`).',
  },
  OPENAPI_MAX_RETRIES: { type: 'int', default: 2, min: 0, process: SUBGRAPH, subject: 'upstream', description: 'Retries of idempotent GETs after the first attempt.' },
  OPENAPI_RETRY_BASE_MS: { type: 'duration', unit: 'ms', default: 150, min: 0, process: SUBGRAPH, subject: 'upstream', description: 'First back-off between retries (doubles).' },
  OPENAPI_MAX_RETRY_AFTER_S: {
    type: 'duration',
    unit: 's',
    default: 5,
    min: 0,
    process: SUBGRAPH,
    subject: 'upstream',
    description: 'A longer `Retry-After` is not waited for: the error goes to the client.',
  },
  OPENAPI_SLOW_BUDGET_MS: {
    type: 'duration',
    unit: 'ms',
    default: 60_000,
    min: 0,
    process: SUBGRAPH,
    subject: 'upstream',
    description: 'How long the 302 → IT-check_id flow may poll before giving up.',
  },
  OPENAPI_POLL_MIN_MS: { type: 'duration', unit: 'ms', default: 200, min: 0, process: SUBGRAPH, subject: 'upstream', description: 'Shortest wait between IT-check_id polls.' },
  OPENAPI_POLL_MAX_MS: { type: 'duration', unit: 'ms', default: 5000, min: 0, process: SUBGRAPH, subject: 'upstream', description: 'Longest wait between IT-check_id polls.' },
  OPENAPI_CACHE_MAX_ENTRIES: { type: 'int', default: 10_000, min: 0, process: SUBGRAPH, subject: 'upstream', description: "Entries of the upstream answers' in-memory cache." },
  OPENAPI_NOT_FOUND_TTL_S: {
    type: 'duration',
    unit: 's',
    default: 600,
    min: 0,
    process: SUBGRAPH,
    subject: 'upstream',
    description: 'How long a "not found" answer is remembered per tenant (0: off).',
  },
  OPENAPI_MAX_STALE_S: {
    type: 'duration',
    unit: 's',
    default: 86_400,
    min: 0,
    process: SUBGRAPH,
    subject: 'upstream',
    description: 'How long an expired cache entry may answer when the upstream fails (0: off).',
  },
  OPENAPI_RATE_LIMITS: {
    type: 'string',
    default: null,
    process: SUBGRAPH,
    subject: 'upstream',
    description: 'Changes to the built-in request rates: JSON, inline or a file path (`subgraphs/upstream/rate-limits.ts`).',
  },
  OPENAPI_RATE_MAX_WAIT_MS: {
    type: 'duration',
    unit: 'ms',
    default: 5000,
    min: 0,
    process: SUBGRAPH,
    subject: 'upstream',
    description: 'The longest a call queues for its rate; past it: RATE_LIMITED, nothing sent.',
  },
  RISK_BUREAU_PATH: {
    type: 'string',
    default: null,
    process: SUBGRAPH,
    subject: 'upstream',
    description: "The person bureau's path when the upstream serves it under another name (`/IT-crif-persona`).",
  },

  // Cost and budgets
  OPENAPI_PRICES: { type: 'string', default: null, process: ALL, subject: 'budget', description: 'A JSON file of price overrides (`"<area> <METHOD> <endpoint>": euro`).' },
  OPENAPI_PRICE_PLAN: { type: 'enum', values: ['payg', 'subscription'], default: 'payg', process: ALL, subject: 'budget', description: "The account's price plan." },
  OPENAPI_MAX_EURO_PER_OPERATION: { type: 'number', default: 50, min: 0, process: LAYER, subject: 'budget', description: 'Euro one operation may spend upstream (0: no limit).' },
  OPENAPI_MAX_EURO_PER_DAY: {
    type: 'number',
    default: 0,
    min: 0,
    process: SUBGRAPH,
    subject: 'budget',
    description: 'Euro one tenant may spend per calendar day, Italian time (0: no limit).',
  },
  OPENAPI_ESTIMATE_LIST_SIZE: {
    type: 'number',
    default: 5,
    min: 0,
    process: LAYER,
    subject: 'budget',
    description: 'Items the estimate assumes for a list without a documented limit (at least 1).',
  },

  // Gateway
  ...perArea('SUBGRAPH_', SUBGRAPH_URL_NAMES, subgraphUrl),
  CORS_ORIGINS: { type: 'string', default: null, process: GATEWAY, subject: 'gateway', description: 'Comma-separated browser origins allowed cross-origin; none by default.' },
  PERSISTED_OPERATIONS: {
    type: 'enum',
    values: ['apq', 'trusted', 'off'],
    default: 'apq',
    process: GATEWAY,
    subject: 'gateway',
    description: 'Persisted operations: automatic (`apq`), only those of PERSISTED_OPERATIONS_MANIFEST (`trusted`), or `off`.',
  },
  PERSISTED_OPERATIONS_MANIFEST: {
    type: 'string',
    default: null,
    process: GATEWAY,
    subject: 'gateway',
    description: 'Path of the manifest of allowed operations (JSON, hash → document).',
  },
  GATEWAY_COMPRESSION: { type: 'bool', default: true, process: GATEWAY, subject: 'gateway', description: '`off`: answers go out uncompressed (behind a proxy that compresses).' },
  GATEWAY_RESPONSE_CACHE: { type: 'bool', default: true, process: GATEWAY, subject: 'gateway', description: 'Whole answers cached per tenant; `off` turns it off.' },
  GATEWAY_RESPONSE_CACHE_MAX_ENTRIES: {
    type: 'int',
    default: null,
    defaultText: '10000',
    min: 1,
    process: GATEWAY,
    subject: 'gateway',
    description: 'Answers the response cache keeps in memory.',
  },
  GATEWAY_SERVICE_TOKEN: {
    type: 'bool',
    default: false,
    process: GATEWAY,
    subject: 'gateway',
    description: "A gateway deployed apart from subgraphs that use a service token: every change drops every caller's cached answers.",
  },

  // Asynchronous work
  ...perArea('', TRACKED_AREAS, tracking),
  ...perArea('', PDF_AREAS, pdf),

  // Company
  COMPANY_SLOW_PURCHASE: {
    type: 'enum',
    values: ['get', 'callback'],
    aliases: { poll: 'get' },
    default: 'get',
    process: SUBGRAPH,
    subject: 'company',
    description: 'How a slow dataset is bought: a GET polled with IT-check_id (`get`; `poll` is its older name), or a POST with a callback.',
  },
  COMPANY_SLOW_CALLBACK_WAIT_MS: {
    type: 'duration',
    unit: 'ms',
    default: 30_000,
    min: 0,
    max: 3_600_000 - 1,
    process: SUBGRAPH,
    subject: 'company',
    description: 'How long a slow purchase awaits its callback before polling.',
  },

  // PEC
  PEC_PATHS: {
    type: 'string',
    default: null,
    process: SUBGRAPH,
    subject: 'pec',
    description: 'JSON of PEC endpoint paths that differ from the contract (`{"activate": "/pec/{id}/attivazione"}`).',
  },
  PEC_BOX_TYPE_WORDS: {
    type: 'enum',
    values: ['contract', 'vendor'],
    default: 'contract',
    process: SUBGRAPH,
    subject: 'pec',
    description: "Box types sent as the contract spells them or as the vendor's spec does (`PECMASSIVA`).",
  },
  PEC_PROVIDER_DOMAINS: { type: 'string', default: null, process: SUBGRAPH, subject: 'pec', description: "JSON of the provider's domains per box family, over the built-in ones." },
  PECMASSIVA_BATCH_SIZE: { type: 'int', default: 50, min: 1, process: SUBGRAPH, subject: 'pec', description: 'Recipients per bulk sending request.' },
  PECMASSIVA_SEND_INTERVAL_MS: { type: 'duration', unit: 'ms', default: 1050, min: 1, process: SUBGRAPH, subject: 'pec', description: 'Pause between bulk sending requests.' },
  PECMASSIVA_INBOX_POLL_MS: {
    type: 'duration',
    unit: 'ms',
    default: 30_000,
    min: 1,
    process: SUBGRAPH,
    subject: 'pec',
    description: 'Pause between reads of a bulk mailbox inbox.',
  },
  PECMASSIVA_LEASE_MS: { type: 'duration', unit: 'ms', default: 30_000, min: 1, process: SUBGRAPH, subject: 'pec', description: "A replica's lease on a bulk sending." },
  PECMASSIVA_POLL_MS: { type: 'duration', unit: 'ms', default: 2000, min: 1, process: SUBGRAPH, subject: 'pec', description: "Pause between reads of a bulk sending's status." },
  PECMASSIVA_POLL_MAX_CALLS_PER_MIN: { type: 'number', default: 60, min: 1, process: SUBGRAPH, subject: 'pec', description: 'Status reads per minute.' },
  PECMASSIVA_POLL_MAX_BACKOFF_MS: {
    type: 'duration',
    unit: 'ms',
    default: 600_000,
    min: 1,
    process: SUBGRAPH,
    subject: 'pec',
    description: 'Longest back-off between status reads (at least PECMASSIVA_POLL_MS).',
  },
  PECMASSIVA_GIVE_UP_MS: {
    type: 'duration',
    unit: 'ms',
    default: 48 * 3600 * SECOND_MS,
    min: 1,
    process: SUBGRAPH,
    subject: 'pec',
    description: 'A bulk sending still unsettled after this is given up.',
  },

  // Account
  OPENAPI_ACCOUNT_API: {
    type: 'bool',
    default: true,
    process: SUBGRAPH,
    subject: 'account',
    description: 'The account API (wallet, tokens, scopes) on GraphQL; `off` removes its answers.',
  },
  OPENAPI_ACCOUNT_API_KEY: {
    type: 'secret',
    minLength: 16,
    default: null,
    process: SUBGRAPH,
    subject: 'account',
    description: 'The key callers send in `x-openapi-account-key` to use the account API.',
  },

  // Emulator
  EMULATOR_PORT: {
    type: 'int',
    default: null,
    defaultText: '4010 (`npm run emulator`), any free port (embedded)',
    min: 0,
    max: 65_535,
    process: EMULATOR,
    subject: 'emulator',
    description: "The emulator's port.",
  },
  EMULATOR_HOST: { type: 'string', default: '127.0.0.1', process: EMULATOR, subject: 'emulator', description: "The emulator's address." },
  EMULATOR_TOKEN: {
    type: 'secret',
    default: 'emulator-token',
    process: ALL,
    subject: 'emulator',
    description: "The emulator's built-in token (the layer's fallback token with the emulator: the same value in both).",
  },
  EMULATOR_EMAIL: { type: 'string', default: 'emulator@example.com', process: ALL, subject: 'emulator', description: "The emulator's built-in account's e-mail." },
  EMULATOR_APIKEY: { type: 'secret', default: 'emulator-apikey', process: ALL, subject: 'emulator', description: "The emulator's built-in account's API key." },
  EMULATOR_MAX_TOKENS: {
    type: 'int',
    default: 10_000,
    min: 1,
    process: EMULATOR,
    subject: 'emulator',
    description: 'Tokens the emulator keeps besides the built-in one (least recently used go first).',
  },
  EMULATOR_RISK_COMPLETE_AFTER_MS: {
    type: 'duration',
    unit: 'ms',
    default: null,
    defaultText: '1500 (`npm start`: 30000)',
    min: 0,
    process: EMULATOR,
    subject: 'emulator',
    description: "How long the emulator's risk requests take to complete (0: only the control API completes them).",
  },
  EMULATOR_COMPANY_PREPARE_MS: {
    type: 'duration',
    unit: 'ms',
    default: 0,
    min: 0,
    process: EMULATOR,
    subject: 'emulator',
    description: 'How long a slow company dataset takes to prepare.',
  },
  EMULATOR_COMPANY_GET_WAIT_MS: {
    type: 'duration',
    unit: 'ms',
    default: 30_000,
    min: 0,
    process: EMULATOR,
    subject: 'emulator',
    description: "How long the emulator holds a slow dataset's GET before its 302 (the vendor's 30 s).",
  },
} as const satisfies Record<string, SettingSpec>;

export type SettingName = keyof typeof SETTINGS_SCHEMA;

/** Every setting, parsed and typed; frozen. */
export type Settings = { readonly [K in SettingName]: SettingValue<(typeof SETTINGS_SCHEMA)[K]> };

/** What a process is configured from: variables as written, or settings already parsed. */
export type SettingsSource = Settings | Readonly<Record<string, string | undefined>>;

/** A setting with a bad value; its message is one line: the setting, the value (not a secret's), what is expected. */
export class SettingsError extends Error {
  override name = 'SettingsError';
  constructor(
    message: string,
    /** The setting named, when one is. */
    readonly setting?: string,
  ) {
    super(message);
  }
}

const schema: Readonly<Record<string, SettingSpec>> = SETTINGS_SCHEMA;
const parsed = new WeakSet<object>();

const TRUE = ['1', 'true', 'yes', 'on'];
const FALSE = ['0', 'false', 'no', 'off'];

/** A list as a sentence: `a, b or c`. */
const orList = (values: readonly string[]): string => (values.length <= 1 ? values.join('') : `${values.slice(0, -1).join(', ')} or ${values.at(-1)}`);

/** What a spec expects, in words (error lines and the reference). */
export function expectation(spec: SettingSpec): string {
  switch (spec.type) {
    case 'bool':
      return 'on or off (also 1/0, true/false, yes/no)';
    case 'enum':
      return orList(spec.values);
    case 'url':
      return `an ${(spec.schemes ?? ['http', 'https']).join('/')} URL`;
    case 'secret':
      return spec.schemes ? `a ${spec.schemes.join('/')} URL` : spec.minLength ? `a secret of at least ${spec.minLength} characters` : 'a secret';
    case 'string':
      return 'text';
    default: {
      const what =
        spec.type === 'int'
          ? 'a whole number'
          : spec.type === 'number'
            ? 'a number'
            : spec.type === 'bytes'
              ? 'a whole number of bytes'
              : `a whole number of ${spec.unit === 's' ? 'seconds' : 'milliseconds'}`;
      if (spec.min !== undefined && spec.max !== undefined) return `${what} from ${spec.min} to ${spec.max}`;
      if (spec.min !== undefined) return `${what} ≥ ${spec.min}`;
      return spec.max !== undefined ? `${what} ≤ ${spec.max}` : what;
    }
  }
}

/** One setting's value from its text (trimmed; empty means unset); throws `SettingsError`. */
export function parseSetting(name: string, spec: SettingSpec, raw: string | undefined): unknown {
  const text = raw?.trim() ?? '';
  if (text === '') return spec.default;
  const bad = (): never => {
    const shown = spec.type === 'secret' ? '' : `=${JSON.stringify(text.length > 80 ? `${text.slice(0, 80)}…` : text)}`;
    throw new SettingsError(`Invalid setting ${name}${shown}: expected ${expectation(spec)}`, name);
  };
  switch (spec.type) {
    case 'bool': {
      const v = text.toLowerCase();
      if (TRUE.includes(v)) return true;
      if (FALSE.includes(v)) return false;
      return bad();
    }
    case 'enum': {
      const v = text.toLowerCase();
      const value = spec.aliases?.[v] ?? v;
      return spec.values.includes(value) ? value : bad();
    }
    case 'string':
      return text;
    case 'url':
    case 'secret': {
      const schemes = spec.type === 'url' ? (spec.schemes ?? ['http', 'https']) : spec.schemes;
      if (schemes && !(URL.canParse(text) && schemes.includes(new URL(text).protocol.slice(0, -1)))) return bad();
      if (spec.type === 'secret' && spec.minLength !== undefined && text.length < spec.minLength) return bad();
      return text;
    }
    default: {
      const n = Number(text);
      const whole = spec.type !== 'number';
      if (!Number.isFinite(n) || (whole && !Number.isSafeInteger(n))) return bad();
      if ((spec.min !== undefined && n < spec.min) || (spec.max !== undefined && n > spec.max)) return bad();
      return n;
    }
  }
}

/**
 * Parses every setting of `env` (throws `SettingsError` on the first bad one) into a frozen object.
 * `STORE` alone falls back to the process's when `env` is not the process's and names neither
 * `REDIS_URL` nor `DATA_DIR` (a test run chooses memory once for every stack it builds).
 */
export function loadSettings(env: Readonly<Record<string, string | undefined>> = process.env): Settings {
  const out: Record<string, unknown> = {};
  for (const [name, spec] of Object.entries(schema)) out[name] = parseSetting(name, spec, env[name]);
  if (env !== process.env && out.STORE === null && !env.REDIS_URL?.trim() && !env.DATA_DIR?.trim()) {
    out.STORE = parseSetting('STORE', schema.STORE, process.env.STORE);
  }
  const settings = Object.freeze(out) as Settings;
  parsed.add(settings);
  return settings;
}

/** True when `source` is settings parsed by `loadSettings`. */
export const isSettings = (source: unknown): source is Settings => typeof source === 'object' && source !== null && parsed.has(source);

/**
 * The settings of a source: itself when already parsed (a process parses once, at start, and hands
 * the result down), else `loadSettings` of it; of the process's environment when none is given.
 */
export function settingsOf(source?: SettingsSource): Settings {
  if (source === undefined) return loadSettings();
  return isSettings(source) ? source : loadSettings(source);
}

/** The value of an area's setting named `<AREA>_<suffix>`. */
export type AreaSettingValue<S extends string> = Settings[Extract<`${Uppercase<(typeof TRACKED_AREAS)[number]>}_${S}`, SettingName>];

/** One setting of an area by its suffix (`areaSetting(s, 'risk', 'POLL_INTERVAL_MS')` is `s.RISK_POLL_INTERVAL_MS`). */
export function areaSetting<S extends string>(settings: Settings, area: string, suffix: S): AreaSettingValue<S> {
  const name = settingPrefix(area) + suffix;
  if (!(name in schema)) throw new Error(`no setting ${name} in the schema (platform/settings.ts)`);
  return (settings as Readonly<Record<string, unknown>>)[name] as AreaSettingValue<S>;
}

/** The names of the settings marked secret. */
export const SECRET_SETTINGS: readonly SettingName[] = (Object.keys(schema) as SettingName[]).filter((n) => schema[n].type === 'secret');

/** The values of the settings marked secret (for redaction), as set; of a URL, its password. */
export function secretValues(settings: Partial<Record<SettingName, unknown>>): string[] {
  const out: string[] = [];
  for (const name of SECRET_SETTINGS) {
    const spec = schema[name];
    const v = settings[name];
    if (spec.type !== 'secret' || typeof v !== 'string' || v === spec.default) continue;
    if (spec.schemes) {
      // A URL: its password only (redis://user:password@host).
      const password = URL.canParse(v) ? decodeURIComponent(new URL(v).password) : '';
      if (password.length >= 4) out.push(password);
    } else out.push(v);
  }
  return out;
}

/**
 * One setting of the process's environment, null when unset or bad: for what a module must know
 * before any start parses the settings (the log level, the secrets to redact). A start refuses a
 * bad value (`loadSettings`); this never throws.
 */
export function processSetting<K extends SettingName>(name: K): Settings[K] | null {
  try {
    return parseSetting(name, schema[name], process.env[name]) as Settings[K];
  } catch {
    return null;
  }
}

/** `secretValues` of the process's environment (read leniently, as `processSetting`). */
export const processSecretValues = (): string[] => secretValues(Object.fromEntries(SECRET_SETTINGS.map((n) => [n, processSetting(n)])));

/**
 * A process's settings at its start: `loadSettings()`, or, on a bad value, its one line on stderr
 * and exit code 1 (no stack trace).
 */
export function settingsOrExit(processName: string): Settings {
  try {
    return loadSettings();
  } catch (err) {
    if (!(err instanceof SettingsError)) throw err;
    process.stderr.write(`[${processName}] ${err.message}\n`);
    process.exit(1);
  }
}
