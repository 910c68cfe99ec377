import { parentPort } from 'node:worker_threads';
import type { RemoteError, TaskMessage, TaskWorkerMessage } from './protocol.ts';

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

/**
 * The worker-thread side of a task pool: runs each task it is given with the handler of its name,
 * one at a time, and posts the value (or the error, as plain data). Tells the pool it is ready once
 * the module that calls this has loaded.
 */
export function serveTasks(handlers: TaskHandlers): void {
  if (!parentPort) throw new Error('serveTasks runs in a worker thread');
  const port = parentPort;
  const post = (m: TaskWorkerMessage) => port.postMessage(m);
  port.on('message', async (m: TaskMessage) => {
    const handler = handlers[m.task];
    try {
      if (!handler) throw new Error(`no handler for task ${m.task}`);
      const value = await handler(m.payload as never);
      post({ t: 'done', id: m.id, value });
    } catch (err) {
      post({ t: 'failed', id: m.id, error: remoteError(err) });
    }
  });
  post({ t: 'ready' });
}
