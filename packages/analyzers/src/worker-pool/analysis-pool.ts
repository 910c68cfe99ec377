import type { AnalyzerAnswer, Email } from '@trawl/contracts';
import {
  createWorkerPool,
  type TaskSpec,
  type WorkerPoolError,
  type WorkerPoolStats,
} from '@trawl/platform/worker-pool';
import { type CallOptions, PluginCallError } from '@trawl/plugin-client';
import { offlineAnalyzers } from '../registry.ts';
import { bundleAnalysisWorker } from './bundle.ts';
import {
  type AnalysisBatch,
  type AnalysisCall,
  type AnalysisWorkerData,
  INVALID_ANSWER,
} from './protocol.ts';

/** Options of createAnalysisPool: workers, the definitions they run, the default timeout. */
export interface AnalysisPoolOptions {
  /** Worker threads (at least 1). */
  size: number;
  /**
   * A module exporting `analyzers` (id → definition) and the ids among them the workers run (the
   * main thread must know them before any worker is up); default: the offline analyzers.
   */
  definitions?: { module: URL; ids: Iterable<string> };
  /** Timeout of a call whose options give none (default 30000 ms). */
  defaultTimeoutMs?: number;
  /** Told when a worker is replaced (a call stuck past its deadline, or the worker exited). */
  onReplace?: (info: { reason: 'deadline' | 'exited'; analyzer?: string; code?: number }) => void;
}

/** The pool's figures (started, terminated and exited workers, calls in flight). */
export type AnalysisPoolStats = WorkerPoolStats;

/** The built-in offline analyzers in worker threads, each call cut at its deadline (ADR 010, 022). */
export interface AnalysisPool {
  /** The analyzer ids this pool runs. */
  readonly ids: ReadonlySet<string>;
  /** Raw settings per analyzer id (from service.yaml): sent to every worker, current and future. */
  configure(settings: Record<string, unknown>): void;
  /**
   * Runs analyzer `id` on `email` in a worker: the validated answer, or a PluginCallError as the
   * in-process invoker gives (`timeout` at `timeoutMs`, `status` when the analyzer threw or its
   * worker died, `invalidAnswer`, `aborted` when the caller's signal fires first). A call still
   * running at its deadline has its worker terminated and replaced.
   */
  analyze(id: string, email: Email, o?: CallOptions): Promise<AnalyzerAnswer>;
  stats(): AnalysisPoolStats;
  close(): Promise<void>;
}

interface Call {
  readonly id: string;
  readonly email: Email;
  readonly timeoutMs: number;
  readonly signal: AbortSignal | undefined;
  readonly resolve: (a: AnalyzerAnswer) => void;
  readonly reject: (e: Error) => void;
}

const DEFAULT_DEFINITIONS = new URL('./offline-definitions.ts', import.meta.url);
const BOOT = new URL('./analysis-worker-boot.mjs', import.meta.url);

/**
 * A pool of worker threads for CPU-bound analyzers: the thread that consumes the queue or answers
 * HTTP only posts messages. The platform's worker pool (ADR 022) runs the workers, the deadlines
 * (a worker running a call at its deadline is terminated and replaced; a call not started by then
 * is skipped), the stall watch and the replacements; this is what is the analysis's own: the
 * bundled worker, the analyzers' settings, and the batches: the calls made in the same turn on the
 * same message (a parallel stage) travel as one batch with the Email once. Failures are the
 * PluginCallErrors of the in-process invoker.
 */
export async function createAnalysisPool(opts: AnalysisPoolOptions): Promise<AnalysisPool> {
  const ids: ReadonlySet<string> = new Set(opts.definitions?.ids ?? Object.keys(offlineAnalyzers));
  const definitions = opts.definitions?.module ?? DEFAULT_DEFINITIONS;
  // one bundle for every worker (cached on disk); without esbuild, the tsx-loaded boot file
  const bundle = await bundleAnalysisWorker(definitions);
  const defaultTimeoutMs = opts.defaultTimeoutMs ?? 30_000;
  let settings: Record<string, unknown> = {};
  const onReplace = opts.onReplace;
  const pool = createWorkerPool({
    name: 'analysis',
    entry: bundle ?? BOOT,
    size: opts.size,
    workerData: (): AnalysisWorkerData => ({
      settings,
      ...(bundle ? {} : { definitions: definitions.href }),
    }),
    ...(onReplace
      ? {
          onReplace: ({ reason, code, label }) =>
            onReplace({
              reason,
              ...(label !== undefined ? { analyzer: label } : {}),
              ...(code !== undefined ? { code } : {}),
            }),
        }
      : {}),
  });
  // Start with every worker ready (its analyzers loaded), so that the first calls do not spend
  // their deadline waiting for a worker to boot; a worker that cannot start stops the start-up.
  await pool.start();
  let closed = false;
  /** Calls made this turn, submitted together at the end of it. */
  let pending: Call[] = [];
  let flushQueued = false;

  const label = (id: string) => `analyzer ${id}`;
  const cancelled = (id: string) =>
    new PluginCallError('aborted', 'analyzer', id, `${label(id)}: call cancelled`);

  /** A worker pool failure as the in-process invoker reports it. */
  function callError(c: Call, e: WorkerPoolError): PluginCallError {
    const status = (why: string) =>
      new PluginCallError('status', 'analyzer', c.id, `${label(c.id)} failed: ${why}`, {
        statusCode: 500,
      });
    switch (e.kind) {
      case 'timeout':
        return new PluginCallError(
          'timeout',
          'analyzer',
          c.id,
          `${label(c.id)} timed out after ${c.timeoutMs} ms`,
        );
      case 'aborted':
        return cancelled(c.id);
      case 'closed':
        return new PluginCallError(
          'aborted',
          'analyzer',
          c.id,
          `${label(c.id)}: the analysis pool closed`,
        );
      case 'exited':
        return status(`its worker thread exited (code ${e.exitCode})`);
      case 'failed':
        if (e.remote?.name === INVALID_ANSWER) {
          return new PluginCallError('invalidAnswer', 'analyzer', c.id, e.remote.message);
        }
        return status(e.remote ? e.remote.message || e.remote.name : e.message);
      default:
        return status(e.message);
    }
  }

  /**
   * Submits `calls` as batches: one per message (the calls whose Emails are copies of one Email,
   * as the engine's calls of one stage are).
   */
  function flush(): void {
    flushQueued = false;
    const calls = pending;
    pending = [];
    const groups: Call[][] = [];
    const byHeaders = new Map<unknown, Call[][]>();
    for (const c of calls) {
      const key = c.email.headers;
      let list = byHeaders.get(key);
      if (!list) {
        list = [];
        byHeaders.set(key, list);
      }
      let group = list.find((g) => sameMessage(g[0]!.email, c.email));
      if (!group) {
        group = [];
        list.push(group);
        groups.push(group);
      }
      group.push(c);
    }
    for (const g of groups) submit(g);
  }

  function submit(group: Call[]): void {
    const base = group[0]!.email as unknown as Record<string, unknown>;
    const email: Record<string, unknown> = {};
    for (const k of Object.keys(base)) if (k !== 'analysis_context') email[k] = base[k];
    const contexts: unknown[] = [];
    const specs: TaskSpec[] = group.map((c) => {
      const ctx = c.email.analysis_context;
      let ci = contexts.indexOf(ctx);
      if (ci < 0) ci = contexts.push(ctx) - 1;
      const input: AnalysisCall = [c.id, ci];
      return { input, timeoutMs: c.timeoutMs, label: c.id, signal: c.signal };
    });
    const shared: AnalysisBatch = { email, contexts };
    pool.submit<AnalyzerAnswer>(shared, specs).forEach((p, i) => {
      const c = group[i]!;
      p.then(c.resolve, (e: WorkerPoolError) => c.reject(callError(c, e)));
    });
  }

  return {
    ids,
    configure(next) {
      settings = next;
      pool.broadcast(settings);
    },
    analyze(id, email, o) {
      if (closed) {
        return Promise.reject(
          new PluginCallError(
            'aborted',
            'analyzer',
            id,
            `${label(id)}: the analysis pool is closed`,
          ),
        );
      }
      if (!ids.has(id)) {
        return Promise.reject(
          new PluginCallError('unknown', 'analyzer', id, `analyzer ${id} is not configured`),
        );
      }
      // The caller's signal is read only when the caller does not bound the call itself: the
      // engine stops waiting on its own, and the call still ends at its deadline here.
      const signal = o?.boundedByCaller ? undefined : o?.signal;
      if (signal?.aborted) return Promise.reject(cancelled(id));
      const timeoutMs = o?.timeoutMs ?? defaultTimeoutMs;
      return new Promise<AnalyzerAnswer>((resolve, reject) => {
        pending.push({ id, email, timeoutMs, signal, resolve, reject });
        if (!flushQueued) {
          flushQueued = true;
          queueMicrotask(flush);
        }
      });
    },
    stats: () => pool.stats(),
    async close() {
      if (closed) return;
      closed = true;
      const left = pending;
      pending = [];
      for (const c of left) {
        c.reject(
          new PluginCallError(
            'aborted',
            'analyzer',
            c.id,
            `${label(c.id)}: the analysis pool closed`,
          ),
        );
      }
      await pool.close();
    },
  };
}

/** Copies of one Email (the engine's per-call copies): every member but analysis_context shared. */
function sameMessage(a: Email, b: Email): boolean {
  if (a === b) return true;
  const x = a as unknown as Record<string, unknown>;
  const y = b as unknown as Record<string, unknown>;
  const kx = Object.keys(x);
  if (kx.length !== Object.keys(y).length) return false;
  for (const k of kx) if (k !== 'analysis_context' && x[k] !== y[k]) return false;
  return true;
}
