/**
 * The gateway's logger: the Hive runtime's `Logger` at the configured level, writing through the
 * project's redaction (`subgraphs/runtime/redact.ts`), so that no log line at any level, `debug`
 * included (which logs every subgraph request with its headers and every graphql-ws connection with
 * its params), holds a token, an API key, a password or the layer secret.
 */
import { ConsoleLogWriter, Logger, type Attributes, type LogLevel, type LogWriter } from '@graphql-hive/gateway-runtime';
import { redactConsole, redactText, redactValue, registerSecrets } from '../subgraphs/runtime/redact.ts';

const LEVELS: readonly LogLevel[] = ['trace', 'debug', 'info', 'warn', 'error'];

/**
 * A log level from configuration (`GATEWAY_LOG_LEVEL`): `trace`, `debug`, `info`, `warn`, `error`,
 * or `off`/`silent`/`false`/`none` for no log at all; unset or unknown → `error`.
 */
export function parseLogLevel(value: string | null | undefined): LogLevel | false {
  const v = (value ?? '').trim().toLowerCase();
  if ((LEVELS as readonly string[]).includes(v)) return v as LogLevel;
  if (['off', 'silent', 'false', 'none', '0'].includes(v)) return false;
  return 'error';
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

export interface GatewayLoggerOptions {
  /** `GATEWAY_LOG_LEVEL` of the stack's environment (see `parseLogLevel`). */
  level?: string | null;
  /** Literal secrets of the stack's configuration (`OPENAPI_TOKEN`, `OPENAPI_APIKEY`, `LAYER_SECRET`). */
  secrets?: Array<string | null | undefined>;
  /** Where the lines go. @default a `ConsoleLogWriter` */
  writer?: LogWriter;
}

/**
 * The gateway runtime's logger. Also registers the secrets and routes the process's `console`
 * lines through the same redaction (see `redactConsole`): the project's own `console.error(err)`
 * lines (subgraph server, proxy, risk files, stack) print errors that could carry a request's
 * headers or a signed URL.
 */
export function createGatewayLogger(opts: GatewayLoggerOptions = {}): Logger {
  registerSecrets(opts.secrets ?? []);
  redactConsole();
  return new Logger({ level: parseLogLevel(opts.level), writers: [new RedactingLogWriter(opts.writer ?? new ConsoleLogWriter())] });
}
