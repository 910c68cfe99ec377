import { BadInputError, TransientError, TrawlError } from '@trawl/contracts';
import { MailUnparseableError } from '@trawl/mail';
import { createWorkerPool, type WorkerPool, WorkerPoolError } from '@trawl/platform/worker-pool';
import { GATEWAY_ERRORS } from '../errors.ts';
import {
  type CPU_TASKS,
  messageViewTask,
  type ParseRawInput,
  type ParseRawOutput,
  parseRawTask,
} from './tasks.ts';

export interface CpuWorkOptions {
  /** Worker threads (0: everything on the HTTP thread, as before). */
  workers: number;
  /**
   * Inputs up to this size run on the HTTP thread (a worker round trip costs more than they do);
   * larger ones in a worker. Bytes of a raw message; characters of a stored message's HTML.
   */
  inlineMaxBytes: number;
  /** A task in a worker still running after this long has its worker terminated and replaced. */
  deadlineMs: number;
  /** Tasks waiting for a worker beyond the running ones; more: 503 (default workers×8). */
  maxQueued?: number;
}

export const DEFAULT_CPU_WORK: CpuWorkOptions = {
  workers: 2,
  inlineMaxBytes: 256 * 1024,
  deadlineMs: 10_000,
};

/**
 * The gateway's CPU-heavy work (issue 15): parsing a raw submission and building the message view
 * (the HTML sanitizer). Small inputs run inline; large ones in a small pool of worker threads with a
 * hard deadline, so the thread that answers HTTP (and /health) stays free. A task past its deadline
 * has its worker terminated and replaced, and answers 422 TRAWL_ERR_MAIL_UNPARSEABLE as the parser's
 * own time bound does; a full pool answers 503 TRAWL_ERR_GATEWAY_BUSY with Retry-After.
 */
export interface CpuWork {
  parseRaw(input: ParseRawInput): Promise<ParseRawOutput>;
  /**
   * The message view's JSON text from a job row's stored Email (JSON text), null when unreadable.
   * A large one is read, sanitized and serialized in a worker.
   */
  messageView(jobId: string, stored: unknown): Promise<string | null>;
  /** The pool, once a task has needed it (tests and metrics). */
  pool(): WorkerPool | undefined;
  /** Starts the workers now (the gateway calls it once it listens); nothing with 0 workers. */
  warm(): void;
  close(): Promise<void>;
}

const ENTRY = new URL('./worker-boot.mjs', import.meta.url);

/** The gateway's CPU work: small inputs inline, large ones in the worker pool (ADR 022). */
export function createCpuWork(
  opts: CpuWorkOptions,
  hooks: { onReplace?: (info: { reason: string; task?: string }) => void } = {},
): CpuWork {
  let pool: WorkerPool | undefined;
  const onReplace = hooks.onReplace;
  const poolOf = (): WorkerPool => {
    // one task per worker at a time; its deadline counts once a worker has it, the wait for one is
    // bounded apart (then 503)
    pool ??= createWorkerPool({
      name: 'gateway CPU',
      entry: ENTRY,
      size: opts.workers,
      maxQueued: opts.maxQueued ?? opts.workers * 8,
      perWorker: 1,
      deadlineFrom: 'dispatch',
      ...(onReplace
        ? {
            onReplace: ({ reason, label }) =>
              onReplace({ reason, ...(label !== undefined ? { task: label } : {}) }),
          }
        : {}),
    });
    return pool;
  };
  const pooled = (size: number) => opts.workers > 0 && size > opts.inlineMaxBytes;

  async function run<K extends keyof typeof CPU_TASKS, T>(
    task: K,
    payload: Parameters<(typeof CPU_TASKS)[K]>[0],
    what: string,
  ): Promise<T> {
    try {
      return await poolOf().run<T>([task, payload], { timeoutMs: opts.deadlineMs, label: task });
    } catch (err) {
      throw gatewayError(err, what, opts.deadlineMs);
    }
  }

  return {
    async parseRaw(input) {
      if (!pooled(input.bytes.byteLength)) return parseRawTask(input);
      // a view into a larger buffer would be copied whole: copy just the message
      const b = input.bytes;
      const bytes = b.byteOffset === 0 && b.byteLength === b.buffer.byteLength ? b : b.slice();
      return run('parseRawRow', { ...input, bytes }, 'the message could not be parsed');
    },
    async messageView(jobId, stored) {
      const size = typeof stored === 'string' ? stored.length : 0;
      if (!pooled(size)) return messageViewTask({ jobId, stored });
      return run('messageView', { jobId, stored }, 'the message view could not be built');
    },
    pool: () => pool,
    warm() {
      if (opts.workers > 0) poolOf().warm();
    },
    async close() {
      await pool?.close();
    },
  };
}

/** A pool failure as the problem the client gets. */
function gatewayError(err: unknown, what: string, deadlineMs: number): Error {
  if (!(err instanceof WorkerPoolError)) return err as Error;
  switch (err.kind) {
    case 'saturated':
    case 'closed':
      return new TransientError(
        GATEWAY_ERRORS.busy,
        'the gateway is busy with other messages; retry shortly',
        {
          retryAfterSeconds: 2,
          cause: err,
        },
      );
    case 'timeout':
      return new MailUnparseableError(`${what} within ${deadlineMs} ms`, undefined, err);
    case 'exited':
      return new MailUnparseableError(`${what}: its worker failed`, undefined, err);
    default: {
      const r = err.remote;
      if (!r?.code) return new Error(err.message, { cause: err });
      const o = { status: r.status ?? 500, ...(r.problems ? { problems: r.problems } : {}) };
      return o.status < 500
        ? new BadInputError(r.code, r.message, o)
        : new TrawlError(r.code, r.message, o);
    }
  }
}
