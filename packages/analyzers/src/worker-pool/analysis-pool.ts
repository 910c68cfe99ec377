import { Worker } from 'node:worker_threads';
import { type AnalyzerAnswer, backoffDelay, type Email } from '@trawl/contracts';
import { type CallOptions, PluginCallError } from '@trawl/plugin-client';
import { offlineAnalyzers } from '../registry.ts';
import { bundleAnalysisWorker } from './bundle.ts';
import {
  type BatchCall,
  type MainMessage,
  ResultKind,
  type WorkerInit,
  type WorkerMessage,
} from './protocol.ts';

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

export interface AnalysisPoolStats {
  size: number;
  /** Workers started since the pool was made, the first ones included. */
  started: number;
  /** Workers terminated because a call ran past its deadline. */
  terminated: number;
  /** Workers that exited on their own (crash, out of memory). */
  exited: number;
  /** Calls dispatched and not yet answered. */
  inFlight: number;
}

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
  readonly seq: number;
  readonly id: string;
  readonly email: Email;
  readonly timeoutMs: number;
  readonly deadlineAt: number;
  readonly resolve: (a: AnalyzerAnswer) => void;
  readonly reject: (e: Error) => void;
  timer: ReturnType<typeof setTimeout> | undefined;
  worker: PoolWorker | undefined;
  settled: boolean;
  /** A caller's abort listener to remove (calls the caller does not bound itself). */
  unlisten: (() => void) | undefined;
}

interface PoolWorker {
  readonly worker: Worker;
  /** [0]: the seq of the call the worker is running (0 between calls). */
  readonly state: Int32Array;
  /** Calls posted to it and not yet answered (settled ones too, until the worker passes them). */
  readonly calls: Map<number, Call>;
  /** Unsettled calls among `calls` (the load figure used to pick a worker). */
  load: number;
  alive: boolean;
  ready: boolean;
  /** The call seen running at the last watch, since when, and whether it has stalled. */
  watchSeq: number;
  watchSince: number;
  stalled: boolean;
  /** The last 'error' the worker reported (a start-up failure's reason). */
  error: Error | undefined;
  /** Settles when the worker has loaded its analyzers (true) or exited before (false). */
  readonly up: Promise<boolean>;
  markUp: (ok: boolean) => void;
}

const DEFAULT_DEFINITIONS = new URL('./offline-definitions.ts', import.meta.url);
const BOOT = new URL('./analysis-worker-boot.mjs', import.meta.url);
/**
 * After a call's deadline, if its worker had not started it, the pool looks again this much later:
 * a worker that started it just before the deadline (its clock and the timer's differ by a
 * millisecond or so) is then seen running it, and terminated.
 */
const RECHECK_MS = 25;
/** How often the pool looks for a stalled worker while calls are in flight. */
const WATCH_MS = 50;
/** A worker running the same call this long is stalled: its other calls go to the other workers. */
const STALL_MS = 100;

/**
 * A pool of worker threads for CPU-bound analyzers: the thread that consumes the queue or answers
 * HTTP only posts messages. The calls made in the same turn on the same message (a parallel stage)
 * travel as one batch with the Email once; each worker runs its batches' calls one at a time and
 * posts the batch's answers together. A worker that runs one call for long has its other calls given
 * to the other workers (see watch). Each call has a timer at its deadline: if the worker is then running
 * it, the worker is terminated (a synchronous analyzer cannot be stopped any other way), the call
 * rejected as a timeout, and a new worker started; the other unanswered calls of the terminated
 * worker go to the others. A call that has not started by its deadline is rejected and skipped.
 */
export async function createAnalysisPool(opts: AnalysisPoolOptions): Promise<AnalysisPool> {
  const size = Math.max(1, Math.floor(opts.size));
  const ids: ReadonlySet<string> = new Set(opts.definitions?.ids ?? Object.keys(offlineAnalyzers));
  const definitions = opts.definitions?.module ?? DEFAULT_DEFINITIONS;
  // one bundle for every worker (cached on disk); without esbuild, the tsx-loaded boot file
  const bundle = await bundleAnalysisWorker(definitions);
  const entry = bundle ? { url: bundle, bundled: true } : { url: BOOT, bundled: false };
  const defaultTimeoutMs = opts.defaultTimeoutMs ?? 30_000;
  const workers: PoolWorker[] = [];
  let settings: Record<string, unknown> = {};
  let seq = 0;
  let closed = false;
  /** Workers started, terminated at a deadline, and exited on their own (see stats). */
  const counts = { started: 0, terminated: 0, exited: 0 };
  /** Consecutive workers that exited before they were ready (a start-up failure): backs off. */
  let startFailures = 0;
  /** Calls made this turn, dispatched together at the end of it. */
  let pending: Call[] = [];
  let flushQueued = false;

  const label = (id: string) => `analyzer ${id}`;

  function settle(c: Call): boolean {
    if (c.settled) return false;
    c.settled = true;
    if (c.timer !== undefined) clearTimeout(c.timer);
    c.unlisten?.();
    if (c.worker) c.worker.load--;
    return true;
  }

  function fail(c: Call, e: PluginCallError): void {
    if (settle(c)) c.reject(e);
  }

  // ---- workers

  /** Starts a worker (its messages wait in its port until it is up). */
  function spawn(): PoolWorker {
    const state = new Int32Array(new SharedArrayBuffer(4));
    const init: WorkerInit = {
      state: state.buffer as SharedArrayBuffer,
      settings,
      ...(entry.bundled ? {} : { definitions: definitions.href }),
    };
    const worker = new Worker(entry.url, { workerData: init });
    let markUp: (ok: boolean) => void = () => {};
    const up = new Promise<boolean>((r) => {
      markUp = r;
    });
    const w: PoolWorker = {
      worker,
      state,
      calls: new Map(),
      load: 0,
      alive: true,
      ready: false,
      watchSeq: 0,
      watchSince: 0,
      stalled: false,
      error: undefined,
      up,
      markUp,
    };
    counts.started++;
    worker.on('message', (m: WorkerMessage) => onMessage(w, m));
    worker.on('error', (err) => {
      w.error = err; // followed by 'exit'
    });
    worker.on('exit', (code) => onExit(w, code));
    return w;
  }

  function onMessage(w: PoolWorker, m: WorkerMessage): void {
    if (m.t === 'ready') {
      w.ready = true;
      w.markUp(true);
      startFailures = 0;
      return;
    }
    for (const [seq, kind, payload] of m.results) onResult(w, seq, kind, payload);
  }

  function onResult(w: PoolWorker, seq: number, kind: ResultKind, payload: unknown): void {
    const c = w.calls.get(seq);
    if (!c) return; // given to another worker meanwhile, or its worker was replaced
    w.calls.delete(seq);
    if (c.worker !== w || !settle(c)) return;
    switch (kind) {
      case ResultKind.ok:
        c.resolve(payload as AnalyzerAnswer);
        return;
      case ResultKind.invalid:
        c.reject(new PluginCallError('invalidAnswer', 'analyzer', c.id, String(payload)));
        return;
      case ResultKind.expired:
        c.reject(timeoutError(c));
        return;
      default:
        c.reject(
          new PluginCallError('status', 'analyzer', c.id, `${label(c.id)} failed: ${payload}`, {
            statusCode: 500,
          }),
        );
    }
  }

  /**
   * Every WATCH_MS while calls are in flight: a worker still running the same call after STALL_MS
   * is stalled; its other unanswered calls (queued behind it, or answered but not yet posted: a
   * batch posts its answers when it ends) go to the other workers, so that one slow or stuck call
   * does not take its batch-mates' deadlines with it. A result that comes later from the stalled
   * worker for a call given away is ignored.
   */
  let watching: ReturnType<typeof setInterval> | undefined;
  function watch(): void {
    if (watching !== undefined) return;
    watching = setInterval(() => {
      const now = performance.now();
      let busy = false;
      for (const w of workers) {
        if (!w.alive || w.calls.size === 0) {
          w.stalled = false;
          w.watchSeq = 0;
          continue;
        }
        busy = true;
        const cur = Atomics.load(w.state, 0);
        if (cur === 0 || cur !== w.watchSeq) {
          w.watchSeq = cur;
          w.watchSince = now;
          w.stalled = false;
          continue;
        }
        if (w.stalled || now - w.watchSince < STALL_MS) continue;
        w.stalled = true;
        if (!workers.some((o) => o !== w && o.alive && !o.stalled)) continue;
        const moved: Call[] = [];
        for (const c of w.calls.values()) {
          if (c.seq === cur || c.settled) continue;
          w.calls.delete(c.seq);
          w.load--;
          c.worker = undefined;
          moved.push(c);
        }
        dispatch(moved);
      }
      if (!busy) {
        clearInterval(watching);
        watching = undefined;
      }
    }, WATCH_MS);
    watching.unref();
  }

  function timeoutError(c: Call): PluginCallError {
    return new PluginCallError(
      'timeout',
      'analyzer',
      c.id,
      `${label(c.id)} timed out after ${c.timeoutMs} ms`,
    );
  }

  /** Takes `w` out of the pool, starts its replacement, and sends its unanswered calls elsewhere. */
  function retire(w: PoolWorker): void {
    if (!w.alive) return;
    w.alive = false;
    const i = workers.indexOf(w);
    if (i >= 0) workers.splice(i, 1);
    if (!closed) {
      if (startFailures === 0) workers.push(spawn());
      else {
        // a worker that cannot start: try again later, not in a loop (calls wait, bounded by their
        // own deadlines)
        const delay = backoffDelay(startFailures + 1, { initialMs: 250, maxMs: 30_000 });
        setTimeout(() => {
          if (!closed && workers.length < size) workers.push(spawn());
          flushOrphans();
        }, delay).unref();
      }
    }
    for (const c of w.calls.values()) {
      if (c.settled) continue;
      w.load--;
      c.worker = undefined;
      orphaned.push(c);
    }
    w.calls.clear();
    flushOrphans();
  }

  /** Unanswered calls of a retired worker, waiting for a worker to exist. */
  const orphaned: Call[] = [];
  function flushOrphans(): void {
    if (workers.length === 0 || orphaned.length === 0) return;
    const calls = orphaned.splice(0);
    dispatch(calls.filter((c) => !c.settled));
  }

  function onExit(w: PoolWorker, code: number): void {
    w.markUp(false);
    if (!w.alive) return; // terminated by the pool
    counts.exited++;
    if (!w.ready) startFailures++;
    // the call it was running (if any) failed with it; the others go elsewhere
    const running = Atomics.load(w.state, 0);
    const c = running === 0 ? undefined : w.calls.get(running);
    if (c) {
      fail(
        c,
        new PluginCallError(
          'status',
          'analyzer',
          c.id,
          `${label(c.id)} failed: its worker thread exited (code ${code})`,
          { statusCode: 500 },
        ),
      );
    }
    opts.onReplace?.({ reason: 'exited', code, ...(c ? { analyzer: c.id } : {}) });
    retire(w);
  }

  /** At a call's deadline: a worker running it is terminated; a call not started is skipped. */
  function onDeadline(c: Call): void {
    c.timer = undefined;
    const w = c.worker;
    fail(c, timeoutError(c));
    if (w) check(w, c, true);
  }

  function check(w: PoolWorker, c: Call, first: boolean): void {
    if (!w.alive || !w.calls.has(c.seq)) return; // answered, skipped, or its worker is gone
    if (Atomics.load(w.state, 0) === c.seq) {
      counts.terminated++;
      opts.onReplace?.({ reason: 'deadline', analyzer: c.id });
      retire(w);
      void w.worker.terminate();
      return;
    }
    // Not started yet: the worker skips it when its turn comes (its deadline has passed). Or
    // started a moment ago, the two clocks disagreeing by a millisecond: look once more.
    if (first) setTimeout(() => check(w, c, false), RECHECK_MS).unref();
  }

  // ---- dispatch

  function pick(): PoolWorker | undefined {
    let best: PoolWorker | undefined;
    for (const w of workers) {
      if (!w.alive) continue;
      if (
        !best ||
        (best.stalled && !w.stalled) ||
        (best.stalled === w.stalled && w.load < best.load)
      )
        best = w;
    }
    return best;
  }

  /**
   * Posts `calls` as batches: one per message (the calls whose Emails are copies of one Email, as
   * the engine's calls of one stage are), each to the least loaded worker.
   */
  function dispatch(calls: Call[]): void {
    if (calls.length === 0) return;
    if (workers.length === 0) {
      orphaned.push(...calls);
      return;
    }
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
    for (const g of groups) postBatch(g);
  }

  function postBatch(group: Call[]): void {
    const w = pick();
    if (!w) {
      orphaned.push(...group);
      return;
    }
    const base = group[0]!.email as unknown as Record<string, unknown>;
    const email: Record<string, unknown> = {};
    for (const k of Object.keys(base)) if (k !== 'analysis_context') email[k] = base[k];
    const contexts: unknown[] = [];
    const calls: BatchCall[] = [];
    for (const c of group) {
      const ctx = c.email.analysis_context;
      let ci = contexts.indexOf(ctx);
      if (ci < 0) ci = contexts.push(ctx) - 1;
      calls.push([c.seq, c.id, ci, c.deadlineAt]);
      c.worker = w;
      w.load++;
      w.calls.set(c.seq, c);
    }
    w.worker.postMessage({ t: 'batch', email, contexts, calls } satisfies MainMessage);
    watch();
  }

  function flush(): void {
    flushQueued = false;
    const calls = pending;
    pending = [];
    dispatch(calls.filter((c) => !c.settled));
  }

  for (let i = 0; i < size; i++) workers.push(spawn());
  // Start with every worker ready (its analyzers loaded), so that the first calls do not spend their
  // deadline waiting for a worker to boot; a worker that cannot start stops the start-up.
  const first = [...workers];
  const ups = await Promise.all(first.map((w) => w.up));
  if (ups.includes(false)) {
    const why = first.find((w) => w.error)?.error?.message ?? 'it exited';
    closed = true;
    await Promise.all(first.map((w) => w.worker.terminate()));
    throw new Error(`an analysis worker thread failed to start: ${why}`);
  }

  return {
    ids,
    configure(next) {
      settings = next;
      for (const w of workers)
        w.worker.postMessage({ t: 'settings', settings } satisfies MainMessage);
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
      if (signal?.aborted) {
        return Promise.reject(
          new PluginCallError('aborted', 'analyzer', id, `${label(id)}: call cancelled`),
        );
      }
      const timeoutMs = o?.timeoutMs ?? defaultTimeoutMs;
      return new Promise<AnalyzerAnswer>((resolve, reject) => {
        seq = seq >= 0x7fffffff ? 1 : seq + 1;
        const c: Call = {
          seq,
          id,
          email,
          timeoutMs,
          deadlineAt: Date.now() + timeoutMs,
          resolve,
          reject,
          timer: undefined,
          worker: undefined,
          settled: false,
          unlisten: undefined,
        };
        c.timer = setTimeout(() => onDeadline(c), timeoutMs);
        if (signal) {
          const onAbort = () =>
            fail(c, new PluginCallError('aborted', 'analyzer', id, `${label(id)}: call cancelled`));
          signal.addEventListener('abort', onAbort, { once: true });
          c.unlisten = () => signal.removeEventListener('abort', onAbort);
        }
        pending.push(c);
        if (!flushQueued) {
          flushQueued = true;
          queueMicrotask(flush);
        }
      });
    },
    stats: () => ({
      size,
      ...counts,
      inFlight: workers.reduce((n, w) => n + w.load, 0),
    }),
    async close() {
      if (closed) return;
      closed = true;
      if (watching !== undefined) clearInterval(watching);
      const all = workers.splice(0);
      const left = [...pending, ...orphaned];
      pending = [];
      orphaned.length = 0;
      for (const w of all) {
        w.alive = false;
        for (const c of w.calls.values()) left.push(c);
      }
      for (const c of left) {
        fail(
          c,
          new PluginCallError(
            'aborted',
            'analyzer',
            c.id,
            `${label(c.id)}: the analysis pool closed`,
          ),
        );
      }
      await Promise.all(all.map((w) => w.worker.terminate()));
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
