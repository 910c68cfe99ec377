/** Messages between a task pool (main thread) and its worker threads (structured clone only). */

/** A task for a worker: its id, the handler's name and its input. */
export interface TaskMessage {
  id: number;
  task: string;
  payload: unknown;
}

/** An error thrown by a handler, as plain data (a class does not survive structured clone). */
export interface RemoteError {
  name: string;
  message: string;
  /** The TrawlError members, when the handler threw one. */
  code?: string;
  status?: number;
  problems?: { path: string; message: string }[];
}

export type TaskWorkerMessage =
  | { t: 'ready' }
  | { t: 'done'; id: number; value: unknown }
  | { t: 'failed'; id: number; error: RemoteError };
