import { type Email, safeParseAnalyzerAnswer, toProblems } from '@trawl/contracts';
import { serveWorker, workerInit } from '@trawl/platform/worker-pool';
import { type AnalyzerDefinition, resolveSettings } from '@trawl/plugin-sdk';
import {
  type AnalysisBatch,
  type AnalysisCall,
  type AnalysisWorkerData,
  INVALID_ANSWER,
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

function isThenable(v: unknown): v is PromiseLike<unknown> {
  return (
    v !== null &&
    (typeof v === 'object' || typeof v === 'function') &&
    typeof (v as { then?: unknown }).then === 'function'
  );
}

/** The answer as the contract has it, or an INVALID_ANSWER error naming what is wrong. */
function validated(id: string, raw: unknown): unknown {
  const r = safeParseAnalyzerAnswer(raw);
  if (r.success) return r.data;
  const detail = toProblems(r.error)
    .slice(0, 5)
    .map((p) => `${p.path || '/'}: ${p.message}`)
    .join('; ');
  const e = new Error(`analyzer ${id} answered an invalid result: ${detail}`);
  e.name = INVALID_ANSWER;
  throw e;
}

/**
 * The worker-thread side of the analysis pool (a user of the platform's worker pool, which runs
 * a batch's calls one at a time and blames the running one at a deadline): runs analyzer `id` on
 * the batch's Email with its context, and answers the validated answer.
 */
export function serveAnalysisWorker(analyzers: Record<string, AnalyzerDefinition<unknown>>): void {
  let rawSettings = workerInit<AnalysisWorkerData>().settings;
  const settingsOf = (def: AnalyzerDefinition<unknown>): unknown =>
    resolveSettings(def, rawSettings[def.id] ?? {});
  // One Email per analysis_context of a batch, sharing the message's objects (the rules view is
  // memoised on `email.headers`, so the analyzers of a batch build it once).
  const emails = new WeakMap<AnalysisBatch, Array<Email | undefined>>();
  const emailOf = (b: AnalysisBatch, ci: number): Email => {
    let list = emails.get(b);
    if (!list) {
      list = [];
      emails.set(b, list);
    }
    let email = list[ci];
    if (!email) {
      const e = Object.assign({}, b.email);
      const ctx = b.contexts[ci];
      if (ctx !== undefined) e.analysis_context = ctx;
      email = e as unknown as Email;
      list[ci] = email;
    }
    return email;
  };

  serveWorker({
    run([id, ci]: AnalysisCall, batch: AnalysisBatch, deadlineAt: number) {
      const def = analyzers[id];
      if (!def) throw new Error(`analyzer ${id} is not available in the analysis worker`);
      const raw = def.analyze(
        emailOf(batch, ci),
        new WorkerCallContext(settingsOf(def), deadlineAt),
      );
      return isThenable(raw) ? raw.then((r) => validated(id, r)) : validated(id, raw);
    },
    control(settings: Record<string, unknown>) {
      rawSettings = settings;
    },
  });
}
