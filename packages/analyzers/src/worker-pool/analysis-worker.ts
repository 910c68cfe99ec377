import { parentPort, workerData } from 'node:worker_threads';
import { type Email, safeParseAnalyzerAnswer, toProblems } from '@trawl/contracts';
import { type AnalyzerDefinition, resolveSettings } from '@trawl/plugin-sdk';
import {
  type BatchCall,
  type CallResult,
  type MainMessage,
  ResultKind,
  type WorkerInit,
} from './protocol.ts';

const silentLog = { info() {}, warn() {} };

/** What an analyzer receives in a worker: its settings and a signal aborted at the deadline. */
class WorkerCallContext {
  readonly log = silentLog;
  #signal: AbortSignal | undefined = undefined;
  constructor(
    readonly settings: unknown,
    private readonly deadlineAt: number,
  ) {}

  // Read by few analyzers: made on first read. A synchronous analyzer never sees it fire; the pool
  // stops it by terminating the worker.
  get signal(): AbortSignal {
    this.#signal ??= AbortSignal.timeout(Math.max(0, this.deadlineAt - Date.now()));
    return this.#signal;
  }
}

type Batch = Extract<MainMessage, { t: 'batch' }>;

function isThenable(v: unknown): v is PromiseLike<unknown> {
  return (
    v !== null &&
    (typeof v === 'object' || typeof v === 'function') &&
    typeof (v as { then?: unknown }).then === 'function'
  );
}

/**
 * The worker-thread side of the analysis pool: runs the calls of each batch in order, one at a time,
 * and posts the validated answers (or failures) of the batch in one message when it ends. Before
 * each call it writes the call's seq to the shared state word: that is how the pool knows which call
 * a worker is running, sees it stall (and gives the batch's other calls to another worker), and
 * knows which call to blame when it terminates the worker at a deadline.
 */
export function serveAnalysisWorker(analyzers: Record<string, AnalyzerDefinition<unknown>>): void {
  if (!parentPort) throw new Error('serveAnalysisWorker runs in a worker thread');
  const port: NonNullable<typeof parentPort> = parentPort;
  const init = workerData as WorkerInit;
  const current = new Int32Array(init.state);
  let rawSettings = init.settings;
  // Per settings message: the raw object of each id (resolveSettings caches by raw object).
  // the results of the batch being run, posted together when it ends
  let results: CallResult[] = [];
  const post = (seq: number, kind: ResultKind, payload: unknown) => {
    results.push([seq, kind, payload]);
  };

  const settingsOf = (def: AnalyzerDefinition<unknown>): unknown =>
    resolveSettings(def, rawSettings[def.id] ?? {});

  const queue: Batch[] = [];
  let running = false;

  const answer = (seq: number, id: string, raw: unknown) => {
    const r = safeParseAnalyzerAnswer(raw);
    if (r.success) return post(seq, ResultKind.ok, r.data);
    const detail = toProblems(r.error)
      .slice(0, 5)
      .map((p) => `${p.path || '/'}: ${p.message}`)
      .join('; ');
    post(seq, ResultKind.invalid, `analyzer ${id} answered an invalid result: ${detail}`);
  };

  const failed = (seq: number, e: unknown) =>
    post(seq, ResultKind.failed, e instanceof Error ? e.message || e.name : String(e));

  async function runBatch(b: Batch): Promise<void> {
    const emails: Array<Email | undefined> = [];
    for (const call of b.calls as BatchCall[]) {
      const [seq, id, ci, deadlineAt] = call;
      if (Date.now() >= deadlineAt) {
        post(seq, ResultKind.expired, null);
        continue;
      }
      Atomics.store(current, 0, seq);
      try {
        const def = analyzers[id];
        if (!def) throw new Error(`analyzer ${id} is not available in the analysis worker`);
        // one Email per analysis_context, sharing the message's objects (the rules view is
        // memoised on `email.headers`, so the analyzers of a batch build it once)
        let email = emails[ci];
        if (!email) {
          const e = Object.assign({}, b.email);
          const ctx = b.contexts[ci];
          if (ctx !== undefined) e.analysis_context = ctx;
          email = e as unknown as Email;
          emails[ci] = email;
        }
        let raw: unknown = def.analyze(email, new WorkerCallContext(settingsOf(def), deadlineAt));
        if (isThenable(raw)) raw = await raw;
        answer(seq, id, raw);
      } catch (e) {
        failed(seq, e);
      } finally {
        Atomics.store(current, 0, 0);
      }
    }
    const done = results;
    results = [];
    port.postMessage({ t: 'results', results: done });
  }

  async function drain(): Promise<void> {
    running = true;
    try {
      for (let b = queue.shift(); b; b = queue.shift()) await runBatch(b);
    } finally {
      running = false;
    }
  }

  port.on('message', (m: MainMessage) => {
    if (m.t === 'settings') {
      rawSettings = m.settings;
      return;
    }
    queue.push(m);
    if (!running) void drain();
  });
  port.postMessage({ t: 'ready' });
}
