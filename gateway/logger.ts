/**
 * The gateway's logger: the process's one logger (`platform/log.ts`: the Hive runtime's
 * `Logger`, JSON lines, trace ids, redaction), so that no log line at any level, `trace` and
 * `debug` included (which log every subgraph request with its headers and every graphql-ws
 * connection with its params), holds a token, an API key, a password or the layer secret.
 */
import type { GatewayPlugin, Logger, LogWriter } from '@graphql-hive/gateway-runtime';
import { log, loggerTo, parseLogLevel, RedactingLogWriter, routeConsole, setLogLevel, withLogContext } from '../platform/log.ts';
import { registerSecrets } from '../platform/redact.ts';
import { processSetting } from '../platform/settings.ts';

export { parseLogLevel, RedactingLogWriter };

export interface GatewayLoggerOptions {
  /**
   * `LOG_LEVEL` (or `GATEWAY_LOG_LEVEL`) of the stack's environment, read as `logLevelOfEnv` reads
   * it (unknown → the default); sets the process logger's level. @default the process's
   * (`LOG_LEVEL` of its environment)
   */
  level?: string | null;
  /** Literal secrets of the stack's configuration (`OPENAPI_TOKEN`, `OPENAPI_APIKEY`, `LAYER_SECRET`). */
  secrets?: Array<string | null | undefined>;
  /** Where the lines go instead of the process logger's (tests). */
  writer?: LogWriter;
}

/**
 * The gateway runtime's logger. Also registers the secrets and routes the process's `console`
 * lines through the same logger (see `routeConsole`): `console.error(err)` lines print errors that
 * could carry a request's headers or a signed URL.
 */
export function createGatewayLogger(opts: GatewayLoggerOptions = {}): Logger {
  registerSecrets(opts.secrets ?? []);
  routeConsole();
  const level = opts.level?.trim() ? parseLogLevel(opts.level, processSetting('NODE_ENV') === 'test' ? 'error' : 'info') : undefined;
  if (opts.writer) return loggerTo(opts.writer, level ?? 'trace');
  if (level !== undefined) setLogLevel(level);
  return log;
}

/**
 * Each operation's execution runs in a log context of its own, so that the lines it logs carry its
 * `operationId` (set by the cost plugin, which names the operation).
 */
export function useLogContext(): GatewayPlugin {
  return {
    instrumentation: {
      execute: (_payload, wrapped) => withLogContext(wrapped),
      subscribe: (_payload, wrapped) => withLogContext(wrapped),
    },
  };
}
