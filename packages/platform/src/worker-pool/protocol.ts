/** Messages between a worker pool (main thread) and its worker threads (structured clone only). */

/** An error thrown by a handler, as plain data (a class does not survive structured clone). */
export interface RemoteError {
  name: string;
  message: string;
  /** The TrawlError members, when the handler threw one. */
  code?: string;
  status?: number;
  problems?: { path: string; message: string }[];
}

/** What a worker receives when it starts (`workerData`). */
export interface WorkerInit {
  /** Int32Array over it: [0] the seq of the task the worker is running, 0 between tasks. */
  state: SharedArrayBuffer;
  /** The pool user's own start-up data (`workerData` of the pool's options). */
  data: unknown;
}

/** One task of a batch: its seq, its input, its deadline (epoch ms, Date.now()). */
type TaskEntry = [seq: number, input: unknown, deadlineAt: number];

export type PoolMessage =
  /**
   * Tasks run one after the other in the worker; `shared` is sent once for all of them (V8's
   * serializer writes a string every time it meets it). A task already past its deadline when its
   * turn comes is not run.
   */
  | { t: 'batch'; shared: unknown; tasks: TaskEntry[] }
  /** A message for every worker (`broadcast`), e.g. new settings. */
  | { t: 'control'; data: unknown };

export const Outcome = { ok: 0, failed: 1, expired: 2 } as const;
export type Outcome = (typeof Outcome)[keyof typeof Outcome];

/** One task's result: its seq, outcome, and value (ok), RemoteError (failed) or null (expired). */
export type TaskResult = [seq: number, outcome: Outcome, value: unknown];

/** A batch's results are posted together when it ends (each post wakes the main thread). */
export type PoolWorkerMessage = { t: 'ready' } | { t: 'results'; results: TaskResult[] };
