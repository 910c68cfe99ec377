import { parentPort, workerData } from 'node:worker_threads';
import type { ServiceConfigFile, Workflow } from '@trawl/contracts';
import { builtinAnalyzers } from '../registry.ts';
import { type EvalItem, evalRunner, type MessageOutcome } from './eval-message.ts';

/** What the eval hands each worker thread when it starts. */
export interface WorkerInput {
  workflow: Workflow;
  service: ServiceConfigFile;
}

/** Messages the main thread sends: a batch of [position in the whole run, item], or the end. */
export type MainMessage = { kind: 'items'; items: [number, EvalItem][] } | { kind: 'end' };

/**
 * Messages a worker posts: `ready` once its modules are loaded and the workflow compiled (the clock
 * starts when every worker is ready), one `outcome` per message, `idle` when its batch is done.
 */
export type WorkerMessage =
  | { kind: 'ready' }
  | { kind: 'outcome'; at: number; outcome: MessageOutcome }
  | { kind: 'idle' }
  | { kind: 'error'; message: string };

const post = (m: WorkerMessage) => parentPort?.postMessage(m);

async function main(): Promise<void> {
  const input = workerData as WorkerInput;
  const runner = evalRunner(input.workflow, input.service, builtinAnalyzers);
  await runner.warmUp();
  let queue: Promise<void> = Promise.resolve();
  parentPort?.on('message', (m: MainMessage) => {
    if (m.kind === 'end') {
      parentPort?.close();
      return;
    }
    queue = queue
      .then(async () => {
        for (const [at, item] of m.items)
          post({ kind: 'outcome', at, outcome: await runner.run(item) });
        post({ kind: 'idle' });
      })
      .catch((err: unknown) => post({ kind: 'error', message: (err as Error).message }));
  });
  post({ kind: 'ready' });
}

main().catch((err: unknown) => post({ kind: 'error', message: (err as Error).message }));
