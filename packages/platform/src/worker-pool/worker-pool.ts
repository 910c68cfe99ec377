import { type ResourceLimits, Worker } from 'node:worker_threads';
import { backoffDelay } from '@trawl/contracts';
import {
  Outcome,
  type PoolMessage,
  type PoolWorkerMessage,
  type RemoteError,
  type WorkerInit,
} from './protocol.ts';

export interface WorkerPoolOptions {
  /** Named in errors (`<name> pool`). */
  name: string;
  /** The worker module: it calls serveWorker or serveTasks (see serve-tasks.ts). */
  entry: URL;
  /** Worker threads (at least 1). */
  size: number;
  /**
   * What each worker is given when it starts (`workerInit()` in it). Called at every start, so that
   * a replacement gets the current value (settings broadcast since).
   */
  workerData?: () => unknown;
  /** V8 heap limits of each worker: a worker over them exits and is replaced. */
  resourceLimits?: ResourceLimits;
  /** Tasks that may wait beyond one per worker; more: `saturated` (default: no bound). */
  maxQueued?: number;
  /**
   * Batches a worker holds at once (default: no bound; they queue in the worker, and the watch gives
   * a stalled worker's waiting tasks to the others). 1: a worker takes a batch when it is idle.
   */
  perWorker?: number;
  /**
   * When a task's deadline starts counting: at the call (`call`, the default: the deadline bounds
   * the caller's wait) or when a worker is handed the task (`dispatch`: the wait for a worker is
   * bounded apart, as long as the deadline and at least 5 s, then `saturated`).
   */
  deadlineFrom?: 'call' | 'dispatch';
  /** Told when a worker is replaced (a task ran past its deadline, or the worker exited). */
  onReplace?: (info: { reason: 'deadline' | 'exited'; label?: string; code?: number }) => void;
}

/** One task: its input (structured clone), deadline, a label for errors, and a caller's signal. */
export interface TaskSpec {
  input: unknown;
  timeoutMs: number;
  label?: string;
  signal?: AbortSignal | undefined;
}

export interface WorkerPoolStats {
  size: number;
  /** Workers started since the pool was made, the first ones included. */
  started: number;
  /** Workers terminated because a task ran past its deadline. */
  terminated: number;
  /** Workers that exited on their own (crash, out of memory, a start-up failure). */
  exited: number;
  /** Tasks running or waiting. */
  inFlight: number;
}

/**
 * Why a task did not give a value: `saturated` (the queue was full, or no worker took it within its
 * wait bound), `timeout` (past its deadline: its worker, if running it, was terminated and replaced;
 * or not run), `exited` (its worker died under it, or no worker could start: `exitCode`), `failed`
 * (the worker's code threw: `remote` holds the error as data), `aborted` (the caller's signal),
 * `closed`.
 */
export type WorkerPoolErrorKind =
  | 'saturated'
  | 'timeout'
  | 'exited'
  | 'failed'
  | 'aborted'
  | 'closed';

export class WorkerPoolError extends Error {
  constructor(
    readonly kind: WorkerPoolErrorKind,
    message: string,
    readonly remote?: RemoteError,
    readonly exitCode?: number,
  ) {
    super(message);
    this.name = 'WorkerPoolError';
  }
}

export interface WorkerPool {
  /**
   * Runs `tasks` in one worker, one after the other, with `shared` sent once for all of them
   * (each task's handler sees the same object). One promise per task, in order.
   */
  submit<T>(shared: unknown, tasks: readonly TaskSpec[]): Promise<T>[];
  /** One task alone (`submit(undefined, [task])`). */
  run<T>(input: unknown, o: { timeoutMs: number; label?: string }): Promise<T>;
  /** Posts `data` to every worker (its `control`); give new workers the same through `workerData`. */
  broadcast(data: unknown): void;
  /**
   * Starts every worker and waits until each has loaded its code, so that no task spends its
   * deadline on a start-up; one that cannot start closes the pool and throws its reason.
   */
  start(): Promise<void>;
  /** Starts the workers not started yet without waiting (otherwise they start at the first task). */
  warm(): void;
  stats(): WorkerPoolStats;
  /** Stops taking tasks, rejects every unfinished one (`closed`), terminates the workers. */
  close(): Promise<void>;
}

interface Task {
  readonly seq: number;
  readonly input: unknown;
  readonly timeoutMs: number;
  readonly label: string;
  readonly batch: Batch;
  readonly resolve: (v: unknown) => void;
  readonly reject: (e: Error) => void;
  /** The wait bound (queued, `dispatch`) or the deadline. */
  timer: ReturnType<typeof setTimeout> | undefined;
  /** Epoch ms; undefined until the deadline starts counting. */
  deadlineAt: number | undefined;
  worker: PoolWorker | undefined;
  settled: boolean;
  unlisten: (() => void) | undefined;
}

interface Batch {
  readonly shared: unknown;
  tasks: Task[];
}

interface PoolWorker {
  readonly worker: Worker;
  /** [0]: the seq of the task the worker is running (0 between tasks). */
  readonly state: Int32Array;
  /** Tasks posted to it and not yet answered (settled ones too, until the worker passes them). */
  readonly tasks: Map<number, Task>;
  /** Unsettled tasks among `tasks` (the load figure used to pick a worker). */
  load: number;
  /** Batches posted and not yet answered. */
  batches: number;
  alive: boolean;
  ready: boolean;
  /** The task seen running at the last watch, since when, and whether it has stalled. */
  watchSeq: number;
  watchSince: number;
  stalled: boolean;
  /** The last 'error' the worker reported (a start-up failure's reason). */
  error: Error | undefined;
  /** Settles when the worker has loaded its code (true) or exited before (false). */
  readonly up: Promise<boolean>;
  markUp: (ok: boolean) => void;
}

/** The shortest wait for a worker before `saturated` (`dispatch`: a worker starting takes ~1 s). */
const MIN_WAIT_MS = 5_000;
/**
 * After a task's deadline, if its worker had not started it, the pool looks again this much later:
 * a worker that started it just before the deadline (its clock and the timer's differ by a
 * millisecond or so) is then seen running it, and terminated.
 */
const RECHECK_MS = 25;
/** How often the pool looks for a stalled worker while tasks are in flight. */
const WATCH_MS = 50;
/** A worker running the same task this long is stalled: its waiting tasks go to the others. */
const STALL_MS = 100;

/**
 * The one pool of worker threads (ADR 022), for CPU-bound work with a hard deadline, so that the
 * thread that consumes the queue or answers HTTP only posts messages. `size` workers; a bounded
 * queue; each task has a timer at its deadline: if its worker is then running it, the worker is
 * terminated (synchronous code cannot be stopped any other way), the task rejected as a timeout and
 * a new worker started; a task not started by then is rejected and skipped. A worker that exits on
 * its own fails the task it was running and is replaced (with a back-off while workers cannot
 * start); the other tasks it held go to the other workers. `close()` rejects what is left, then
 * terminates the workers.
 */
export function createWorkerPool(opts: WorkerPoolOptions): WorkerPool {
  const size = Math.max(1, Math.floor(opts.size));
  const limit = size + Math.max(0, opts.maxQueued ?? Number.POSITIVE_INFINITY);
  const perWorker = Math.max(1, opts.perWorker ?? Number.POSITIVE_INFINITY);
  const fromCall = (opts.deadlineFrom ?? 'call') === 'call';
  const workers: PoolWorker[] = [];
  /** Batches waiting for a worker (or for one to be ready), first come first served. */
  const queue: Batch[] = [];
  const counts = { started: 0, terminated: 0, exited: 0 };
  let active = 0;
  let seq = 0;
  let closed = false;
  /** Every worker wanted now (start or warm), not only when tasks wait. */
  let wantAll = false;
  /** Consecutive workers that exited before they were ready: the next start backs off. */
  let startFailures = 0;

  const poolError = (kind: WorkerPoolErrorKind, why: string, remote?: RemoteError, code?: number) =>
    new WorkerPoolError(kind, `${opts.name} pool: ${why}`, remote, code);

  function fail(t: Task, e: WorkerPoolError): void {
    if (t.settled) return;
    settle(t);
    t.reject(e);
  }

  function settle(t: Task): void {
    t.settled = true;
    active--;
    if (t.timer !== undefined) clearTimeout(t.timer);
    t.timer = undefined;
    t.unlisten?.();
    if (t.worker) t.worker.load--;
  }

  function startDeadline(t: Task): void {
    if (t.deadlineAt !== undefined) return;
    if (t.timer !== undefined) clearTimeout(t.timer); // its wait bound
    t.deadlineAt = Date.now() + t.timeoutMs;
    t.timer = setTimeout(() => onDeadline(t), t.timeoutMs);
  }

  // ---- workers

  function spawn(): PoolWorker {
    const state = new Int32Array(new SharedArrayBuffer(4));
    const init: WorkerInit = {
      state: state.buffer as SharedArrayBuffer,
      data: opts.workerData?.(),
    };
    const worker = new Worker(opts.entry, {
      workerData: init,
      ...(opts.resourceLimits ? { resourceLimits: opts.resourceLimits } : {}),
    });
    // a pool left open must not keep the process alive
    worker.unref();
    let markUp: (ok: boolean) => void = () => {};
    const up = new Promise<boolean>((r) => {
      markUp = r;
    });
    const w: PoolWorker = {
      worker,
      state,
      tasks: new Map(),
      load: 0,
      batches: 0,
      alive: true,
      ready: false,
      watchSeq: 0,
      watchSince: 0,
      stalled: false,
      error: undefined,
      up,
      markUp,
    };
    counts.started++;
    worker.on('message', (m: PoolWorkerMessage) => onMessage(w, m));
    worker.on('error', (err) => {
      w.error = err; // followed by 'exit'
    });
    worker.on('exit', (code) => onExit(w, code));
    workers.push(w);
    return w;
  }

  function onMessage(w: PoolWorker, m: PoolWorkerMessage): void {
    if (m.t === 'ready') {
      w.ready = true;
      w.markUp(true);
      startFailures = 0;
      pump();
      return;
    }
    w.batches--;
    for (const [seq, outcome, value] of m.results) {
      const t = w.tasks.get(seq);
      if (!t) continue; // given to another worker meanwhile
      w.tasks.delete(seq);
      if (t.worker !== w || t.settled) continue;
      if (outcome === Outcome.ok) {
        settle(t);
        t.resolve(value);
      } else if (outcome === Outcome.expired) {
        fail(t, timeoutError(t));
      } else {
        const r = value as RemoteError;
        fail(t, poolError('failed', `${t.label} failed: ${r.message || r.name}`, r));
      }
    }
    pump();
  }

  const timeoutError = (t: Task) => poolError('timeout', `${t.label} ran past ${t.timeoutMs} ms`);

  function onExit(w: PoolWorker, code: number): void {
    w.markUp(false);
    if (!w.alive) return; // terminated by the pool
    counts.exited++;
    if (!w.ready) startFailures++;
    // the task it was running (if any) failed with it; the others go elsewhere
    const running = Atomics.load(w.state, 0);
    const t = running === 0 ? undefined : w.tasks.get(running);
    if (t)
      fail(
        t,
        poolError('exited', `its worker exited (code ${code}) during ${t.label}`, undefined, code),
      );
    opts.onReplace?.({ reason: 'exited', code, ...(t ? { label: t.label } : {}) });
    if (!w.ready && !workers.some((o) => o !== w && o.ready)) {
      // it could not start, nor could any other: fail the waiting tasks rather than hold them
      const why = w.error?.message ?? `exit code ${code}`;
      for (const b of queue.splice(0)) {
        for (const q of b.tasks) {
          fail(q, poolError('exited', `no worker could start: ${why}`, undefined, code));
        }
      }
    }
    retire(w);
  }

  /** Takes `w` out of the pool, starts its replacement, and queues its unanswered tasks again. */
  function retire(w: PoolWorker): void {
    if (!w.alive) return;
    w.alive = false;
    const i = workers.indexOf(w);
    if (i >= 0) workers.splice(i, 1);
    const again = new Map<Batch, Task[]>();
    for (const t of w.tasks.values()) {
      if (t.settled) continue;
      w.load--;
      t.worker = undefined;
      again.set(t.batch, [...(again.get(t.batch) ?? []), t]);
    }
    w.tasks.clear();
    queue.unshift(...[...again].map(([b, tasks]) => ({ shared: b.shared, tasks })));
    if (closed) return;
    if (startFailures === 0) spawn();
    else {
      // a worker that cannot start: try again later, not in a loop (tasks wait, bounded by their
      // own timers)
      const delay = backoffDelay(startFailures + 1, { initialMs: 250, maxMs: 30_000 });
      setTimeout(() => {
        if (!closed && (wantAll || queue.length > 0) && workers.length < size) spawn();
        pump();
      }, delay).unref();
    }
    pump();
  }

  /** At a task's deadline: a worker running it is terminated; a task not started is skipped. */
  function onDeadline(t: Task): void {
    t.timer = undefined;
    const w = t.worker;
    fail(t, timeoutError(t));
    if (w) check(w, t, true);
  }

  function check(w: PoolWorker, t: Task, first: boolean): void {
    if (!w.alive || !w.tasks.has(t.seq)) return; // answered, skipped, or its worker is gone
    if (Atomics.load(w.state, 0) === t.seq) {
      counts.terminated++;
      opts.onReplace?.({ reason: 'deadline', label: t.label });
      retire(w);
      void w.worker.terminate();
      return;
    }
    // Not started yet: the worker skips it when its turn comes (its deadline has passed). Or
    // started a moment ago, the two clocks disagreeing by a millisecond: look once more.
    if (first) setTimeout(() => check(w, t, false), RECHECK_MS).unref();
  }

  /**
   * Every WATCH_MS while tasks are in flight: a worker still running the same task after STALL_MS
   * is stalled; its other unanswered tasks (queued behind it, or done but not yet posted: a batch
   * posts its results when it ends) go to the other workers, so that one slow or stuck task does not
   * take its batch-mates' deadlines with it. A result that comes later for a task given away is
   * ignored.
   */
  let watching: ReturnType<typeof setInterval> | undefined;
  function watch(): void {
    if (watching !== undefined) return;
    watching = setInterval(() => {
      const now = performance.now();
      let busy = false;
      for (const w of workers) {
        if (w.tasks.size === 0) {
          w.stalled = false;
          w.watchSeq = 0;
          continue;
        }
        busy = true;
        const cur = Atomics.load(w.state, 0);
        if (cur === 0 || cur !== w.watchSeq) {
          w.watchSeq = cur;
          w.watchSince = now;
          w.stalled = false;
          continue;
        }
        if (w.stalled || now - w.watchSince < STALL_MS) continue;
        w.stalled = true;
        if (!workers.some((o) => o !== w && o.ready && !o.stalled)) continue;
        const moved = new Map<Batch, Task[]>();
        for (const t of w.tasks.values()) {
          if (t.seq === cur || t.settled) continue;
          w.tasks.delete(t.seq);
          w.load--;
          t.worker = undefined;
          moved.set(t.batch, [...(moved.get(t.batch) ?? []), t]);
        }
        queue.unshift(...[...moved].map(([b, tasks]) => ({ shared: b.shared, tasks })));
      }
      pump();
      if (!busy) {
        clearInterval(watching);
        watching = undefined;
      }
    }, WATCH_MS);
    watching.unref();
  }

  // ---- dispatch

  /** The ready worker with room that is not stalled and least loaded. */
  function pick(): PoolWorker | undefined {
    let best: PoolWorker | undefined;
    for (const w of workers) {
      if (!w.ready || w.batches >= perWorker) continue;
      if (
        !best ||
        (best.stalled && !w.stalled) ||
        (best.stalled === w.stalled && w.load < best.load)
      )
        best = w;
    }
    return best;
  }

  /** Hands waiting batches to workers; starts workers (up to size) for the ones left. */
  function pump(): void {
    if (closed) return;
    while (queue.length > 0) {
      const b = queue[0] as Batch;
      b.tasks = b.tasks.filter((t) => !t.settled);
      if (b.tasks.length === 0) {
        queue.shift();
        continue;
      }
      const w = pick();
      if (!w) break;
      queue.shift();
      post(w, b);
    }
    const starting = workers.filter((w) => !w.ready).length;
    let want = Math.min(queue.length - starting, size - workers.length);
    while (want-- > 0) spawn();
  }

  function post(w: PoolWorker, b: Batch): void {
    for (const t of b.tasks) {
      startDeadline(t);
      t.worker = w;
      w.load++;
      w.tasks.set(t.seq, t);
    }
    w.batches++;
    const tasks = b.tasks.map((t): [number, unknown, number] => [t.seq, t.input, t.deadlineAt!]);
    w.worker.postMessage({ t: 'batch', shared: b.shared, tasks } satisfies PoolMessage);
    watch();
  }

  function submit<T>(shared: unknown, specs: readonly TaskSpec[]): Promise<T>[] {
    if (closed) return specs.map(() => Promise.reject(poolError('closed', 'closed')));
    if (active + specs.length > limit) {
      return specs.map(() => Promise.reject(poolError('saturated', `busy (${limit} tasks)`)));
    }
    const batch: Batch = { shared, tasks: [] };
    const promises = specs.map(
      (s) =>
        new Promise<T>((resolve, reject) => {
          seq = seq >= 0x7fffffff ? 1 : seq + 1;
          const t: Task = {
            seq,
            input: s.input,
            timeoutMs: s.timeoutMs,
            label: s.label ?? 'task',
            batch,
            resolve: resolve as (v: unknown) => void,
            reject,
            timer: undefined,
            deadlineAt: undefined,
            worker: undefined,
            settled: false,
            unlisten: undefined,
          };
          active++;
          batch.tasks.push(t);
          if (fromCall) startDeadline(t);
          else {
            const waitMs = Math.max(s.timeoutMs, MIN_WAIT_MS);
            t.timer = setTimeout(() => {
              t.timer = undefined;
              if (t.deadlineAt === undefined)
                fail(t, poolError('saturated', `no worker free for ${waitMs} ms`));
            }, waitMs);
          }
          const signal = s.signal;
          if (signal?.aborted) fail(t, poolError('aborted', `${t.label}: cancelled`));
          else if (signal) {
            const onAbort = () => {
              const w = t.worker;
              const left = (t.deadlineAt ?? 0) - Date.now();
              fail(t, poolError('aborted', `${t.label}: cancelled`));
              // a worker still running it is still terminated at its deadline
              if (w) setTimeout(() => check(w, t, true), Math.max(0, left)).unref();
            };
            signal.addEventListener('abort', onAbort, { once: true });
            t.unlisten = () => signal.removeEventListener('abort', onAbort);
          }
        }),
    );
    queue.push(batch);
    pump();
    return promises;
  }

  async function close(): Promise<void> {
    if (closed) return;
    closed = true;
    if (watching !== undefined) clearInterval(watching);
    const all = workers.splice(0);
    const left = queue.splice(0).flatMap((b) => b.tasks);
    for (const w of all) {
      w.alive = false;
      left.push(...w.tasks.values());
    }
    for (const t of left) fail(t, poolError('closed', 'closed'));
    await Promise.all(all.map((w) => w.worker.terminate()));
  }

  return {
    submit,
    run: <T>(input: unknown, o: { timeoutMs: number; label?: string }) =>
      submit<T>(undefined, [{ input, ...o }])[0] as Promise<T>,
    broadcast(data) {
      for (const w of workers) w.worker.postMessage({ t: 'control', data } satisfies PoolMessage);
    },
    async start() {
      wantAll = true;
      while (workers.length < size) spawn();
      const first = [...workers];
      if ((await Promise.all(first.map((w) => w.up))).includes(false)) {
        const why = first.find((w) => w.error)?.error?.message ?? 'it exited';
        await close();
        throw new Error(`${opts.name} pool: a worker thread failed to start: ${why}`);
      }
    },
    warm() {
      if (closed) return;
      wantAll = true;
      while (workers.length < size) spawn();
    },
    stats: () => ({ size, ...counts, inFlight: active }),
    close,
  };
}
