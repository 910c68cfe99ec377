import type { Email } from '@trawl/contracts';
import { createWorkerPool, type WorkerPool, WorkerPoolError } from '@trawl/platform/worker-pool';
import { type ParseInput, parseTask } from './tasks.ts';

/** Where the inline milter parses a message (ADR 024): small ones here, large ones in a worker. */
export interface ParseWork {
  /**
   * The message as an Email. A parse failure rejects with the parser's error; a large message
   * whose worker ran past `deadlineMs` or died rejects with a WorkerPoolError (`timeout`,
   * `exited`); a full pool with one of kind `saturated` (try again later).
   */
  parse(input: ParseInput): Promise<Email>;
  /** The pool, once a large message has needed it (tests). */
  pool(): WorkerPool | undefined;
  close(): Promise<void>;
}

export interface ParseWorkOptions {
  /** Worker threads (0: every message on the milter's thread). */
  workers: number;
  /** Messages up to this many bytes are parsed on the milter's thread (a round trip costs more). */
  inlineMaxBytes: number;
  /** A parse in a worker still running after this long has its worker replaced. */
  deadlineMs: number;
  /** Parses that may wait for a worker beyond the running ones; more: `saturated`. */
  maxQueued: number;
}

/** Large messages parsed past this size in a worker: the gateway's threshold (issue 15). */
export const DEFAULT_PARSE_WORK: ParseWorkOptions = {
  workers: 1,
  inlineMaxBytes: 256 * 1024,
  deadlineMs: 10_000,
  maxQueued: 16,
};

const ENTRY = new URL('./worker-boot.mjs', import.meta.url);

/**
 * The inline milter's parsing: the thread that answers every milter session never spends the
 * hundreds of milliseconds a message of megabytes takes to parse (the gateway's CPU work does the
 * same for POST /analyze/raw). The worker starts on the first large message.
 */
export function createParseWork(o: ParseWorkOptions): ParseWork {
  let pool: WorkerPool | undefined;
  return {
    async parse(input) {
      if (o.workers === 0 || input.bytes.byteLength <= o.inlineMaxBytes) return parseTask(input);
      pool ??= createWorkerPool({
        name: 'milter parse',
        entry: ENTRY,
        size: o.workers,
        maxQueued: o.maxQueued,
        perWorker: 1,
        deadlineFrom: 'dispatch',
      });
      const b = input.bytes;
      // a view into a larger buffer would be copied whole: copy just the message
      const bytes = b.byteOffset === 0 && b.byteLength === b.buffer.byteLength ? b : b.slice();
      try {
        return await pool.run<Email>(['parse', { ...input, bytes }], {
          timeoutMs: o.deadlineMs,
          label: 'parse',
        });
      } catch (err) {
        // the parser's own refusal, as the parser on this thread would have thrown it
        if (err instanceof WorkerPoolError && err.kind === 'failed' && err.remote)
          throw Object.assign(new Error(err.remote.message), { code: err.remote.code });
        throw err;
      }
    },
    pool: () => pool,
    async close() {
      await pool?.close();
    },
  };
}
