import { parentPort, workerData } from 'node:worker_threads';
import type { ServiceConfigFile, Workflow } from '@trawl/contracts';
import { builtinAnalyzers } from '../registry.ts';
import { type EvalItem, evalRunner, type MessageOutcome } from './eval-message.ts';
import { withClassifier } from './with-classifier.ts';

/** What the eval hands each worker thread when it starts. */
export interface WorkerInput {
  workflow: Workflow;
  service: ServiceConfigFile;
  /** An exported classifier state the `classifier` analyzer reads. */
  classifierState?: string;
}

/** Messages the main thread sends: a batch of [position in the whole run, item], or the end. */
export type MainMessage = { kind: 'items'; items: [number, EvalItem][] } | { kind: 'end' };

/**
 * Messages a worker posts: `ready` once its modules are loaded and the workflow compiled (the clock
 * starts when every worker is ready), then one `outcomes` per batch when the batch is done (one
 * message per batch: every post wakes the main thread, which costs more than the copy).
 */
export type WorkerMessage =
  | { kind: 'ready' }
  | { kind: 'outcomes'; outcomes: [number, MessageOutcome][] }
  | { kind: 'error'; message: string };

const post = (m: WorkerMessage) => parentPort?.postMessage(m);

async function main(): Promise<void> {
  const input = workerData as WorkerInput;
  const registry = await withClassifier(builtinAnalyzers, input.classifierState);
  const runner = evalRunner(input.workflow, input.service, registry);
  await runner.warmUp();
  let queue: Promise<void> = Promise.resolve();
  parentPort?.on('message', (m: MainMessage) => {
    if (m.kind === 'end') {
      parentPort?.close();
      return;
    }
    queue = queue
      .then(async () => {
        const outcomes: [number, MessageOutcome][] = [];
        for (const [at, item] of m.items) outcomes.push([at, await runner.run(item)]);
        post({ kind: 'outcomes', outcomes });
      })
      .catch((err: unknown) => post({ kind: 'error', message: (err as Error).message }));
  });
  post({ kind: 'ready' });
}

main().catch((err: unknown) => post({ kind: 'error', message: (err as Error).message }));
