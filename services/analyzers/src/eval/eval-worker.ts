import { parentPort, workerData } from 'node:worker_threads';
import type { ServiceConfigFile, Workflow } from '@trawl/contracts';
import { builtinAnalyzers } from '../registry.ts';
import { type EvalItem, evalRunner, type MessageOutcome } from './eval-message.ts';

/** What the eval hands each worker thread. */
export interface WorkerInput {
  workflow: Workflow;
  service: ServiceConfigFile;
  /** [position in the whole run, item] */
  items: [number, EvalItem][];
}

/** Messages a worker posts: one per message done, then `done`. */
export type WorkerMessage =
  | { kind: 'outcome'; at: number; outcome: MessageOutcome }
  | { kind: 'done' }
  | { kind: 'error'; message: string };

async function main(): Promise<void> {
  const input = workerData as WorkerInput;
  const runner = evalRunner(input.workflow, input.service, builtinAnalyzers);
  for (const [at, item] of input.items) {
    const outcome = await runner.run(item);
    parentPort?.postMessage({ kind: 'outcome', at, outcome } satisfies WorkerMessage);
  }
  parentPort?.postMessage({ kind: 'done' } satisfies WorkerMessage);
}

main().catch((err: unknown) => {
  parentPort?.postMessage({
    kind: 'error',
    message: (err as Error).message,
  } satisfies WorkerMessage);
});
