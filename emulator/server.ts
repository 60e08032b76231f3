/**
 * The emulator's HTTP server: one `node:http` server, each area under a path prefix
 * (`http://127.0.0.1:PORT/<area>/…`, e.g. `/company/IT-start/12485671007`), and a control API under
 * `/_emulator/` (no auth).
 *
 * For every area call, in this order: latency of the area → injected fault (if one matches) →
 * route match (404/405) → bearer token and scope (401 "Wrong Token", error 125) → body parsing
 * (400 on bad JSON or JSON past its bounds, 413 above 20 MB) → free tier (the contract's, per account on the emulator's
 * clock: a call inside it is not charged, `free-tiers.ts`) → wallet check (402, error 610; 611 for
 * the GET of the slow company datasets, as the vendor spec shows) → handler → charge → (a fault's `delayAfterMs`) →
 * answer → call log.
 *
 * Accounts (`accounts.ts`): every token belongs to an account (its `owner` e-mail) and spends
 * from the account's one wallet; every authorised call is noted in the account's usage, and every
 * error answer in its error log (the authorization area shows both). Routes with `auth: 'basic'`
 * (the authorization area) authenticate with the account's e-mail and API key instead of a token
 * (401 error 140), a `basic-or-refresh` route also with a token's refresh token (401 error 130).
 * The built-in account is `EMULATOR_EMAIL` / `EMULATOR_APIKEY` (`emulator@example.com` /
 * `emulator-apikey`), owner of the built-in token. A call an active subscription of the account
 * covers uses one of its requests instead of the wallet.
 *
 * Scopes are checked in the vendor form `METHOD:test.<host><scopePath>` (the emulator behaves as the
 * sandbox), where `scopePath` is `Route.scopePath` or `/` + the first path segment; a token scope
 * matches by method (`*` for any), host (`*` wildcards) and path (`*` wildcards, or a prefix ending
 * at a segment boundary).
 *
 * Control API:
 * - `GET /_emulator/calls[?area=]`, `DELETE /_emulator/calls`
 * - `GET /_emulator/sandbox-companies`
 * - `POST /_emulator/tokens {scopes?, credit?, owner?, token?}` → `{token, scopes, credit, owner}`
 *   (a new owner is a new account with `credit` in its wallet; an existing one's wallet is set to it);
 *   `GET /_emulator/tokens/<token>` → the same (remaining credit)
 * - `POST /_emulator/latency {area, ms}`, `GET /_emulator/latency`
 * - `POST /_emulator/faults {area, pathPrefix?, status?, retryAfter?, hangMs?, delayAfterMs?, reset?, count?}`,
 *   `GET /_emulator/faults`, `DELETE /_emulator/faults`. `status` answers instead of the handler
 *   (after `hangMs`); `delayAfterMs` lets the handler run (its records, charges and timers happen)
 *   and sends its answer that much later: a client that gives up meanwhile never learns what was
 *   created and paid for ("created upstream, answer lost"); `reset: true` lets the handler run and
 *   charge, then resets the connection instead of answering.
 * - `GET /_emulator/inflight` → `{count}`: area calls still being handled (a test waits for 0
 *   instead of sleeping past a hang or a late answer)
 * - `POST /_emulator/callbacks {enabled?, backoffMs?}`, `GET /_emulator/callbacks` (delivery log),
 *   `DELETE /_emulator/callbacks` (clears the log)
 * - `GET /_emulator/clock` → `{mode, now, nowMs, pending, jobs}`: the emulator's clock (ISO and epoch
 *   ms), how many jobs wait on it and the first 100 of them (`{id, at, label}`, earliest first).
 *   `POST /_emulator/clock {mode?, advanceMs?}` → the same plus `ran`: `mode` `manual` stops the
 *   clock (nothing fires by itself any more: risk completions, company slow datasets and callback
 *   requests wait), `real` lets it run on from where it stands; `advanceMs` moves it forward (in
 *   either mode), running every job that falls due on the way at its own time, and answers once
 *   the callbacks they deliver are done. Every area's asynchronous work is a job on this one
 *   scheduler (`scheduler.ts`), and record times (timestamps, dates, expiries) read this clock;
 *   area latency, fault hangs and late answers, callback back-off and the call log stay on real
 *   time (they emulate the wire, not the upstream's work). The area hooks keep their meaning: `risk/advance` completes now whatever the clock says,
 *   `risk/timing` changes the delay, `company/advance {ms}` moves this clock (without waiting for
 *   callbacks), `company/complete` completes now.
 * - `POST /_emulator/<area>/<name>` → the area module's control hook
 * - `GET /healthz` (liveness) and `GET /readyz` (readiness: 200, 503 once a drain has begun)
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { LRUCache } from 'lru-cache';
import { AREA_HOSTS, fail, hexId, sandboxHost, type Area, type AreaModule, type EmuRequest, type EmuResponse, type EmuServices, type EmuToken, type Route } from './core.ts';
import { callbackSettings } from './callbacks.ts';
import { Scheduler, type ClockMode } from './scheduler.ts';
import { priceOf } from '../contract/prices.ts';
import { scopeAllows } from '../contract/scopes.ts';
import { isObj } from '../contract/values.ts';
import { JsonLimitError, readBoundedBody, type JsonLimits } from '../platform/json-limits.ts';
import { FreeTierCounters } from './free-tiers.ts';
import { SETTINGS_SCHEMA } from '../platform/settings.ts';
import { Accounts, type EmuAccount } from './accounts.ts';

/** The built-in token, unless `EmulatorOptions.settings` gives another (`EMULATOR_TOKEN`). */
export const DEFAULT_TOKEN: string = SETTINGS_SCHEMA.EMULATOR_TOKEN.default;
/** The built-in account's e-mail and API key (HTTP Basic on the authorization area), unless `EmulatorOptions.settings` gives others (`EMULATOR_EMAIL`, `EMULATOR_APIKEY`). */
export const DEFAULT_EMAIL: string = SETTINGS_SCHEMA.EMULATOR_EMAIL.default;
export const DEFAULT_APIKEY: string = SETTINGS_SCHEMA.EMULATOR_APIKEY.default;
/** What the emulator takes from the settings (`EMULATOR_TOKEN`, `EMULATOR_EMAIL`, `EMULATOR_APIKEY`, `EMULATOR_MAX_TOKENS`, `EMULATOR_COMPANY_*`). */
export interface EmulatorSettings {
  token?: string;
  email?: string;
  apikey?: string;
  maxTokens?: number;
  companyPrepareMs?: number;
  companyGetWaitMs?: number;
}
/** Credit (euro) of the built-in token. */
export const DEFAULT_CREDIT = 1_000_000;
/**
 * Tokens kept at most besides the built-in one (`EMULATOR_MAX_TOKENS`): the least recently used go
 * first. @see EmulatorOptions.maxTokens
 */
export const DEFAULT_MAX_TOKENS: number = SETTINGS_SCHEMA.EMULATOR_MAX_TOKENS.default;
/** Credit (euro) of tokens created through the control API without a `credit`. */
export const CREATED_TOKEN_CREDIT = 100;
/** Error number of 401 "Wrong Token" (as OAuth v1 uses it; the service hosts' number is not published). */
export const WRONG_TOKEN_ERROR = 125;
/** Error number of 402 "Insufficient Credit in Wallet". */
export const CREDIT_ERROR = 610;
export const MAX_BODY_BYTES = 20 * 1024 * 1024;
/**
 * Bounds of a JSON body, counted as it is read (`platform/json-limits.ts`): 20 MiB in all, of which
 * at most 4 MiB outside file contents (long strings: the layer's base64 PDFs and XML), and values
 * and depth well above what the layer sends (a bulk sending's 5,000 recipients).
 */
const BODY_LIMITS: JsonLimits = { maxBytes: 4 * 1024 * 1024, maxUploadBytes: MAX_BODY_BYTES - 4 * 1024 * 1024, maxDepth: 64, maxValues: 100_000 };

export const AREAS = Object.keys(AREA_HOSTS) as Area[];
const isArea = (v: unknown): v is Area => typeof v === 'string' && (AREAS as string[]).includes(v);

/**
 * Scopes of the built-in token: every method and path of every area's sandbox host. Each token gets
 * its own array of the same strings, made once (built per token, they were ~0.7 KB of string pieces each).
 */
const ALL_AREA_SCOPES: readonly string[] = AREAS.map((a) => `*:${sandboxHost(a)}/*`);
export const allAreaScopes = (): string[] => [...ALL_AREA_SCOPES];

/** Endpoints whose 402 carries error 611 in the vendor spec (GET of the slow company datasets). */
const CREDIT_ERROR_611 = new Set(['company GET IT-full', 'company GET IT-aml', 'company GET IT-marketing', 'company GET IT-stakeholders']);

export interface CallRecord {
  method: string;
  /** Path inside the area (area prefix stripped), without the query. */
  path: string;
  query: string;
  area: Area | null;
  status: number;
  /** Euro charged to the token's wallet. */
  price: number;
  /** ISO timestamp of arrival. */
  at: string;
  ms: number;
  /** `…` and the last 4 characters of a bearer token of 12 characters or more; only `…` for a shorter one. */
  token: string | null;
}

export interface Fault {
  id: string;
  area: Area;
  pathPrefix?: string;
  status?: number;
  retryAfter?: number;
  hangMs?: number;
  /** The handler runs as usual; its answer is sent this many milliseconds later. */
  delayAfterMs?: number;
  /**
   * The handler runs as usual (and charges), then the connection is reset instead of answered:
   * "carried out upstream, answer lost".
   */
  reset?: boolean;
  /** Calls still to be hit. */
  remaining: number;
}

export interface EmulatorOptions {
  /** @default 0 (a free port) */
  port?: number;
  /** @default '127.0.0.1' */
  host?: string;
  /** Latency per area in milliseconds, applied before answering. */
  latencyMs?: Partial<Record<Area, number>>;
  /**
   * Area modules; by default company and risk (`modules.ts`), on the emulator's scheduler. Modules
   * built here must share one scheduler (`createRiskModule({ scheduler })`, …): the given one, or the
   * first module's.
   */
  modules?: AreaModule[];
  /** The one scheduler of every area's asynchronous work (its clock is the emulator's). @default a new one, real time */
  scheduler?: Scheduler;
  /**
   * Tokens kept at most besides the built-in one (control API and authorization area alike): the
   * least recently used is forgotten first, with what the authorization area knows of it and the
   * account made for it alone, and answers 401 "Wrong Token" afterwards, as an expired token does.
   * A caller minting a token per request cannot grow the emulator without end.
   * @default `settings.maxTokens` (EMULATOR_MAX_TOKENS), else 10000
   */
  maxTokens?: number;
  /**
   * The emulator's settings (`EMULATOR_*` of `platform/settings.ts`, given by whoever starts it:
   * `services/build.ts`); the emulator reads no environment. @default the schema's defaults
   */
  settings?: EmulatorSettings;
  /**
   * How long a risk request takes to complete, for the default modules (`createRiskModule({
   * completeAfterMs })`; given `modules` keep their own). @default DEFAULT_COMPLETE_AFTER_MS (1500)
   */
  riskCompleteAfterMs?: number;
}

export interface TokenInit {
  scopes?: string[];
  credit?: number;
  owner?: string;
  /** A chosen token value; random otherwise. */
  token?: string;
}

export interface EmulatorTokens {
  /** The built-in token (all areas, large credit). */
  readonly defaultToken: string;
  create(init?: TokenInit): EmuToken;
  get(token: string): EmuToken | undefined;
  /** Sets a token's remaining credit (its account's wallet); false when the token is unknown. */
  setCredit(token: string, credit: number): boolean;
}

export interface RunningEmulator {
  /** Origin, e.g. `http://127.0.0.1:54321`; areas live under `/<area>`. */
  url: string;
  port: number;
  tokens: EmulatorTokens;
  /** The accounts (e-mail, API key, wallet, usage, errors) behind the tokens. */
  accounts: Accounts;
  /** Calls received so far (optionally of one area). */
  calls(area?: Area): CallRecord[];
  /** The scheduler every area's asynchronous work runs on (its clock is the emulator's). */
  scheduler: Scheduler;
  close(): Promise<void>;
  /**
   * Graceful stop (SIGTERM), as the layer's services do: `/readyz` 503 at once, no new connection,
   * requests in flight answered and their keep-alive connections closed, bounded by `timeoutMs`
   * (`clean` false when cut short); then as `close`.
   */
  shutdown(timeoutMs: number): Promise<{ clean: boolean; requests: number }>;
}

// ---------------------------------------------------------------------------------------------
// Scopes

/** True when one of the scopes grants `METHOD:host<scopePath>` (the contract's reading of scopes). */
export { scopeAllows };

// ---------------------------------------------------------------------------------------------
// Routing

interface CompiledRoute {
  route: Route;
  segments: string[];
}

function compile(routes: Route[]): CompiledRoute[] {
  return routes.map((route) => ({ route, segments: route.pattern.split('/').filter(Boolean) }));
}

function decode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

function matchRoute(compiled: CompiledRoute[], method: string, path: string): { route: Route; params: Record<string, string> } | 'method' | null {
  const got = path.split('/').filter(Boolean);
  let methodMismatch = false;
  for (const c of compiled) {
    if (c.segments.length !== got.length) continue;
    const params: Record<string, string> = {};
    let okMatch = true;
    for (let i = 0; i < got.length; i++) {
      const want = c.segments[i];
      if (want.startsWith(':')) params[want.slice(1)] = decode(got[i]);
      else if (want !== got[i]) {
        okMatch = false;
        break;
      }
    }
    if (!okMatch) continue;
    if (c.route.method !== method) {
      methodMismatch = true;
      continue;
    }
    return { route: c.route, params };
  }
  return methodMismatch ? 'method' : null;
}

// ---------------------------------------------------------------------------------------------
// HTTP helpers

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** The body, refused (`JsonLimitError`) past `BODY_LIMITS`; JSON (or untyped) bodies are scanned as they arrive. */
async function readBody(req: IncomingMessage): Promise<Buffer> {
  const type = (req.headers['content-type'] ?? '').toLowerCase();
  return readBoundedBody(req, BODY_LIMITS, { json: type === '' || type.includes('json') });
}

class BadJson extends Error {}

function parseBody(raw: Buffer, contentType: string | undefined): unknown {
  if (raw.length === 0) return undefined;
  const type = (contentType ?? '').toLowerCase();
  const text = raw.toString('utf8');
  if (type.includes('application/x-www-form-urlencoded')) return Object.fromEntries(new URLSearchParams(text));
  if (type.includes('json') || (!type && /^\s*[[{]/.test(text))) {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      throw new BadJson();
    }
  }
  return undefined;
}

function send(res: ServerResponse, answer: EmuResponse): void {
  if (res.headersSent || res.destroyed) return;
  const headers: Record<string, string> = { ...(answer.headers ?? {}) };
  let payload: Buffer | string = '';
  if (answer.status !== 204 && answer.status !== 304) {
    if (answer.json !== undefined) {
      payload = JSON.stringify(answer.json);
      headers['content-type'] = answer.contentType ?? 'application/json; charset=utf-8';
    } else if (answer.body !== undefined) {
      payload = answer.body;
      if (answer.contentType) headers['content-type'] = answer.contentType;
    }
  }
  headers['content-length'] = String(Buffer.byteLength(payload));
  res.writeHead(answer.status, headers);
  res.end(payload);
}

const json = (status: number, body: unknown): EmuResponse => ({ status, json: body });
const round6 = (n: number): number => Math.round(n * 1e6) / 1e6;
/** What the call log keeps of a token: never enough to tell a short token whole. */
const tail = (token: string): string => (token.length >= 12 ? `…${token.slice(-4)}` : '…');

// ---------------------------------------------------------------------------------------------
// The server

/** The one scheduler of the emulator: the given one, or the modules' (they must share it), or a new one. */
/**
 * A token spends from its owner's wallet: one wallet per account, whatever token calls. A class,
 * not an object literal with accessors (made per token, those were kept as dictionaries: ~0.6 KB
 * more per token).
 */
class AccountToken implements EmuToken {
  readonly #account: EmuAccount;
  readonly owner: string;

  constructor(
    readonly token: string,
    public scopes: string[],
    account: EmuAccount,
  ) {
    this.#account = account;
    this.owner = account.email;
  }

  get credit(): number {
    return this.#account.credit;
  }

  set credit(v: number) {
    this.#account.credit = v;
  }
}

/** What the control API shows of a token. */
const shownToken = (t: EmuToken): Record<string, unknown> => ({ token: t.token, scopes: t.scopes, owner: t.owner, credit: t.credit });

/** The token bound: the option, else the settings' (`EMULATOR_MAX_TOKENS`), else `DEFAULT_MAX_TOKENS`. */
function maxTokensOf(option: number | undefined, setting: number | undefined): number {
  return Math.max(1, Math.floor(option ?? setting ?? DEFAULT_MAX_TOKENS));
}

/** The emulator's tokens by value (`EmulatorOptions.maxTokens`). */
interface TokenStore {
  get(value: string): EmuToken | undefined;
  /** `madeFor`: the account this token's creation made, forgotten when its last token is evicted. */
  set(value: string, token: EmuToken, madeFor?: EmuAccount): void;
  delete(value: string): boolean;
  values(): Generator<EmuToken>;
}

/**
 * The built-in token, kept for ever, and the others in an LRU of `max` entries. An evicted token is
 * forgotten as a deleted one is (its authorization-area record too); an account a token's creation
 * made (the control API's, with or without an `owner`) goes with the last token naming it, so its
 * wallet, usage and error log do not outlive every token that could reach them. Accounts made
 * otherwise (the built-in one, the control API's `oauth/account`) stay.
 */
function boundedTokens(accounts: Accounts, max: number, builtInToken: string): TokenStore {
  const builtIn = new Map<string, EmuToken>();
  /** Tokens per owner (lower-case e-mail): an account made for a token goes with the last of them. */
  const perOwner = new Map<string, number>();
  const madeForTokens = new WeakSet<EmuAccount>();
  const count = (owner: string, by: number): number => {
    const key = owner.toLowerCase();
    const n = (perOwner.get(key) ?? 0) + by;
    if (n > 0) perOwner.set(key, n);
    else perOwner.delete(key);
    return n;
  };
  // maxSize with entries of size 1, not max: lru-cache preallocates `max` slots up front.
  const created = new LRUCache<string, EmuToken>({
    maxSize: max,
    sizeCalculation: () => 1,
    dispose: (token, value, reason) => {
      const left = count(token.owner, -1);
      if (reason !== 'evict') return;
      accounts.tokenMeta.delete(value);
      const account = left === 0 ? accounts.get(token.owner) : undefined;
      if (account && madeForTokens.has(account)) accounts.forget(account.email);
    },
  });
  return {
    get: (value) => builtIn.get(value) ?? created.get(value),
    set(value, token, madeFor) {
      if (madeFor) madeForTokens.add(madeFor);
      count(token.owner, 1);
      if (value === builtInToken) {
        const old = builtIn.get(value);
        if (old) count(old.owner, -1);
        builtIn.set(value, token);
      } else created.set(value, token);
    },
    delete(value) {
      const old = builtIn.get(value);
      if (old) count(old.owner, -1);
      return builtIn.delete(value) || created.delete(value);
    },
    *values() {
      yield* builtIn.values();
      yield* created.values();
    },
  };
}

function schedulerOf(opts: EmulatorOptions, modules: AreaModule[] | undefined): { scheduler: Scheduler; owned: boolean } {
  const scheduler = opts.scheduler ?? modules?.find((m) => m.scheduler)?.scheduler;
  for (const m of modules ?? []) {
    if (m.scheduler && m.scheduler !== scheduler) {
      throw new Error(`emulator: area module ${m.area} runs on another scheduler; build every module with the same { scheduler }`);
    }
  }
  return scheduler ? { scheduler, owned: false } : { scheduler: new Scheduler(), owned: true };
}

const CLOCK_MODES: readonly ClockMode[] = ['real', 'manual'];
const isClockMode = (v: unknown): v is ClockMode => typeof v === 'string' && (CLOCK_MODES as readonly string[]).includes(v);

function clockState(scheduler: Scheduler): Record<string, unknown> {
  const pending = scheduler.pending();
  const nowMs = scheduler.now();
  return {
    mode: scheduler.mode,
    now: new Date(nowMs).toISOString(),
    nowMs,
    pending: pending.length,
    jobs: pending.slice(0, 100).map((j) => ({ id: j.id, at: new Date(j.at).toISOString(), label: j.label })),
  };
}

/** What the emulator's handlers share: built once by `startEmulator`, read and changed by the area calls and the control API. */
interface EmulatorState {
  opts: EmulatorOptions;
  scheduler: Scheduler;
  byArea: Map<Area, { module: AreaModule; compiled: CompiledRoute[] }>;
  latency: Map<Area, number>;
  faults: Fault[];
  /** Area calls being handled right now (late answers and hangs included). */
  inflight: { count: number };
  calls: CallRecord[];
  freeTiers: FreeTierCounters;
  accounts: Accounts;
  tokenStore: TokenStore;
  tokenOf: (value: string, scopes: string[], account: EmuAccount) => EmuToken;
  tokens: EmulatorTokens;
  services: EmuServices;
  log: (rec: CallRecord) => void;
}

/** The control API's tokens: created (a new account, or an existing one's wallet set), read, credited. */
function createTokens(accounts: Accounts, tokenStore: TokenStore, tokenOf: EmulatorState['tokenOf'], builtInToken: string): EmulatorTokens {
  const tokens: EmulatorTokens = {
    defaultToken: builtInToken,
    create(init = {}) {
      const value = init.token?.trim() || hexId() + hexId().slice(0, 16);
      const owner = init.owner?.trim() || `${value.slice(0, 8)}@example.com`;
      const credit = typeof init.credit === 'number' && Number.isFinite(init.credit) ? init.credit : CREATED_TOKEN_CREDIT;
      const known = accounts.get(owner);
      const account = known ?? accounts.ensure(owner, { credit });
      if (known && typeof init.credit === 'number') accounts.setCredit(known, credit);
      const t = tokenOf(value, init.scopes ?? allAreaScopes(), account);
      tokenStore.set(value, t, known ? undefined : account);
      return t;
    },
    get: (token) => tokenStore.get(token),
    setCredit(token, credit) {
      const t = tokenStore.get(token);
      const account = t ? accounts.get(t.owner) : undefined;
      if (!account) return false;
      accounts.setCredit(account, credit);
      return true;
    },
  };
  return tokens;
}

/** What the area modules may use of the emulator (`AreaModule.attach`): accounts, tokens, the scopes of every route. */
function createServices(modules: AreaModule[], accounts: Accounts, tokenStore: TokenStore, tokens: EmulatorTokens): EmuServices {
  const services: EmuServices = {
    accounts,
    tokens: {
      create: (init) => tokens.create({ scopes: init.scopes, owner: init.owner, token: init.token }),
      get: (token) => tokenStore.get(token),
      delete: (token) => {
        accounts.tokenMeta.delete(token);
        return tokenStore.delete(token);
      },
      of: (owner) => [...tokenStore.values()].filter((t) => t.owner.toLowerCase() === owner.toLowerCase()),
    },
    scopes: () => {
      const out = new Set<string>();
      for (const m of modules) for (const r of m.routes) out.add(`${r.method}:${sandboxHost(m.area)}${r.scopePath ?? `/${r.pattern.split('/').filter(Boolean)[0] ?? ''}`}`);
      return [...out].sort();
    },
  };
  return services;
}

// ---------------------------------------------------------------------------------------------
// Area calls

/** The handler of every area call: latency → fault → route → token and scope → body → free tier → wallet → handler → charge → answer → call log. */
function areaHandler(s: EmulatorState): (req: IncomingMessage, res: ServerResponse, url: URL, area: Area, path: string, raw: Buffer) => Promise<void> {
  const { opts, scheduler, byArea, latency, faults, accounts, tokenStore, tokenOf, services, freeTiers, log } = s;
  async function handleArea(req: IncomingMessage, res: ServerResponse, url: URL, area: Area, path: string, raw: Buffer): Promise<void> {
    const started = Date.now();
    const method = (req.method ?? 'GET').toUpperCase();
    const bearer = /^Bearer\s+(.+)$/i.exec(req.headers.authorization ?? '')?.[1]?.trim() ?? null;
    let charged = 0;
    let resetAfter = false;
    /** The account and scope of an authorised call, for its statistics and error log. */
    let caller: { account: EmuAccount; scope: string; token: string; subscription?: boolean } | null = null;
    const finish = (answer: EmuResponse): void => {
      if (resetAfter && answer.status < 500) res.socket?.destroy();
      else send(res, answer);
      if (caller) {
        const body = (answer.json ?? {}) as { error?: unknown; message?: unknown };
        accounts.record(caller.account, {
          scope: caller.scope,
          domain: sandboxHost(area),
          token: caller.token,
          status: answer.status,
          errorCode: typeof body.error === 'number' ? body.error : null,
          message: typeof body.message === 'string' ? body.message : '',
          amount: charged,
          ip: req.socket.remoteAddress ?? '',
          subscription: caller.subscription === true,
        });
      }
      log({
        method,
        path,
        query: url.search,
        area,
        status: answer.status,
        price: charged,
        at: new Date(started).toISOString(),
        ms: Date.now() - started,
        token: bearer ? tail(bearer) : null,
      });
    };

    const delay = latency.get(area) ?? 0;
    if (delay > 0) await sleep(delay);

    const faultIndex = faults.findIndex((f) => f.area === area && f.remaining > 0 && (!f.pathPrefix || path.startsWith(f.pathPrefix)));
    let answerDelay = 0;
    if (faultIndex >= 0) {
      const fault = faults[faultIndex];
      fault.remaining--;
      answerDelay = fault.delayAfterMs ?? 0;
      resetAfter = fault.reset === true;
      if (fault.remaining <= 0) faults.splice(faults.indexOf(fault), 1);
      if (fault.hangMs) await sleep(fault.hangMs);
      if (fault.status) {
        const answer = fail(fault.status, fault.status, `emulated fault: HTTP ${fault.status}`);
        if (fault.retryAfter !== undefined) answer.headers = { 'retry-after': String(fault.retryAfter) };
        finish(answer);
        return;
      }
    }

    const entry = byArea.get(area);
    if (!entry) {
      finish(fail(404, 404, `area ${area} is not emulated`));
      return;
    }
    const matched = matchRoute(entry.compiled, method, path);
    if (matched === null) {
      finish(fail(404, 404, `no such endpoint: ${method} ${path}`));
      return;
    }
    if (matched === 'method') {
      finish(fail(405, 405, `method ${method} not allowed on ${path}`));
      return;
    }
    const { route, params } = matched;

    const scopePath = route.scopePath ?? `/${path.split('/').filter(Boolean)[0] ?? ''}`;
    const scope = `${method}:${sandboxHost(area)}${scopePath}`;
    let token: EmuToken | undefined;
    let account: EmuAccount | undefined;
    let refreshOf: string | undefined;
    if (route.auth === 'basic' || route.auth === 'basic-or-refresh') {
      // The authorization area: the account's e-mail and API key (HTTP Basic), or for a rotation the token's refresh token.
      account = accounts.authenticate(req.headers.authorization) ?? undefined;
      if (!account && route.auth === 'basic-or-refresh' && bearer) {
        for (const [value, meta] of accounts.tokenMeta) {
          if (meta.refreshToken === bearer) {
            refreshOf = value;
            account = accounts.get(tokenStore.get(value)?.owner ?? '');
            break;
          }
        }
      }
      if (!account) {
        finish(fail(401, route.auth === 'basic-or-refresh' && bearer ? 130 : 140, 'Unauthorized'));
        return;
      }
      token = tokenStore.get(s.tokens.defaultToken)?.owner === account.email ? tokenStore.get(s.tokens.defaultToken) : services.tokens.of(account.email)[0];
      token ??= tokenOf('', [], account);
    } else {
      token = bearer ? tokenStore.get(bearer) : undefined;
      const expireAt = token ? accounts.tokenMeta.get(token.token)?.expireAt : undefined;
      if (!token || (expireAt !== undefined && expireAt <= scheduler.now()) || !scopeAllows(token.scopes, method, sandboxHost(area), scopePath)) {
        if (token) caller = { account: accounts.ensure(token.owner), scope, token: token.token };
        finish(fail(401, WRONG_TOKEN_ERROR, 'Wrong Token'));
        return;
      }
      account = accounts.ensure(token.owner);
    }
    caller = { account, scope, token: refreshOf ?? (route.auth ? '' : token.token) };

    let body: unknown;
    try {
      body = parseBody(raw, req.headers['content-type']);
    } catch {
      finish(fail(400, 400, 'Invalid JSON body'));
      return;
    }

    const creditError = CREDIT_ERROR_611.has(`${area} ${method} ${scopePath.slice(1)}`) ? 611 : CREDIT_ERROR;
    const insufficient = (price: number): EmuResponse =>
      fail(402, creditError, `Billing error message: Insufficient Credit in Wallet: ${price} > ${round6(token.credit)} code 810`);
    // A call inside its endpoint's free tier (counted per account) is not charged.
    const free = freeTiers.claim(token.owner, area, method, path);
    // A call an active subscription covers is paid from it (one of its requests), not from the wallet.
    const subscription = free || route.auth ? undefined : accounts.subscriptionFor(account, scope);
    const listPrice = free || subscription ? 0 : (route.price ?? priceOf(area, method, path));
    if (listPrice > token.credit + 1e-9) {
      finish(insufficient(listPrice));
      return;
    }

    const emuReq: EmuRequest = {
      area,
      method,
      path,
      query: url.searchParams,
      headers: req.headers,
      body,
      rawBody: raw,
      token,
      baseUrl: `http://${req.headers.host ?? `${opts.host ?? '127.0.0.1'}`}/${area}`,
      account,
      ...(refreshOf ? { refreshOf } : {}),
      services,
      subscribed: subscription !== undefined,
    };
    let answer: EmuResponse;
    try {
      answer = await route.handler(emuReq, params);
    } catch (err) {
      answer = fail(500, 500, `emulator error: ${(err as Error).message}`);
    }
    const price = answer.price ?? (answer.status >= 200 && answer.status < 300 ? listPrice : 0);
    if (subscription && answer.status >= 200 && answer.status < 300) {
      subscription.availableRequests--;
      if (caller) caller.subscription = true;
    }
    if (price > 0) {
      if (price > token.credit + 1e-9) {
        finish(insufficient(price));
        return;
      }
      accounts.charge(account, price, `API usage - ${sandboxHost(area)}`);
      charged = price;
    }
    if (answerDelay > 0) await sleep(answerDelay);
    finish(answer);
  }
  return handleArea;
}

// ---------------------------------------------------------------------------------------------
// The control API (`/_emulator/…`): one function per concern, each answering the paths it knows

/** A control API request, parsed. */
interface ControlCall {
  method: string;
  url: URL;
  /** The path's segments after `/_emulator/`. */
  segments: string[];
  first: string;
  second: string;
  body: unknown;
  obj: Record<string, unknown>;
}

/** Answers a control request it knows, or `undefined` to let the next one try. */
type ControlRoutes = (s: EmulatorState, c: ControlCall) => Promise<EmuResponse | undefined>;

/** The call log (`calls`) and the calls in flight (`inflight`). */
async function callLogRoutes(s: EmulatorState, c: ControlCall): Promise<EmuResponse | undefined> {
  const { method, segments, first, url } = c;
  const { calls, inflight } = s;
  if (first === 'calls' && segments.length === 1) {
    if (method === 'GET') {
      const area = url.searchParams.get('area');
      return json(200, area ? calls.filter((c) => c.area === area) : calls);
    }
    if (method === 'DELETE') {
      calls.length = 0;
      return json(200, { ok: true });
    }
  }
  if (first === 'inflight' && segments.length === 1 && method === 'GET') return json(200, { count: inflight.count });
  return undefined;
}

/** The company area's sandbox companies (`sandbox-companies`). */
async function sandboxRoutes(s: EmulatorState, c: ControlCall): Promise<EmuResponse | undefined> {
  const { method, first } = c;
  const { byArea } = s;
  if (first === 'sandbox-companies' && method === 'GET') {
    const hook = byArea.get('company')?.module.control?.sandboxCompanies;
    return hook ? json(200, await hook(undefined)) : json(404, { error: 'the company area is not loaded' });
  }
  return undefined;
}

/** Tokens and their wallets (`tokens`). */
async function tokenRoutes(s: EmulatorState, c: ControlCall): Promise<EmuResponse | undefined> {
  const { method, segments, first, second, obj } = c;
  const { tokens } = s;
  if (first === 'tokens') {
    if (method === 'POST' && segments.length === 1) {
      const scopes = obj.scopes;
      if (scopes !== undefined && !(Array.isArray(scopes) && scopes.every((s) => typeof s === 'string'))) return json(400, { error: 'scopes must be an array of strings' });
      if (obj.credit !== undefined && (typeof obj.credit !== 'number' || !Number.isFinite(obj.credit))) return json(400, { error: 'credit must be a number' });
      const t = tokens.create({
        scopes: scopes,
        credit: obj.credit,
        owner: typeof obj.owner === 'string' ? obj.owner : undefined,
        token: typeof obj.token === 'string' ? obj.token : undefined,
      });
      return json(200, shownToken(t));
    }
    if (method === 'GET' && second) {
      const t = tokens.get(decode(second));
      return t ? json(200, shownToken(t)) : json(404, { error: 'unknown token' });
    }
  }
  return undefined;
}

/** Latency per area (`latency`). */
async function latencyRoutes(s: EmulatorState, c: ControlCall): Promise<EmuResponse | undefined> {
  const { method, segments, first, obj } = c;
  const { latency } = s;
  if (first === 'latency' && segments.length === 1) {
    if (method === 'GET') return json(200, Object.fromEntries(latency));
    if (method === 'POST') {
      if (!isArea(obj.area)) return json(400, { error: `area must be one of ${AREAS.join(', ')}` });
      const ms = typeof obj.ms === 'number' && Number.isFinite(obj.ms) ? Math.max(0, obj.ms) : 0;
      latency.set(obj.area, ms);
      return json(200, { area: obj.area, ms });
    }
  }
  return undefined;
}

/** Injected faults (`faults`). */
async function faultRoutes(s: EmulatorState, c: ControlCall): Promise<EmuResponse | undefined> {
  const { method, segments, first, obj } = c;
  const { faults } = s;
  if (first === 'faults' && segments.length === 1) {
    if (method === 'GET') return json(200, faults);
    if (method === 'DELETE') {
      faults.length = 0;
      return json(200, { ok: true });
    }
    if (method === 'POST') {
      if (!isArea(obj.area)) return json(400, { error: `area must be one of ${AREAS.join(', ')}` });
      const num = (k: string): number | undefined => (typeof obj[k] === 'number' && Number.isFinite(obj[k]) ? obj[k] : undefined);
      const status = num('status');
      const hangMs = num('hangMs');
      const delayAfterMs = num('delayAfterMs');
      const reset = obj.reset === true;
      if (status === undefined && hangMs === undefined && delayAfterMs === undefined && !reset)
        return json(400, { error: 'a fault needs a status, hangMs, delayAfterMs or reset' });
      if (status !== undefined && (status < 100 || status > 599)) return json(400, { error: 'status must be an HTTP status' });
      const fault: Fault = { id: hexId(), area: obj.area, remaining: Math.max(1, Math.floor(num('count') ?? 1)) };
      if (typeof obj.pathPrefix === 'string' && obj.pathPrefix !== '') fault.pathPrefix = obj.pathPrefix.startsWith('/') ? obj.pathPrefix : `/${obj.pathPrefix}`;
      if (status !== undefined) fault.status = status;
      const retryAfter = num('retryAfter');
      if (retryAfter !== undefined) fault.retryAfter = retryAfter;
      if (hangMs !== undefined) fault.hangMs = Math.max(0, hangMs);
      if (delayAfterMs !== undefined) fault.delayAfterMs = Math.max(0, delayAfterMs);
      if (reset) fault.reset = true;
      faults.push(fault);
      return json(200, fault);
    }
  }
  return undefined;
}

/** Callback delivery and its log (`callbacks`). */
async function callbackRoutes(_s: EmulatorState, c: ControlCall): Promise<EmuResponse | undefined> {
  const { method, segments, first, obj } = c;
  if (first === 'callbacks' && segments.length === 1) {
    if (method === 'GET') return json(200, callbackSettings.log());
    if (method === 'DELETE') {
      callbackSettings.clearLog();
      return json(200, { ok: true });
    }
    if (method === 'POST') {
      if (typeof obj.enabled === 'boolean') callbackSettings.setEnabled(obj.enabled);
      if (typeof obj.backoffMs === 'number' && obj.backoffMs >= 0) callbackSettings.setBackoffMs(obj.backoffMs);
      return json(200, { enabled: callbackSettings.isEnabled() });
    }
  }
  return undefined;
}

/** The one clock of every area's asynchronous work (`clock`). */
async function clockRoutes(s: EmulatorState, c: ControlCall): Promise<EmuResponse | undefined> {
  const { method, segments, first, obj } = c;
  const { scheduler } = s;
  if (first === 'clock' && segments.length === 1) {
    if (method === 'GET') return json(200, clockState(scheduler));
    if (method === 'POST') {
      if (obj.mode !== undefined && !isClockMode(obj.mode)) return json(400, { error: `mode must be one of ${CLOCK_MODES.join(', ')}` });
      const advanceMs = obj.advanceMs;
      if (advanceMs !== undefined && (typeof advanceMs !== 'number' || !Number.isFinite(advanceMs) || advanceMs < 0)) {
        return json(400, { error: 'advanceMs must be a number of milliseconds ≥ 0' });
      }
      if (obj.mode !== undefined) scheduler.setMode(obj.mode);
      const ran = advanceMs === undefined ? 0 : await scheduler.advance(advanceMs);
      return json(200, { ...clockState(scheduler), ran });
    }
  }
  return undefined;
}

/** An area module's own control hooks (`<area>/<name>`). */
async function areaHookRoutes(s: EmulatorState, c: ControlCall): Promise<EmuResponse | undefined> {
  const { method, segments, first, second, body } = c;
  const { byArea } = s;
  if (isArea(first) && second && segments.length === 2 && method === 'POST') {
    const hook = byArea.get(first)?.module.control?.[second];
    if (!hook) return json(404, { error: `no control hook ${second} in area ${first}` });
    try {
      const result = await hook(body);
      return json(200, result === undefined ? { ok: true } : result);
    } catch (err) {
      return json(400, { error: (err as Error).message });
    }
  }
  return undefined;
}

const CONTROL_ROUTES: readonly ControlRoutes[] = [callLogRoutes, sandboxRoutes, tokenRoutes, latencyRoutes, faultRoutes, callbackRoutes, clockRoutes, areaHookRoutes];

/** The control API's handler: the body parsed, then each concern's routes in turn, else 404. */
function controlHandler(s: EmulatorState): (req: IncomingMessage, url: URL, segments: string[], raw: Buffer) => Promise<EmuResponse> {
  async function handleControl(req: IncomingMessage, url: URL, segments: string[], raw: Buffer): Promise<EmuResponse> {
    const method = (req.method ?? 'GET').toUpperCase();
    let body: unknown;
    try {
      body = parseBody(raw, req.headers['content-type'] ?? 'application/json') ?? {};
    } catch {
      return json(400, { error: 'invalid JSON body' });
    }
    const obj = isObj(body) ? body : {};
    const [first, second] = segments;

    const call: ControlCall = { method, url, segments, first, second, body, obj };
    for (const routes of CONTROL_ROUTES) {
      const answer = await routes(s, call);
      if (answer) return answer;
    }
    return json(404, { error: `no such control endpoint: ${method} /_emulator/${segments.join('/')}` });
  }
  return handleControl;
}

// ---------------------------------------------------------------------------------------------
// The server

export async function startEmulator(opts: EmulatorOptions = {}): Promise<RunningEmulator> {
  const { scheduler, owned: ownsScheduler } = schedulerOf(opts, opts.modules);
  const builtIn = { token: opts.settings?.token ?? DEFAULT_TOKEN, email: opts.settings?.email ?? DEFAULT_EMAIL, apikey: opts.settings?.apikey ?? DEFAULT_APIKEY };
  const modules =
    opts.modules ??
    (await import('./modules.ts')).defaultModules(scheduler, {
      riskCompleteAfterMs: opts.riskCompleteAfterMs,
      companyPrepareMs: opts.settings?.companyPrepareMs,
      companyGetWaitMs: opts.settings?.companyGetWaitMs,
    });
  const byArea = new Map<Area, { module: AreaModule; compiled: CompiledRoute[] }>();
  for (const m of modules) byArea.set(m.area, { module: m, compiled: compile(m.routes) });

  const latency = new Map<Area, number>();
  for (const [area, ms] of Object.entries(opts.latencyMs ?? {})) if (isArea(area) && typeof ms === 'number') latency.set(area, Math.max(0, ms));
  const faults: Fault[] = [];
  /** Area calls being handled right now (late answers and hangs included). */
  const inflight = { count: 0 };
  const calls: CallRecord[] = [];
  /** The contract's free tiers, per account, on the emulator's clock. */
  const freeTiers = new FreeTierCounters(() => scheduler.now());
  const accounts = new Accounts(() => scheduler.now());
  const tokenStore = boundedTokens(accounts, maxTokensOf(opts.maxTokens, opts.settings?.maxTokens), builtIn.token);
  const tokenOf = (value: string, scopes: string[], account: EmuAccount): EmuToken => new AccountToken(value, scopes, account);
  tokenStore.set(builtIn.token, tokenOf(builtIn.token, allAreaScopes(), accounts.ensure(builtIn.email, { apikey: builtIn.apikey, credit: DEFAULT_CREDIT })));

  const tokens = createTokens(accounts, tokenStore, tokenOf, builtIn.token);
  const services = createServices(modules, accounts, tokenStore, tokens);
  for (const m of modules) m.attach?.(services);

  const log = (rec: CallRecord): void => {
    calls.push(rec);
    if (calls.length > 100_000) calls.splice(0, calls.length - 100_000);
  };

  const state: EmulatorState = { opts, scheduler, byArea, latency, faults, inflight, calls, freeTiers, accounts, tokenStore, tokenOf, tokens, services, log };
  const handleArea = areaHandler(state);
  const handleControl = controlHandler(state);

  let draining = false;
  const open = new Set<ServerResponse>();
  const server = createServer((req, res) => {
    open.add(res);
    res.once('close', () => {
      open.delete(res);
      // Once draining, a keep-alive connection is closed as soon as its last answer went out.
      if (draining) server.closeIdleConnections();
    });
    void (async () => {
      const url = new URL(req.url ?? '/', 'http://emulator');
      const segments = url.pathname.split('/').filter(Boolean).map(decode);
      let raw: Buffer;
      try {
        raw = await readBody(req);
      } catch (err) {
        if (err instanceof JsonLimitError) {
          send(res, fail(err.status, err.status, `request body refused: ${err.message}`));
          req.destroy();
        }
        return;
      }
      if (url.pathname === '/healthz') {
        send(res, json(200, { ok: true, areas: [...byArea.keys()] }));
        return;
      }
      if (url.pathname === '/readyz') {
        send(res, json(draining ? 503 : 200, { ready: !draining, draining }));
        return;
      }
      if (segments[0] === '_emulator') {
        send(res, await handleControl(req, url, segments.slice(1), raw));
        return;
      }
      const area = segments[0];
      if (!isArea(area)) {
        send(res, fail(404, 404, `no such area: ${area ?? '/'}`));
        const bearer = /^Bearer\s+(.+)$/i.exec(req.headers.authorization ?? '')?.[1]?.trim();
        log({
          method: (req.method ?? 'GET').toUpperCase(),
          path: url.pathname,
          query: url.search,
          area: null,
          status: 404,
          price: 0,
          at: new Date().toISOString(),
          ms: 0,
          token: bearer ? tail(bearer) : null,
        });
        return;
      }
      const rest = url.pathname.split('/').slice(2).join('/');
      inflight.count++;
      try {
        await handleArea(req, res, url, area, `/${rest}`, raw);
      } finally {
        inflight.count--;
      }
    })().catch((err: unknown) => {
      send(res, fail(500, 500, `emulator error: ${(err as Error).message}`));
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, opts.host ?? '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const host = opts.host ?? '127.0.0.1';
  let closed = false;
  async function close(): Promise<void> {
    if (closed) return;
    closed = true;
    for (const m of modules) m.close?.();
    if (ownsScheduler) scheduler.close();
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  }

  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    port,
    tokens,
    accounts,
    calls: (area) => (area ? calls.filter((c) => c.area === area) : calls.slice()),
    scheduler,
    close,
    async shutdown(timeoutMs) {
      draining = true;
      const drained = new Promise<true>((resolve) => server.close(() => resolve(true)));
      server.closeIdleConnections();
      let timer: NodeJS.Timeout | undefined;
      const clean = await Promise.race([drained, new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs)))]);
      clearTimeout(timer);
      const requests = open.size;
      await close();
      return { clean, requests };
    },
  };
}
