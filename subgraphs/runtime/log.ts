/**
 * The process's one logger: the Hive runtime's own (`@graphql-hive/logger`), shared by the gateway,
 * the subgraphs and the services. Each log is one JSON line (`level`, `msg`, `time`, its attributes,
 * and `traceId`/`spanId` when a trace is in progress) on stdout, redacted before it is written
 * (`redact.ts`: no token, API key, password or the layer secret at any level, `trace` included).
 *
 * Level: `LOG_LEVEL` (else `GATEWAY_LOG_LEVEL`, kept for compatibility): `trace`, `debug`, `info`,
 * `warn`, `error`, or `off`; default `info`, `error` under a test runner (`NODE_ENV=test`).
 * `console.info|warn|error|debug` lines of the process go through the same logger (`routeConsole`);
 * `console.log` stays the services' plain banner (where each part listens).
 */
import { jsonStringify, Logger, type Attributes, type LogLevel, type LogWriter } from '@graphql-hive/logger';
import { trace } from '@opentelemetry/api';
import { formatRedacted, redactConsole, redactText, redactValue } from './redact.ts';

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

/** The level an environment asks for (`LOG_LEVEL`, else `GATEWAY_LOG_LEVEL`), see the module's doc. */
export function logLevelOfEnv(env: NodeJS.ProcessEnv): LogLevel | false {
  const dflt: LogLevel = env.NODE_ENV === 'test' ? 'error' : 'info';
  return parseLogLevel(env.LOG_LEVEL?.trim() || env.GATEWAY_LOG_LEVEL, dflt);
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

/** Adds the active trace's `traceId` and `spanId` to each log's attributes. */
export class TraceIdLogWriter implements LogWriter {
  constructor(private readonly next: LogWriter) {}

  write(level: LogLevel, attrs: Attributes | null | undefined, msg: string | null | undefined): void | Promise<void> {
    const span = trace.getActiveSpan()?.spanContext();
    if (!span || !trace.isSpanContextValid(span)) return this.next.write(level, attrs, msg);
    const base = Array.isArray(attrs) ? { attrs } : (attrs ?? {});
    return this.next.write(level, { ...base, traceId: span.traceId, spanId: span.spanId }, msg);
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

let level: LogLevel | false = logLevelOfEnv(process.env);
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
export const loggerTo = (writer: LogWriter, lvl: LogLevel | false = 'trace'): Logger =>
  new Logger({ level: lvl, writers: [new RedactingLogWriter(new TraceIdLogWriter(writer))] });

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
