export type { RemoteError } from './protocol.ts';
export {
  serveTasks,
  serveWorker,
  type TaskHandlers,
  type WorkerServer,
  workerInit,
} from './serve-tasks.ts';
export {
  createWorkerPool,
  type TaskSpec,
  type WorkerPool,
  WorkerPoolError,
  type WorkerPoolErrorKind,
  type WorkerPoolOptions,
  type WorkerPoolStats,
} from './worker-pool.ts';
