import { readdirSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import type { ServiceConfigFile, Workflow } from '@trawl/contracts';
import type { PluginDefinition } from '@trawl/plugin-sdk';
import { bundleEvalWorker } from './bundle-worker.ts';
import { type EvalItem, evalRunner, type Label, type MessageOutcome } from './eval-message.ts';
import type { MainMessage, WorkerInput, WorkerMessage } from './eval-worker.ts';

export type { Label, MessageOutcome } from './eval-message.ts';

export interface Counts {
  tp: number;
  fp: number;
  fn: number;
  tn: number;
}

export interface Metrics extends Counts {
  precision: number;
  recall: number;
  f1: number;
  fpr: number;
}

export function metricsOf(c: Counts): Metrics {
  const precision = c.tp + c.fp === 0 ? 0 : c.tp / (c.tp + c.fp);
  const recall = c.tp + c.fn === 0 ? 0 : c.tp / (c.tp + c.fn);
  const f1 = precision + recall === 0 ? 0 : (2 * precision * recall) / (precision + recall);
  const fpr = c.fp + c.tn === 0 ? 0 : c.fp / (c.fp + c.tn);
  return { ...c, precision, recall, f1, fpr };
}

export function countOutcomes(outs: MessageOutcome[]): Counts {
  const c: Counts = { tp: 0, fp: 0, fn: 0, tn: 0 };
  for (const o of outs) {
    if (o.label === 'phishing') o.predicted ? c.tp++ : c.fn++;
    else o.predicted ? c.fp++ : c.tn++;
  }
  return c;
}

export interface FiringStats {
  phishing: number;
  ham: number;
  precision: number;
}

export interface EvalReport {
  workflow: string;
  dir: string;
  messages: number;
  parse_failures: { file: string; label: Label; error: string }[];
  run_failures: { file: string; label: Label; error: string }[];
  /** From the moment every thread was ready (analyzers loaded, workflow compiled) to the last verdict. */
  seconds: number;
  /** Loading the analyzers and compiling the workflow in every thread, before the clock starts. */
  startup_seconds: number;
  /** CPU time of the whole process (all threads) per message while the clock ran. */
  cpu_ms_per_msg: number;
  /** messages / seconds */
  msgs_per_s: number;
  workers: number;
  all: Metrics;
  even: Metrics;
  odd: Metrics;
  analyzers: Record<string, FiringStats>;
  indicator_types: Record<string, FiringStats>;
  outcomes: MessageOutcome[];
}

function firing(
  outs: MessageOutcome[],
  pick: (o: MessageOutcome) => string[],
): Record<string, FiringStats> {
  const m: Record<string, FiringStats> = {};
  for (const o of outs) {
    for (const k of new Set(pick(o))) {
      m[k] ??= { phishing: 0, ham: 0, precision: 0 };
      o.label === 'phishing' ? m[k].phishing++ : m[k].ham++;
    }
  }
  for (const s of Object.values(m)) s.precision = s.phishing / Math.max(1, s.phishing + s.ham);
  return m;
}

function listEml(dir: string): string[] {
  try {
    return readdirSync(dir)
      .filter((f) => f.toLowerCase().endsWith('.eml'))
      .sort();
  } catch {
    return [];
  }
}

export interface EvalOptions {
  dir: string;
  workflowId: string;
  workflows: Workflow[];
  service: ServiceConfigFile;
  registry: Record<string, PluginDefinition>;
  /** At most this many messages per class (first in name order); all when absent. */
  limit?: number;
  /** Messages in flight at once per thread (parsing is asynchronous). */
  concurrency?: number;
  /**
   * Worker threads (each parses and analyses a share; they load the built-in registry themselves,
   * so `registry` is used only when this is 1). Default 1.
   */
  workers?: number;
  onProgress?: (done: number, total: number) => void;
}

/** Runs items in this thread, `concurrency` at a time (parsing is asynchronous). */
async function runInThread(
  o: EvalOptions,
  wf: Workflow,
  items: EvalItem[],
  outcomes: MessageOutcome[],
  tick: () => void,
  onReady: () => void,
): Promise<void> {
  const runner = evalRunner(wf, o.service, o.registry);
  await runner.warmUp();
  onReady();
  let next = 0;
  const lane = async () => {
    for (;;) {
      const i = next++;
      if (i >= items.length) return;
      outcomes[i] = await runner.run(items[i]!);
      tick();
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, o.concurrency ?? 4) }, lane));
}

/** Messages handed to a worker at a time (it asks for more when it has run them). */
const BATCH = 4;

/**
 * Runs items in `workers` worker threads, results merged in order. Each worker loads its modules and
 * compiles the workflow first; `onReady` is called once all of them are ready (the eval's clock starts
 * there, as a running service's would). Items are handed out a few at a time as workers finish theirs,
 * so a worker that got slow messages does not hold the run up.
 */
async function runInWorkers(
  o: EvalOptions,
  wf: Workflow,
  items: EvalItem[],
  outcomes: MessageOutcome[],
  tick: () => void,
  workers: number,
  onReady: () => void,
): Promise<void> {
  // a bundled worker starts in a fraction of the time the tsx-loaded one takes
  const boot = (await bundleEvalWorker()) ?? new URL('./eval-worker-boot.mjs', import.meta.url);
  const pool: Worker[] = [];
  let next = 0;
  let ready = 0;
  let received = 0;
  let failure: Error | undefined;
  const feed = (w: Worker): boolean => {
    if (next >= items.length || failure) return false;
    const batch: [number, EvalItem][] = [];
    for (; batch.length < BATCH && next < items.length; next++) batch.push([next, items[next]!]);
    w.postMessage({ kind: 'items', items: batch } satisfies MainMessage);
    return true;
  };
  try {
    await Promise.all(
      Array.from(
        { length: workers },
        () =>
          new Promise<void>((resolve, reject) => {
            const input: WorkerInput = { workflow: wf, service: o.service };
            const w = new Worker(boot, { workerData: input });
            pool.push(w);
            let finished = false;
            const done = (err?: Error) => {
              if (finished) return;
              finished = true;
              if (err) {
                failure ??= err;
                reject(err);
              } else resolve();
            };
            w.on('message', (m: WorkerMessage) => {
              if (m.kind === 'outcomes') {
                for (const [at, outcome] of m.outcomes) {
                  outcomes[at] = outcome;
                  received++;
                  tick();
                }
                if (!feed(w) && received === items.length)
                  for (const x of pool) x.postMessage({ kind: 'end' } satisfies MainMessage);
              } else if (m.kind === 'ready') {
                if (++ready === workers) {
                  onReady();
                  // two batches each, so a worker never waits for the next one
                  for (const x of pool) for (let k = 0; k < 2; k++) feed(x);
                }
              } else if (m.kind === 'error') {
                done(new Error(`eval worker failed: ${m.message}`));
              }
            });
            w.on('error', (err) => done(err));
            w.on('exit', (code) => {
              if (received === items.length) done();
              else done(new Error(`eval worker exited with code ${code}`));
            });
          }),
      ),
    );
  } finally {
    await Promise.all(pool.map((w) => w.terminate()));
  }
}

/** Runs every message of dir/phishing and dir/ham through the workflow, in-process. */
export async function runEval(o: EvalOptions): Promise<EvalReport> {
  const wf = o.workflows.find((w) => w.id === o.workflowId);
  if (!wf)
    throw new Error(
      `workflow ${o.workflowId} not found (have: ${o.workflows.map((w) => w.id).join(', ')})`,
    );
  const items: EvalItem[] = [];
  for (const label of ['phishing', 'ham'] as const) {
    for (const [index, f] of listEml(join(o.dir, label))
      .slice(0, o.limit ?? Number.POSITIVE_INFINITY)
      .entries()) {
      items.push({ file: f, label, index, path: join(o.dir, label, f) });
    }
  }
  const outcomes: MessageOutcome[] = new Array(items.length);
  const start = performance.now();
  let t0 = start;
  let cpu0 = process.cpuUsage();
  // the clock starts once the analyzers are loaded and the workflow compiled (as in a running service)
  const onReady = () => {
    t0 = performance.now();
    cpu0 = process.cpuUsage();
  };
  let done = 0;
  const tick = () => {
    done++;
    o.onProgress?.(done, items.length);
  };
  const workers = Math.min(o.workers ?? 1, Math.max(1, Math.ceil(items.length / 20)));
  if (workers > 1) await runInWorkers(o, wf, items, outcomes, tick, workers, onReady);
  else await runInThread(o, wf, items, outcomes, tick, onReady);
  const end = performance.now();
  const cpu = process.cpuUsage(cpu0);
  const seconds = (end - t0) / 1000;
  const parseFailures = outcomes
    .filter((x) => x.parse_failed)
    .map((x) => ({ file: x.file, label: x.label, error: x.error ?? '' }));
  const runFailures = outcomes
    .filter((x) => x.error && !x.parse_failed)
    .map((x) => ({ file: x.file, label: x.label, error: x.error ?? '' }));
  return {
    workflow: wf.id,
    dir: o.dir,
    messages: items.length,
    parse_failures: parseFailures,
    run_failures: runFailures,
    seconds,
    startup_seconds: (t0 - start) / 1000,
    cpu_ms_per_msg: (cpu.user + cpu.system) / 1000 / Math.max(1, items.length),
    msgs_per_s: items.length / Math.max(seconds, 1e-9),
    workers,
    all: metricsOf(countOutcomes(outcomes)),
    even: metricsOf(countOutcomes(outcomes.filter((x) => x.index % 2 === 0))),
    odd: metricsOf(countOutcomes(outcomes.filter((x) => x.index % 2 === 1))),
    analyzers: firing(outcomes, (x) =>
      Object.entries(x.analyzers)
        .filter(([, v]) => v)
        .map(([k]) => k),
    ),
    indicator_types: firing(outcomes, (x) => x.indicatorTypes),
    outcomes,
  };
}

/** Worker threads the eval uses by default: one per available core. */
export function defaultWorkers(): number {
  return availableParallelism();
}

const f3 = (n: number) => n.toFixed(3);

function metricsLine(m: Metrics): string {
  return `TP=${m.tp} FP=${m.fp} FN=${m.fn} TN=${m.tn}  precision=${f3(m.precision)} recall=${f3(m.recall)} F1=${f3(m.f1)} FPR=${f3(m.fpr)}`;
}

/** The human report; its last line is `precision=… recall=… F1=… FPR=… msgs/s=…`. */
export function formatReport(r: EvalReport): string {
  const lines: string[] = [];
  lines.push(
    `workflow ${r.workflow} on ${r.dir}: ${r.messages} messages in ${r.seconds.toFixed(2)} s (${r.workers} thread${r.workers > 1 ? 's' : ''}, ${r.cpu_ms_per_msg.toFixed(2)} CPU ms/msg; start-up before the clock ${r.startup_seconds.toFixed(2)} s)`,
  );
  lines.push(`all   ${metricsLine(r.all)}`);
  lines.push(`even  ${metricsLine(r.even)}`);
  lines.push(`odd   ${metricsLine(r.odd)}`);
  if (r.parse_failures.length) {
    lines.push(`parse failures (counted as "not phishing"): ${r.parse_failures.length}`);
    for (const f of r.parse_failures.slice(0, 20)) lines.push(`  ${f.label}/${f.file}: ${f.error}`);
  }
  if (r.run_failures.length) {
    lines.push(`workflow failures (counted as "not phishing"): ${r.run_failures.length}`);
    for (const f of r.run_failures.slice(0, 20)) lines.push(`  ${f.label}/${f.file}: ${f.error}`);
  }
  const table = (title: string, m: Record<string, FiringStats>) => {
    lines.push(title);
    lines.push(
      `  ${'name'.padEnd(28)} ${'phishing'.padStart(8)} ${'ham'.padStart(6)} ${'precision'.padStart(9)}`,
    );
    for (const [k, s] of Object.entries(m).sort(
      (a, b) => b[1].phishing + b[1].ham - (a[1].phishing + a[1].ham),
    )) {
      lines.push(
        `  ${k.padEnd(28)} ${String(s.phishing).padStart(8)} ${String(s.ham).padStart(6)} ${f3(s.precision).padStart(9)}`,
      );
    }
  };
  table('per analyzer (its own verdict is phishing):', r.analyzers);
  table('per indicator type (raised at least once):', r.indicator_types);
  lines.push(
    `precision=${f3(r.all.precision)} recall=${f3(r.all.recall)} F1=${f3(r.all.f1)} FPR=${f3(r.all.fpr)} msgs/s=${r.msgs_per_s.toFixed(1)}`,
  );
  return lines.join('\n');
}
