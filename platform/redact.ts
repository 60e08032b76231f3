/**
 * Redaction of secrets in logs: one place for every log line of the project (the gateway's logger,
 * `console` lines of the gateway, subgraphs and emulator). Nothing logged, at any level, may hold
 * a token, an API key, a password or the layer's signing secret.
 *
 * - Values: `Bearer <x>` / `Basic <x>` anywhere in text; the values of credential-like fields
 *   (`authorization`, `x-api-key`, `apikey`, `x-openapi-account-key`, `…password`, `pin`, `token`, `…_token`, `…secret`, `cookie`)
 *   in logged objects, in `{name, value}` header pairs and `[name, value]` tuples, and in JSON or
 *   query strings inside text (`"token":"…"`, `\"password\":\"…\"`, `?token=…`); the capability
 *   part of signed URLs (`/callbacks/<area>/<signed key>`, `/files/<area>/<signed token>`).
 * - Literals: the configured secrets (`OPENAPI_TOKEN`, `OPENAPI_APIKEY`, `OPENAPI_ACCOUNT_API_KEY`, `LAYER_SECRET`, and any
 *   value given to `registerSecrets`) wherever they appear.
 */
import { formatWithOptions } from 'node:util';
import { processSecretValues, SECRET_SETTINGS, secretValues, settingsOf, type SettingsSource } from './settings.ts';

export const REDACTED = '[REDACTED]';

/** Settings whose values are secrets (marked `secret` in `platform/settings.ts`). `OPENAPI_EMAIL` is not one; the API key is. */
export const SECRET_VARIABLES = SECRET_SETTINGS;

/** Shorter values are not searched for as literals (they would match everywhere). */
const MIN_SECRET_LENGTH = 6;

const secrets = new Set<string>();
let fromProcessEnv = false;

/** Adds literal secrets to redact from every log line of the process (empty or short values are ignored). */
export function registerSecrets(values: Iterable<string | null | undefined>): void {
  for (const v of values) {
    const s = v?.trim();
    if (s && s.length >= MIN_SECRET_LENGTH) secrets.add(s);
  }
}

/** The secrets of an environment (`SECRET_VARIABLES`; of `REDIS_URL`, its password: redis://user:password@host). */
export function secretsOfEnv(env: SettingsSource): string[] {
  return secretValues(settingsOf(env));
}

function knownSecrets(): Set<string> {
  if (!fromProcessEnv) {
    fromProcessEnv = true;
    registerSecrets(processSecretValues());
  }
  return secrets;
}

/** Credential-like keys (compared lower-case, without `-` and `_`). */
const SENSITIVE_KEY = /^(authorization|proxyauthorization|cookie|setcookie|xapikey|apikey|password|passwd|pwd|pin|token|secret)$|(token|secret|password|apikey|accountkey)$/;
const isSensitiveKey = (key: string): boolean => SENSITIVE_KEY.test(key.toLowerCase().replace(/[-_]/g, ''));

/** Words that may follow "Bearer"/"Basic" in prose (error messages, docs) and are no credential. */
const PROSE = /^(?:scheme|schemes|auth|authentication|authorization|token|tokens|credential|credentials|header|realm|is|or|and|with)$/i;

const TEXT_KEYS = String.raw`authorization|proxy-authorization|cookie|set-cookie|x-api-key|api[-_]?key|(?:[A-Za-z]+[-_])*account[-_]?key|passwd|pin|[A-Za-z]*[-_]?password|[A-Za-z]*[-_]?token|[A-Za-z]*[-_]?secret`;
/** `"key": "value"`, `key: "value"`, `\"key\":\"value\"`, `'key': 'value'` (a quoted value). */
const QUOTED_FIELD = new RegExp(String.raw`((?<![A-Za-z0-9])(?:\\?["'])?(?:${TEXT_KEYS})(?:\\?["'])?\s*[:=]\s*)(\\"(?:[^"\\]|\\(?!"))*\\"|"(?:[^"\\]|\\.)*"|'[^']*')`, 'gi');
/** `key=value` in query strings, forms and `key=value` log formats (an unquoted value). */
const ASSIGNED_FIELD = new RegExp(String.raw`((?<![A-Za-z0-9])(?:${TEXT_KEYS})=)([^\s&;,"'}\]]+)`, 'gi');
/** `<token>`, `Bearer <token>`, `[REDACTED]`: nothing to hide. */
const PLACEHOLDER = /^(?:(?:Bearer|Basic)\s+)?(?:<[^<>]*>|\[REDACTED\])$/i;
const SCHEME_VALUE = /\b(Bearer|Basic)(\s+)([A-Za-z0-9\-._~+/=:%]+)/gi;
const SIGNED_PATH = /(\/(?:callbacks|files)\/[a-z][a-z0-9-]*\/)[^\s"'?#<>\\]+/g;

const escapeRegExp = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Redacts secrets in a piece of text (a log message, a formatted log line, an error message). */
export function redactText(text: string): string {
  let out = text;
  for (const s of knownSecrets()) if (out.includes(s)) out = out.replace(new RegExp(escapeRegExp(s), 'g'), REDACTED);
  out = out.replace(SCHEME_VALUE, (m, scheme: string, space: string, value: string) => (PROSE.test(value) || value === REDACTED ? m : `${scheme}${space}${REDACTED}`));
  out = out.replace(QUOTED_FIELD, (m, key: string, value: string) => {
    const q = value.startsWith('\\"') ? '\\"' : value[0];
    const inner = value.slice(q.length, value.length - q.length);
    // A placeholder (`"Bearer <token>"` in a message naming the expected form) is no secret.
    return PLACEHOLDER.test(inner) ? m : `${key}${q}${REDACTED}${q}`;
  });
  out = out.replace(ASSIGNED_FIELD, (_m, key: string) => `${key}${REDACTED}`);
  out = out.replace(SIGNED_PATH, `$1${REDACTED}`);
  return out;
}

const MAX_DEPTH = 12;

/**
 * A copy of a value to log with secrets redacted: credential-like fields, `{name, value}` and
 * `[name, value]` header pairs, and every string (see `redactText`). Cycles become `[Circular]`;
 * errors keep their name, message, stack and own fields; functions become `[Function: name]`.
 */
export function redactValue(value: unknown): unknown {
  const seen = new WeakSet<object>();
  const walk = (v: unknown, depth: number): unknown => {
    if (typeof v === 'string') return redactText(v);
    if (typeof v === 'function') return `[Function: ${v.name || 'anonymous'}]`;
    if (typeof v !== 'object' || v === null) return v;
    if (seen.has(v)) return '[Circular]';
    if (depth > MAX_DEPTH) return '[Object]';
    seen.add(v);
    try {
      if (v instanceof Date || v instanceof RegExp) return v;
      if (Buffer.isBuffer(v) || ArrayBuffer.isView(v)) return `[${v.constructor.name} ${v.byteLength} bytes]`;
      if (Array.isArray(v)) {
        if (v.length === 2 && typeof v[0] === 'string' && isSensitiveKey(v[0])) return [v[0], REDACTED];
        return v.map((x) => walk(x, depth + 1));
      }
      if (v instanceof Map) return walk(Object.fromEntries(v), depth + 1);
      if (v instanceof Set) return walk([...v], depth + 1);
      if (
        typeof (v as { get?: unknown }).get === 'function' &&
        typeof (v as { entries?: unknown }).entries === 'function' &&
        typeof Headers !== 'undefined' &&
        v instanceof Headers
      ) {
        return walk(Object.fromEntries(v.entries()), depth + 1);
      }
      const out: Record<string, unknown> = {};
      if (v instanceof Error) {
        out.name = v.name;
        out.message = redactText(v.message);
        if (v.stack) out.stack = redactText(v.stack);
      }
      const rec = v as Record<string, unknown>;
      const pairName = typeof rec.name === 'string' && 'value' in rec && isSensitiveKey(rec.name);
      for (const key of Object.keys(rec)) {
        let field: unknown;
        try {
          field = rec[key];
        } catch {
          field = '[unreadable]';
        }
        out[key] =
          isSensitiveKey(key) && field !== null && field !== undefined && typeof field !== 'boolean' && typeof field !== 'object'
            ? REDACTED
            : pairName && key === 'value'
              ? REDACTED
              : walk(field, depth + 1);
      }
      if (v instanceof Error && 'cause' in v && !('cause' in out)) out.cause = walk(v.cause, depth + 1);
      return out;
    } finally {
      seen.delete(v);
    }
  };
  return walk(value, 0);
}

/** Formats console arguments as Node does (no colours) and redacts the result. */
export function formatRedacted(...args: unknown[]): string {
  return redactText(formatWithOptions({ colors: false, depth: 6 }, ...args));
}

type ConsoleMethod = 'log' | 'info' | 'warn' | 'error' | 'debug';
const CONSOLE_METHODS: ConsoleMethod[] = ['log', 'info', 'warn', 'error', 'debug'];
const PATCHED = Symbol.for('openapi-supergraph.redacted-console');

/**
 * Routes a console's `log`, `info`, `warn`, `error` and `debug` through the redaction (formatted
 * as Node formats them, then redacted), so no `console` line of the process can print a secret
 * (an error object carrying request headers, a URL with a signed token, …). Idempotent.
 */
export function redactConsole(target: Console = console): void {
  const marked = target as unknown as Record<symbol, boolean>;
  if (marked[PATCHED]) return;
  for (const method of CONSOLE_METHODS) {
    const original = target[method].bind(target);
    target[method] = (...args: unknown[]): void => original(formatRedacted(...args));
  }
  marked[PATCHED] = true;
}
