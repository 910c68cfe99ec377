import { readFileSync } from 'node:fs';
import { type DestinationStream, type Logger, type LoggerOptions, pino } from 'pino';

/**
 * Paths redacted from every log line of every Trawl service: credentials, cookies, keys, passwords,
 * tokens. One list, so no service logs what another hides.
 */
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
  'auth.pass',
  '*.auth.pass',
];

/** The pino options of a service: its name, level and redacted paths. */
export function serviceLoggerOptions(service: string, level: string): LoggerOptions {
  return { level, base: { service }, redact: { paths: REDACT_PATHS, censor: '[redacted]' } };
}

/** The pino logger of a service's main.ts: its name on every line, secrets redacted. */
export function createServiceLogger(
  service: string,
  level = 'info',
  destination?: DestinationStream,
): Logger {
  const options = serviceLoggerOptions(service, level);
  return destination ? pino(options, destination) : pino(options);
}

/**
 * The logger a service's app uses, bound to its name without repeating the `service` key: pino
 * writes a child's bindings after its parent's, so `child({service})` of a logger that already has
 * one (createServiceLogger's `base`) printed `"service"` twice on every line. The parent itself
 * when it already names this service; a child with `component` when it names another (embedded
 * mode: one process, one `service`); else a child with `service`.
 */
export function serviceChild(parent: Logger, service: string): Logger {
  const bound = parent.bindings().service;
  if (bound === service) return parent;
  return parent.child(bound === undefined ? { service } : { component: service });
}

/** The `version` of the package.json beside a service's src/ (`new URL('../package.json', import.meta.url)`). */
export function packageVersion(packageJsonUrl: URL): string {
  try {
    const pkg = JSON.parse(readFileSync(packageJsonUrl, 'utf8')) as { version?: string };
    return pkg.version ?? '0.0.0';
  } catch {
    return '0.0.0';
  }
}
