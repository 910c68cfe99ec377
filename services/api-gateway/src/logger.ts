import { createServiceLogger, REDACT_PATHS, serviceLoggerOptions } from '@trawl/platform';
import { type DestinationStream, type Logger, type LoggerOptions, pino } from 'pino';

/** Paths redacted from every log line (the platform's one list). */
export { REDACT_PATHS };

/** The pino options of the gateway: its level and redacted paths. */
export function gatewayLoggerOptions(level: string): LoggerOptions {
  return serviceLoggerOptions('api-gateway', level);
}

/** The gateway's pino logger. */
export function createGatewayLogger(level = 'info', destination?: DestinationStream): Logger {
  return createServiceLogger('api-gateway', level, destination);
}

/**
 * Where the gateway's main.ts writes its log (stdout by default): buffered, so that the one line
 * each request logs does not cost a write (and a thread-pool round trip) of its own. Lines leave
 * when 4 KiB are buffered and at least every 250 ms; pino flushes the rest when the process exits
 * (SIGTERM, a fatal error). A SIGKILL loses at most those last 250 ms / 4 KiB.
 */
export function gatewayLogDestination(dest: number | string = 1): DestinationStream {
  return pino.destination({ dest, sync: false, minLength: 4096, periodicFlush: 250 });
}
