import { type AppConfig, type ConfigNeeds, loadConfigOrExit } from '@trawl/config';
import { errorInfo, type PlatformLogger } from './logger.ts';
import { packageVersion } from './service-logger.ts';

/** What a service's `start` answers: how to stop it, where to say so, and how long it may take. */
export interface RunningService {
  /** Closes what `start` opened, in order: stop taking work first, close the clients last. */
  stop(signal: string): Promise<void>;
  /** Where the stop and its errors are logged; plain lines on stderr when absent. */
  logger?: Pick<PlatformLogger, 'info' | 'error'>;
  /**
   * The longest a graceful stop may take (default 30 s): a stop that hangs (a socket that never
   * closes, a job that ignores its deadline) then ends with exit code 1 instead of never.
   */
  hardExitMs?: number;
}

/** The slice of `process` runService uses (a test passes a fake). */
export interface ServiceProcess {
  on(signal: 'SIGTERM' | 'SIGINT', listener: () => void): unknown;
  exit(code: number): void;
  stderr: { write(text: string): unknown };
}

/** How long a service has to stop after SIGTERM before it exits anyway. */
export const DEFAULT_HARD_EXIT_MS = 30_000;

/**
 * The start-up and shutdown of every Trawl process (each service's `main.ts` and embedded mode):
 * runs `start`; a start that throws prints `<name> failed to start: <message>` and exits with 1.
 * Then the first SIGTERM or SIGINT stops the service once: it is logged, `stop` runs under a
 * hard-exit timer (`hardExitMs`), and the process exits with 0, or 1 when `stop` threw or the
 * timer fired. Answers when start-up is over (after a failed start, once exit was called).
 */
export async function runService(
  name: string,
  start: () => Promise<RunningService>,
  proc: ServiceProcess = process,
): Promise<void> {
  let svc: RunningService;
  try {
    svc = await start();
  } catch (err) {
    proc.stderr.write(`${name} failed to start: ${errorInfo(err).message}\n`);
    proc.exit(1);
    return;
  }
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    const hard = setTimeout(() => {
      if (svc.logger) svc.logger.error({ signal }, 'stop took too long: exiting');
      else proc.stderr.write(`${name}: stop took too long: exiting\n`);
      proc.exit(1);
    }, svc.hardExitMs ?? DEFAULT_HARD_EXIT_MS);
    hard.unref();
    if (svc.logger) svc.logger.info({ signal }, 'shutting down');
    let code = 0;
    try {
      await svc.stop(signal);
    } catch (err) {
      code = 1;
      if (svc.logger) svc.logger.error({ err: errorInfo(err) }, 'error while shutting down');
      else proc.stderr.write(`${name}: error while stopping: ${errorInfo(err).message}\n`);
    }
    clearTimeout(hard);
    proc.exit(code);
  };
  proc.on('SIGTERM', () => void stop('SIGTERM'));
  proc.on('SIGINT', () => void stop('SIGINT'));
}

/**
 * The `main.ts` of a scale-out service: runService, where start-up first loads the configuration
 * for `needs` (the servers and secrets the service uses; on a problem: printed, exit 1, as
 * loadConfigOrExit does) and reads the service's version from the package.json beside its src/
 * (`mainUrl`: the main.ts's `import.meta.url`), then calls `start` with them.
 */
export function runServiceMain(
  name: string,
  mainUrl: string,
  needs: readonly (keyof ConfigNeeds)[],
  start: (cfg: AppConfig, version: string) => Promise<RunningService>,
): Promise<void> {
  return runService(name, async () => {
    const cfg = loadConfigOrExit({
      needs: {
        postgres: needs.includes('postgres'),
        rabbitmq: needs.includes('rabbitmq'),
        redis: needs.includes('redis'),
        secretKey: needs.includes('secretKey'),
      },
    });
    return start(cfg, packageVersion(new URL('../package.json', mainUrl)));
  });
}

/**
 * `p`, or a rejection once `ms` have passed without it settling: for the steps of a shutdown that
 * wait on a peer (a LOGOUT, a graceful close) and must not wait for ever. The timer is cleared
 * either way.
 */
export function within<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  return Promise.race([
    p,
    new Promise<T>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`not settled within ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}
