import { errorInfo, type PlatformLogger } from './logger.ts';

/** One step of a shutdown: a name (for the logs and `order()`) and what it closes. */
interface ShutdownStep {
  name: string;
  close: () => unknown;
}

/**
 * The ordered stop of an assembly (ADR 021): each part is registered as it is opened, and `close()`
 * stops them in the reverse order (the last opened first: stop taking work, then finish it, then
 * close the clients), each once, the next one even when one fails.
 */
export interface Shutdown {
  /** Registers what closes the part just opened. */
  add(name: string, close: () => unknown): void;
  /** The step names in the order `close()` runs them. */
  order(): string[];
  /**
   * Runs every step once, last registered first. A step that throws is logged and the others still
   * run; the first error is thrown once all have run. A second call waits for the first.
   */
  close(): Promise<void>;
}

/** A stack of closers: parts registered as they open, closed last-first, each once (ADR 021). */
export function createShutdown(logger?: Pick<PlatformLogger, 'warn'>): Shutdown {
  const steps: ShutdownStep[] = [];
  let closing: Promise<void> | undefined;
  return {
    add(name, close) {
      if (closing) throw new Error(`shutdown: ${name} registered after close()`);
      steps.push({ name, close });
    },
    order: () => steps.map((s) => s.name).reverse(),
    close() {
      closing ??= (async () => {
        let first: unknown;
        for (const step of [...steps].reverse()) {
          try {
            await step.close();
          } catch (err) {
            first ??= err;
            logger?.warn({ err: errorInfo(err), step: step.name }, 'error while closing');
          }
        }
        if (first !== undefined) throw first;
      })();
      return closing;
    },
  };
}

/** The stop half every assembly returns: its ordered close() and the names of its steps. */
export interface Assembled {
  /** The steps of close(), in order (what a describe() reports). */
  stopOrder(): string[];
  close(): Promise<void>;
}

/**
 * Runs an assembly's `build` with a fresh Shutdown (ADR 021): `build` registers each part as it
 * opens it; when `build` throws, what it opened is closed, last first, and the error rethrown;
 * otherwise its result comes back with the stop half (`close`, `stopOrder`) added.
 */
export async function assemble<T extends object>(
  logger: Pick<PlatformLogger, 'warn'> | undefined,
  build: (shutdown: Shutdown) => Promise<T>,
): Promise<T & Assembled> {
  const shutdown = createShutdown(logger);
  try {
    const part = await build(shutdown);
    return Object.assign(part, {
      stopOrder: () => shutdown.order(),
      close: () => shutdown.close(),
    });
  } catch (err) {
    await shutdown.close().catch(() => undefined);
    throw err;
  }
}
