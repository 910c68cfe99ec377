import pino, { type Logger, type LoggerOptions } from 'pino';

/** Paths redacted from every log line: credentials, cookies, keys, passwords, tokens. */
export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-internal-api-key"]',
  'res.headers["set-cookie"]',
  'headers.authorization',
  'headers.cookie',
  'headers["x-internal-api-key"]',
  'password',
  '*.password',
  'password_hash',
  '*.password_hash',
  'secretKey',
  '*.secretKey',
  'internalApiKey',
  '*.internalApiKey',
  'access_token',
  '*.access_token',
  'refresh_token',
  '*.refresh_token',
];

export function gatewayLoggerOptions(level: string): LoggerOptions {
  return {
    level,
    base: { service: 'api-gateway' },
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
  };
}

export function createGatewayLogger(level = 'info', destination?: pino.DestinationStream): Logger {
  return destination
    ? pino(gatewayLoggerOptions(level), destination)
    : pino(gatewayLoggerOptions(level));
}
