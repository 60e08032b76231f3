/**
 * The emulator's shared vocabulary: what an area module receives and returns, the vendor's
 * envelopes, and the per-area host names used in token scopes. Area modules (company, risk, …)
 * only depend on this file, `callbacks.ts` (reading and delivering callbacks) and `scheduler.ts`
 * (their asynchronous work, on the emulator's clock); `server.ts` wires them to HTTP.
 */
import type { IncomingHttpHeaders } from 'node:http';

import type { Area } from '../contract/areas.ts';
import type { Scheduler } from './scheduler.ts';
import type { Accounts, EmuAccount } from './accounts.ts';

/** The areas and hosts come from the contract module (shared with the layer). */
export { AREA_HOSTS, sandboxHost, type Area } from '../contract/areas.ts';

/** An authenticated request, as an area module sees it. */
export interface EmuRequest {
  area: Area;
  method: string;
  /** Path inside the area, starting with `/` (e.g. `/IT-start/12485671007`), without the query. */
  path: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  /** Parsed body: JSON object, form fields as an object, or undefined. */
  body: unknown;
  rawBody: Buffer;
  /** The bearer token the call was authorised with. */
  token: EmuToken;
  /** Base URL of this area on the emulator (e.g. `http://127.0.0.1:5001/company`), for `Location` headers. */
  baseUrl: string;
  /**
   * The account behind the call: the token's owner, or for a route with `auth: 'basic'` the
   * account of the e-mail and API key (or, on a `basic-or-refresh` route, of the refresh token).
   * Always set by the server (optional for handlers called directly in unit tests).
   */
  account?: EmuAccount;
  /** Set on a `basic-or-refresh` route called with a token's refresh token instead of Basic auth. */
  refreshOf?: string;
  /** The emulator's shared services (accounts, tokens, its scopes), for the authorization area. */
  services?: EmuServices;
  /** True when an active subscription of the account pays this call (the server's decision, before the handler). */
  subscribed?: boolean;
}

/** What the server shares with the area modules that manage accounts and tokens. */
export interface EmuServices {
  accounts: Accounts;
  tokens: {
    create(init: { scopes: string[]; owner: string; token?: string }): EmuToken;
    get(token: string): EmuToken | undefined;
    delete(token: string): boolean;
    /** The tokens of one account (by owner e-mail). */
    of(owner: string): EmuToken[];
  };
  /** Every scope the emulator serves, in the vendor form `METHOD:test.<host>/<endpoint>`. */
  scopes(): string[];
}

/** What a handler answers. Either `json` (serialised as-is, so envelopes are exact) or raw `body`. */
export interface EmuResponse {
  status: number;
  headers?: Record<string, string>;
  json?: unknown;
  body?: Buffer | string;
  contentType?: string;
  /**
   * Euro charged for this call. Defaults to the area price table (server side) for 2xx answers,
   * 0 for errors; a handler sets it when the price depends on the answer (e.g. dry runs).
   */
  price?: number;
}

export type Params = Record<string, string>;
export type Handler = (req: EmuRequest, params: Params) => EmuResponse | Promise<EmuResponse>;

/** One route of an area: `pattern` uses `:name` segments, e.g. `/IT-start/:id`. */
export interface Route {
  method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';
  pattern: string;
  handler: Handler;
  /** Euro per successful call; defaults to `priceOf()` of the shared price table. */
  price?: number;
  /** Scope path checked against the token (`METHOD:test.<host><scopePath>`); defaults to the first segment. */
  scopePath?: string;
  /**
   * How the call authenticates: a bearer token with the scope (default), HTTP Basic with the
   * account's e-mail and API key (the authorization area), or either Basic or a token's refresh
   * token as bearer (token rotation).
   */
  auth?: 'bearer' | 'basic' | 'basic-or-refresh';
}

export interface AreaModule {
  area: Area;
  routes: Route[];
  /** Control hooks for the emulator's `/_emulator/` API (time control, state moves). */
  control?: Record<string, (body: unknown) => unknown>;
  /**
   * The scheduler the module's asynchronous work runs on (the emulator's one, when the module was
   * given it): `POST /_emulator/clock` drives it.
   */
  scheduler?: Scheduler;
  /** Receives the server's shared services once the server is built (the authorization area's accounts and tokens). */
  attach?: (services: EmuServices) => void;
  /** Cancels the module's jobs; called on shutdown. */
  close?: () => void;
}

export interface EmuToken {
  token: string;
  /** Scopes in the vendor form `METHOD:host/path`, `*` wildcards allowed (`*:test.company.openapi.com/*`). */
  scopes: string[];
  /** Remaining wallet credit in euro. */
  credit: number;
  /** Owner e-mail, echoed in risk records (`owner`). */
  owner: string;
}

/** Standard success envelope (REFERENCE §1.2). */
export const ok = (data: unknown, status = 200, message = ''): EmuResponse => ({
  status,
  json: { data, success: true, message, error: null },
});

/** Standard error envelope: `{success:false, message, error:<n>, data:null}`. */
export const fail = (status: number, error: number, message: string): EmuResponse => ({
  status,
  json: { success: false, message, error, data: null },
});

/** 24-hex Mongo-style id, deterministic when given a seed string. */
export function hexId(seed?: string): string {
  // Joined, one flat string: appended piece by piece, an id was a chain of string pieces (~0.5 KB)
  // kept as long as the id (a token, an API key, a transaction id: the emulator's state per token).
  if (seed === undefined) return Array.from({ length: 24 }, () => Math.floor(Math.random() * 16).toString(16)).join('');
  let h1 = 0x811c9dc5;
  const parts: string[] = [];
  for (let round = 0; round < 3; round++) {
    for (const ch of `${seed}#${round}`) h1 = Math.imul(h1 ^ ch.charCodeAt(0), 16777619) >>> 0;
    parts.push(h1.toString(16).padStart(8, '0'));
  }
  return parts.join('');
}
