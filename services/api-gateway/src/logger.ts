import { createServiceLogger, REDACT_PATHS, serviceLoggerOptions } from '@trawl/platform';
import type { DestinationStream, Logger, LoggerOptions } from 'pino';

/** Paths redacted from every log line (the platform's one list). */
export { REDACT_PATHS };

export function gatewayLoggerOptions(level: string): LoggerOptions {
  return serviceLoggerOptions('api-gateway', level);
}

export function createGatewayLogger(level = 'info', destination?: DestinationStream): Logger {
  return createServiceLogger('api-gateway', level, destination);
}
