import { parentPort, workerData } from 'node:worker_threads';
import {
  Outcome,
  type PoolMessage,
  type PoolWorkerMessage,
  type RemoteError,
  type TaskResult,
  type WorkerInit,
} from './protocol.ts';

/** The worker side of a pool: what runs a task, and what reads the pool's broadcasts. */
export interface WorkerServer {
  /**
   * Runs one task: synchronous CPU work, or a promise of it. `shared` is its batch's shared part
   * (one object for every task of the batch); `deadlineAt` its deadline (epoch ms).
   */
  run(input: never, shared: never, deadlineAt: number): unknown;
  /** A `broadcast` of the pool. */
  control?(data: never): void;
}

/** A worker's handlers by task name: synchronous CPU work, or a promise of it. */
export type TaskHandlers = Record<string, (payload: never) => unknown>;

function remoteError(err: unknown): RemoteError {
  if (!(err instanceof Error)) return { name: 'Error', message: String(err) };
  const e = err as Error & { code?: unknown; status?: unknown; problems?: unknown };
  return {
    name: e.name,
    message: e.message,
    ...(typeof e.code === 'string' ? { code: e.code } : {}),
    ...(typeof e.status === 'number' ? { status: e.status } : {}),
    ...(Array.isArray(e.problems)
      ? { problems: (e.problems as RemoteError['problems'] & unknown[]).map((p) => ({ ...p })) }
      : {}),
  };
}

function isThenable(v: unknown): v is PromiseLike<unknown> {
  return (
    v !== null &&
    (typeof v === 'object' || typeof v === 'function') &&
    typeof (v as { then?: unknown }).then === 'function'
  );
}

/** In a pool's worker thread: the `workerData` the pool's user gave (see WorkerPoolOptions). */
export function workerInit<T>(): T {
  return (workerData as WorkerInit).data as T;
}

/**
 * The worker-thread side of a worker pool: runs the tasks of each batch in order, one at a time,
 * and posts the batch's results in one message when it ends. Before each task it writes the task's
 * seq to the shared state word: that is how the pool knows which task a worker is running, sees it
 * stall, and knows which task to blame when it terminates the worker at a deadline. Tells the pool
 * it is ready once the module that calls this has loaded.
 */
export function serveWorker(server: WorkerServer): void {
  if (!parentPort) throw new Error('serveWorker runs in a worker thread');
  const port: NonNullable<typeof parentPort> = parentPort;
  const current = new Int32Array((workerData as WorkerInit).state);
  const queue: Extract<PoolMessage, { t: 'batch' }>[] = [];
  let running = false;

  async function runBatch(b: Extract<PoolMessage, { t: 'batch' }>): Promise<void> {
    const results: TaskResult[] = [];
    for (const [seq, input, deadlineAt] of b.tasks) {
      if (Date.now() >= deadlineAt) {
        results.push([seq, Outcome.expired, null]);
        continue;
      }
      Atomics.store(current, 0, seq);
      try {
        let value = server.run(input as never, b.shared as never, deadlineAt);
        if (isThenable(value)) value = await value;
        results.push([seq, Outcome.ok, value]);
      } catch (err) {
        results.push([seq, Outcome.failed, remoteError(err)]);
      } finally {
        Atomics.store(current, 0, 0);
      }
    }
    port.postMessage({ t: 'results', results } satisfies PoolWorkerMessage);
  }

  async function drain(): Promise<void> {
    running = true;
    try {
      for (let b = queue.shift(); b; b = queue.shift()) await runBatch(b);
    } finally {
      running = false;
    }
  }

  port.on('message', (m: PoolMessage) => {
    if (m.t === 'control') {
      server.control?.(m.data as never);
      return;
    }
    queue.push(m);
    if (!running) void drain();
  });
  port.postMessage({ t: 'ready' } satisfies PoolWorkerMessage);
}

/**
 * A worker that runs named tasks: the pool's task input is `[name, payload]`, given to the handler
 * of that name (see `taskInput`).
 */
export function serveTasks(handlers: TaskHandlers): void {
  serveWorker({
    run([task, payload]: [string, unknown]) {
      const handler = handlers[task];
      if (!handler) throw new Error(`no handler for task ${task}`);
      return handler(payload as never);
    },
  });
}
