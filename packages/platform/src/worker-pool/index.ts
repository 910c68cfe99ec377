export type { RemoteError } from './protocol.ts';
export { serveTasks, type TaskHandlers } from './serve-tasks.ts';
export {
  createTaskPool,
  type TaskErrorKind,
  type TaskPool,
  TaskPoolError,
  type TaskPoolOptions,
  type TaskPoolStats,
} from './task-pool.ts';
