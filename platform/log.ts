/**
 * The process's one logger: the Hive runtime's own (`@graphql-hive/logger`), shared by the gateway,
 * the subgraphs and the services. Each log is one JSON line (`level`, `msg`, `time`, its attributes,
 * and `traceId`/`spanId` when a trace is in progress) on stdout, redacted before it is written
 * (`redact.ts`: no token, API key, password or the layer secret at any level, `trace` included).
 * Lines written while an operation runs carry its `operationId` (the gateway's id of the client
 * operation, the one every subgraph request of its plan is charged to: `withLogContext`).
 *
 * Level: `LOG_LEVEL` (else `GATEWAY_LOG_LEVEL`, kept for compatibility): `trace`, `debug`, `info`,
 * `warn`, `error`, or `off`; default `info`, `error` under a test runner (`NODE_ENV=test`).
 * `console.info|warn|error|debug` lines of the process go through the same logger (`routeConsole`);
 * `console.log` stays the services' plain banner (where each part listens).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Plugin } from 'graphql-yoga';
import { jsonStringify, Logger, type Attributes, type LogLevel, type LogWriter } from '@graphql-hive/logger';
import { trace } from '@opentelemetry/api';
import { formatRedacted, redactConsole, redactText, redactValue } from './redact.ts';
import { processSetting, settingsOf, type SettingsSource } from './settings.ts';

const LEVELS: readonly LogLevel[] = ['trace', 'debug', 'info', 'warn', 'error'];

/**
 * A log level from configuration: `trace`, `debug`, `info`, `warn`, `error`, or
 * `off`/`silent`/`false`/`none` for no log at all; unset or unknown → `fallback`.
 */
export function parseLogLevel(value: string | null | undefined, fallback: LogLevel | false = 'error'): LogLevel | false {
  const v = (value ?? '').trim().toLowerCase();
  if ((LEVELS as readonly string[]).includes(v)) return v as LogLevel;
  if (['off', 'silent', 'false', 'none', '0'].includes(v)) return false;
  return fallback;
}

/** The level setting of an environment: `LOG_LEVEL`, else `GATEWAY_LOG_LEVEL`. */
export const logLevelSettingOfEnv = (env: SettingsSource): string | undefined => {
  const s = settingsOf(env);
  return s.LOG_LEVEL ?? s.GATEWAY_LOG_LEVEL ?? undefined;
};

/**
 * The level an environment asks for (`LOG_LEVEL`, else `GATEWAY_LOG_LEVEL`), see the module's doc:
 * the one place a level is read from configuration; unset or unknown → `info` (`error` under a test
 * runner).
 */
export function logLevelOfEnv(env: SettingsSource): LogLevel | false {
  const s = settingsOf(env);
  const dflt: LogLevel = s.NODE_ENV === 'test' ? 'error' : 'info';
  return parseLogLevel(logLevelSettingOfEnv(s), dflt);
}

/** A `LogWriter` that redacts each log's attributes and message before the next writer sees them. */
export class RedactingLogWriter implements LogWriter {
  constructor(private readonly next: LogWriter) {}

  write(level: LogLevel, attrs: Attributes | null | undefined, msg: string | null | undefined): void | Promise<void> {
    return this.next.write(level, attrs ? (redactValue(attrs) as Attributes) : attrs, msg ? redactText(msg) : msg);
  }

  flush(): void | Promise<void> {
    return this.next.flush?.();
  }
}

const logContext = new AsyncLocalStorage<Record<string, string>>();

/** Runs `fn` with a log context of its own (see `setLogContext`). */
export const withLogContext = <T>(fn: () => T): T => logContext.run({}, fn);

/** Adds attributes (e.g. `operationId`) to every line logged from here on in the current log context. */
export function setLogContext(attrs: Record<string, string>): void {
  const store = logContext.getStore();
  if (store) Object.assign(store, attrs);
}

/** Ids of operations as they may be logged (the gateway's are UUIDs). */
const LOGGABLE_ID = /^[\w-]{1,64}$/;

/**
 * Subgraph plugin: each request gets a log context naming the operation it serves (the gateway's
 * id, from `header`).
 */
export function useRequestLogContext<T extends Record<string, unknown>>(header: string): Plugin<T> {
  return {
    instrumentation: {
      request: ({ request }, wrapped) => withOperationLogContext(request.headers.get(header), wrapped),
    },
  };
}

/** Runs `fn` in a log context of its own naming operation `id` (when it may be logged), as `useRequestLogContext` runs a request. */
export function withOperationLogContext<T>(id: string | null, fn: () => T): T {
  return withLogContext(() => {
    if (id && LOGGABLE_ID.test(id)) setLogContext({ operationId: id });
    return fn();
  });
}

/** Adds the log context (`operationId`) and the active trace's `traceId` and `spanId` to each log's attributes. */
export class TraceIdLogWriter implements LogWriter {
  constructor(private readonly next: LogWriter) {}

  write(level: LogLevel, attrs: Attributes | null | undefined, msg: string | null | undefined): void | Promise<void> {
    const context = logContext.getStore();
    const span = trace.getActiveSpan()?.spanContext();
    const traced = span && trace.isSpanContextValid(span) ? { traceId: span.traceId, spanId: span.spanId } : null;
    if (!traced && !context) return this.next.write(level, attrs, msg);
    const base = Array.isArray(attrs) ? { attrs } : (attrs ?? {});
    return this.next.write(level, { ...context, ...base, ...traced }, msg);
  }

  flush(): void | Promise<void> {
    return this.next.flush?.();
  }
}

/** One JSON line per log on a stream: `{"level", "time", "msg", ...attributes}`. */
export class JsonLineWriter implements LogWriter {
  constructor(private readonly out: NodeJS.WritableStream = process.stdout) {}

  write(level: LogLevel, attrs: Attributes | null | undefined, msg: string | null | undefined): void {
    const fields = Array.isArray(attrs) ? { attrs } : (attrs ?? {});
    this.out.write(`${jsonStringify({ level, time: new Date().toISOString(), ...(msg ? { msg } : {}), ...fields })}\n`);
  }
}

// Until a process sets it at start: the level the process's environment asks for, read leniently
// (a bad value is refused by the start's `loadSettings`, not by importing this module).
let level: LogLevel | false = parseLogLevel(processSetting('LOG_LEVEL') ?? processSetting('GATEWAY_LOG_LEVEL'), processSetting('NODE_ENV') === 'test' ? 'error' : 'info');
let sink: LogWriter = new JsonLineWriter();

/** Where the process logger's lines go, after redaction and trace ids (tests capture them here). */
export function logTo(writer: LogWriter | null): void {
  sink = writer ?? new JsonLineWriter();
}

/** Sets the process logger's level (see `parseLogLevel`). */
export function setLogLevel(value: LogLevel | false): void {
  level = value;
}

/** The process's logger (its level and destination can change after modules took it). */
export const log = new Logger({
  level: () => level,
  writers: [new RedactingLogWriter(new TraceIdLogWriter({ write: (l, a, m) => sink.write(l, a, m), flush: () => sink.flush?.() }))],
});

/** A logger writing, redacted and with trace ids, to `writer` alone (tests). */
export const loggerTo = (writer: LogWriter, lvl: LogLevel | false = 'trace'): Logger => new Logger({ level: lvl, writers: [new RedactingLogWriter(new TraceIdLogWriter(writer))] });

const ROUTED = Symbol.for('openapi-supergraph.logged-console');

/**
 * Routes the process's `console.info`, `warn`, `error` and `debug` lines into the logger at their
 * level (a JSON line, redacted, with the trace id), and keeps `console.log` plain but redacted.
 * Idempotent.
 */
export function routeConsole(target: Console = console): void {
  const marked = target as unknown as Record<symbol, boolean>;
  if (marked[ROUTED]) return;
  redactConsole(target);
  target.info = (...args: unknown[]): void => log.info(formatRedacted(...args));
  target.warn = (...args: unknown[]): void => log.warn(formatRedacted(...args));
  target.error = (...args: unknown[]): void => log.error(formatRedacted(...args));
  target.debug = (...args: unknown[]): void => log.debug(formatRedacted(...args));
  marked[ROUTED] = true;
}
