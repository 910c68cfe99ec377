import { Worker } from 'node:worker_threads';
import type { RemoteError, TaskMessage, TaskWorkerMessage } from './protocol.ts';

export interface TaskPoolOptions {
  /** Named in errors (`<name> pool`). */
  name: string;
  /** The worker module: it calls serveTasks (see serve-tasks.ts). */
  entry: URL;
  /** Worker threads at most (at least 1). They start at the first task, not before. */
  size: number;
  /** Tasks that may wait for a worker beyond the ones running; more: `saturated` (default size×8). */
  maxQueued?: number;
  /** Told when a worker is replaced (a task ran past its deadline, or the worker exited). */
  onReplace?: (info: { reason: 'deadline' | 'exited'; task?: string; code?: number }) => void;
}

export interface TaskPoolStats {
  size: number;
  /** Workers started since the pool was made. */
  started: number;
  /** Workers terminated because a task ran past its deadline. */
  terminated: number;
  /** Workers that exited on their own (crash, out of memory, a start-up failure). */
  exited: number;
  /** Tasks running or waiting. */
  inFlight: number;
}

/**
 * Why a task did not give a value: `saturated` (every worker busy and the queue full, or the wait
 * for a worker as long as the deadline), `timeout` (it ran past its deadline: its worker was
 * terminated and replaced), `exited` (its worker died under it, or no worker could start), `failed`
 * (the handler threw: `remote` holds the error as data), `closed`.
 */
export type TaskErrorKind = 'saturated' | 'timeout' | 'exited' | 'failed' | 'closed';

export class TaskPoolError extends Error {
  constructor(
    readonly kind: TaskErrorKind,
    message: string,
    readonly remote?: RemoteError,
  ) {
    super(message);
    this.name = 'TaskPoolError';
  }
}

export interface TaskPool {
  /**
   * Runs `task` on `payload` in a worker (copied by structured clone; `transfer` moves buffers
   * instead). The deadline runs from the moment a worker takes the task; a task still running then
   * has its worker terminated (CPU-bound code cannot be stopped any other way) and replaced.
   */
  run<T>(
    task: string,
    payload: unknown,
    o: { timeoutMs: number; transfer?: readonly ArrayBuffer[] },
  ): Promise<T>;
  stats(): TaskPoolStats;
  /**
   * Starts the workers not started yet (up to `size`) without waiting for tasks: a service calls it
   * once it listens, so that no request pays a worker's start-up (loading its code takes about a
   * second of CPU) and none lands in the middle of traffic.
   */
  warm(): void;
  close(): Promise<void>;
}

interface Task {
  readonly id: number;
  readonly task: string;
  readonly payload: unknown;
  readonly transfer: readonly ArrayBuffer[] | undefined;
  readonly timeoutMs: number;
  readonly resolve: (v: unknown) => void;
  readonly reject: (e: Error) => void;
  timer: ReturnType<typeof setTimeout> | undefined;
}

interface PoolWorker {
  readonly worker: Worker;
  ready: boolean;
  alive: boolean;
  task: Task | undefined;
  error: Error | undefined;
}

/** The shortest wait for a worker before `saturated` (a worker starting takes up to a second). */
const MIN_WAIT_MS = 5_000;

/**
 * A small pool of worker threads for CPU-bound tasks with a hard deadline, so that the thread
 * answering HTTP only posts messages (the design of the analyzers' analysis pool, without its
 * batching: one task per worker at a time). Workers start on demand, up to `size`, and stay.
 */
export function createTaskPool(opts: TaskPoolOptions): TaskPool {
  const size = Math.max(1, Math.floor(opts.size));
  const maxQueued = Math.max(0, Math.floor(opts.maxQueued ?? size * 8));
  const workers: PoolWorker[] = [];
  const queue: Task[] = [];
  let seq = 0;
  let closed = false;
  let started = 0;
  let terminated = 0;
  let exited = 0;
  let running = 0;

  function settle(t: Task): void {
    if (t.timer !== undefined) clearTimeout(t.timer);
    t.timer = undefined;
  }

  function spawn(): PoolWorker {
    const worker = new Worker(opts.entry);
    // a pool left open must not keep the process alive
    worker.unref();
    const w: PoolWorker = { worker, ready: false, alive: true, task: undefined, error: undefined };
    started++;
    worker.on('message', (m: TaskWorkerMessage) => onMessage(w, m));
    worker.on('error', (err) => {
      w.error = err; // followed by 'exit'
    });
    worker.on('exit', (code) => onExit(w, code));
    workers.push(w);
    return w;
  }

  function remove(w: PoolWorker): void {
    w.alive = false;
    const i = workers.indexOf(w);
    if (i >= 0) workers.splice(i, 1);
  }

  function onMessage(w: PoolWorker, m: TaskWorkerMessage): void {
    if (m.t === 'ready') {
      w.ready = true;
      pump();
      return;
    }
    const t = w.task;
    if (!t || t.id !== m.id) return; // its deadline passed meanwhile
    w.task = undefined;
    running--;
    settle(t);
    if (m.t === 'done') t.resolve(m.value);
    else
      t.reject(
        new TaskPoolError(
          'failed',
          `${opts.name} task ${t.task} failed: ${m.error.message}`,
          m.error,
        ),
      );
    pump();
  }

  function onExit(w: PoolWorker, code: number): void {
    if (!w.alive) return; // terminated by the pool
    remove(w);
    exited++;
    const t = w.task;
    if (t) {
      w.task = undefined;
      running--;
      settle(t);
      t.reject(
        new TaskPoolError('exited', `${opts.name} worker exited (code ${code}) during ${t.task}`),
      );
    }
    opts.onReplace?.({ reason: 'exited', code, ...(t ? { task: t.task } : {}) });
    if (!w.ready && !workers.some((o) => o.ready)) {
      // it could not start, nor could any other: fail the waiting tasks rather than loop
      const why = w.error?.message ?? `exit code ${code}`;
      for (const q of queue.splice(0)) {
        settle(q);
        q.reject(new TaskPoolError('exited', `${opts.name} worker could not start: ${why}`));
      }
      return;
    }
    pump();
  }

  function onDeadline(w: PoolWorker, t: Task): void {
    t.timer = undefined;
    if (w.task !== t) return;
    w.task = undefined;
    running--;
    terminated++;
    remove(w);
    void w.worker.terminate();
    t.reject(
      new TaskPoolError('timeout', `${opts.name} task ${t.task} ran past ${t.timeoutMs} ms`),
    );
    opts.onReplace?.({ reason: 'deadline', task: t.task });
    // the replacement, started now so that the next task finds it ready
    if (!closed) spawn();
    pump();
  }

  /** Gives waiting tasks to idle ready workers; starts workers (up to size) for the others. */
  function pump(): void {
    if (closed) return;
    for (const w of workers) {
      if (queue.length === 0) break;
      if (!w.ready || w.task) continue;
      const t = queue.shift() as Task;
      settle(t); // its wait bound
      w.task = t;
      running++;
      t.timer = setTimeout(() => onDeadline(w, t), t.timeoutMs);
      const m: TaskMessage = { id: t.id, task: t.task, payload: t.payload };
      w.worker.postMessage(m, t.transfer ? [...t.transfer] : undefined);
    }
    const starting = workers.filter((w) => !w.ready).length;
    let want = Math.min(queue.length - starting, size - workers.length);
    while (want-- > 0) spawn();
  }

  return {
    run<T>(
      task: string,
      payload: unknown,
      o: { timeoutMs: number; transfer?: readonly ArrayBuffer[] },
    ): Promise<T> {
      if (closed) return Promise.reject(new TaskPoolError('closed', `${opts.name} pool is closed`));
      if (running + queue.length >= size + maxQueued) {
        return Promise.reject(
          new TaskPoolError('saturated', `${opts.name} pool is busy (${size + maxQueued} tasks)`),
        );
      }
      return new Promise<T>((resolve, reject) => {
        seq = seq >= 0x7fffffff ? 1 : seq + 1;
        const t: Task = {
          id: seq,
          task,
          payload,
          transfer: o.transfer,
          timeoutMs: o.timeoutMs,
          resolve: resolve as (v: unknown) => void,
          reject,
          timer: undefined,
        };
        // waiting for a worker is bounded too (as long as the deadline, and long enough for a worker
        // to start): then `saturated`
        const waitMs = Math.max(o.timeoutMs, MIN_WAIT_MS);
        t.timer = setTimeout(() => {
          t.timer = undefined;
          const i = queue.indexOf(t);
          if (i < 0) return;
          queue.splice(i, 1);
          reject(
            new TaskPoolError('saturated', `${opts.name} pool: no worker free for ${waitMs} ms`),
          );
        }, waitMs);
        queue.push(t);
        pump();
      });
    },
    stats: () => ({ size, started, terminated, exited, inFlight: running + queue.length }),
    warm() {
      if (closed) return;
      while (workers.length < size) spawn();
    },
    async close() {
      if (closed) return;
      closed = true;
      const all = workers.splice(0);
      const left = [...queue.splice(0)];
      for (const w of all) {
        w.alive = false;
        if (w.task) left.push(w.task);
        w.task = undefined;
      }
      running = 0;
      for (const t of left) {
        settle(t);
        t.reject(new TaskPoolError('closed', `${opts.name} pool closed`));
      }
      await Promise.all(all.map((w) => w.worker.terminate()));
    },
  };
}
