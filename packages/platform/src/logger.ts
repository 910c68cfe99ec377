/** The slice of a pino logger the adapters use; pass a pino child logger. */
export interface PlatformLogger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

const noop = (): void => {};
/** A logger that writes nothing. */
export const silentLogger: PlatformLogger = { debug: noop, info: noop, warn: noop, error: noop };

/** Describes an error for a log line without its stack or any secret-bearing URL. */
export function errorInfo(err: unknown): { message: string; code?: string } {
  if (err instanceof Error) {
    const code = (err as { code?: unknown }).code;
    return typeof code === 'string' ? { message: err.message, code } : { message: err.message };
  }
  return { message: String(err) };
}
