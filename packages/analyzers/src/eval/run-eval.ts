import { readdirSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { Worker } from 'node:worker_threads';
import type { ServiceConfigFile, Workflow } from '@trawl/contracts';
import type { PluginDefinition } from '@trawl/plugin-sdk';
import { bundleEvalWorker } from './bundle-worker.ts';
import { type EvalItem, evalRunner, type Label, type MessageOutcome } from './eval-message.ts';
import type { MainMessage, WorkerInput, WorkerMessage } from './eval-worker.ts';
import { FORGERIES, type Forgery, formatForged } from './forgeries.ts';
import { formatLanguages, formatSymbolTable, symbolTable } from './symbol-table.ts';
import { withClassifier } from './with-classifier.ts';

export type { Label } from './eval-message.ts';

/** An outcome with the source (corpus) its message came from. */
export type SourcedOutcome = MessageOutcome & { source: string };

/** One source of an evaluation: a corpus directory (or, with byClass, one class folder of it). */
export interface SourceStats {
  source: string;
  dir: string;
  messages: number;
  phishing: number;
  ham: number;
  metrics: Metrics;
}

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

export function countOutcomes(outs: readonly { label: Label; predicted: boolean }[]): Counts {
  const c: Counts = { tp: 0, fp: 0, fn: 0, tn: 0 };
  for (const o of outs) {
    if (o.label === 'phishing') o.predicted ? c.tp++ : c.fn++;
    else o.predicted ? c.fp++ : c.tn++;
  }
  return c;
}

interface FiringStats {
  phishing: number;
  ham: number;
  precision: number;
}

export interface EvalReport {
  workflow: string;
  /** The corpus directory (several joined with ', '). */
  dir: string;
  messages: number;
  /** Per source, in the order the directories were given. */
  sources: SourceStats[];
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
  outcomes: SourcedOutcome[];
  /** With `forged`: the phishing messages run with each forgery (not in any metric above). */
  forged?: SourcedOutcome[];
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
  /** A corpus directory (phishing/ and/or ham/ of .eml); `dirs` takes several. */
  dir: string;
  /** Several corpus directories, each one source; when given, `dir` is ignored. */
  dirs?: string[];
  /**
   * Each class folder is its own source (`corpus/phishing`, `corpus/ham`): a directory that mixes
   * two collections (e.g. honeypot phishing and an old ham archive) gives two sources.
   */
  sourceByClass?: boolean;
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
  /** An exported classifier state the `classifier` analyzer reads (else it abstains). */
  classifierState?: string;
  /**
   * Also run every phishing message once per forgery (eval/forgeries.ts), as sources named
   * `<source>+<forgery>`; they count in no metric but the forged-headers table.
   */
  forged?: boolean;
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
  const runner = evalRunner(wf, o.service, await withClassifier(o.registry, o.classifierState));
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
            const input: WorkerInput = {
              workflow: wf,
              service: o.service,
              ...(o.classifierState ? { classifierState: o.classifierState } : {}),
            };
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

/**
 * Source names of corpus directories: the directory's name, made unique with its parent's name
 * (then a number) when two directories share it.
 */
export function sourceNames(dirs: string[]): string[] {
  const abs = dirs.map((d) => resolve(d));
  const base = abs.map((d) => basename(d) || d);
  const names = base.map((b, i) =>
    base.filter((x) => x === b).length > 1 ? `${basename(resolve(abs[i]!, '..'))}/${b}` : b,
  );
  const seen = new Map<string, number>();
  return names.map((n) => {
    const k = (seen.get(n) ?? 0) + 1;
    seen.set(n, k);
    return k > 1 ? `${n}#${k}` : n;
  });
}

export interface CorpusItem extends EvalItem {
  source: string;
  dir: string;
  forgery?: Forgery;
}

/** The messages of the corpus directories, phishing then ham per directory, in name order. */
export function listCorpus(
  dirs: string[],
  o: { limit?: number; sourceByClass?: boolean } = {},
): CorpusItem[] {
  const names = sourceNames(dirs);
  const items: CorpusItem[] = [];
  for (const [d, dir] of dirs.entries()) {
    for (const label of ['phishing', 'ham'] as const) {
      const source = o.sourceByClass ? `${names[d]}/${label}` : names[d]!;
      for (const [index, f] of listEml(join(dir, label))
        .slice(0, o.limit ?? Number.POSITIVE_INFINITY)
        .entries()) {
        items.push({ file: f, label, index, path: join(dir, label, f), source, dir });
      }
    }
  }
  return items;
}

/** Per-source counts and metrics, sources in order of first appearance. */
export function sourceStats(
  outs: readonly { source: string; label: Label; predicted: boolean }[],
  dirOf: (source: string) => string = () => '',
): SourceStats[] {
  const by = new Map<string, { source: string; label: Label; predicted: boolean }[]>();
  for (const x of outs) {
    const a = by.get(x.source);
    if (a) a.push(x);
    else by.set(x.source, [x]);
  }
  return [...by].map(([source, xs]) => {
    const c = countOutcomes(xs);
    return {
      source,
      dir: dirOf(source),
      messages: xs.length,
      phishing: c.tp + c.fn,
      ham: c.fp + c.tn,
      metrics: metricsOf(c),
    };
  });
}

/**
 * Runs every message of dir/phishing and dir/ham (of each of `dirs`) through the workflow,
 * in-process, all sources in one run.
 */
export async function runEval(o: EvalOptions): Promise<EvalReport> {
  const wf = o.workflows.find((w) => w.id === o.workflowId);
  if (!wf)
    throw new Error(
      `workflow ${o.workflowId} not found (have: ${o.workflows.map((w) => w.id).join(', ')})`,
    );
  const dirs = o.dirs?.length ? o.dirs : [o.dir];
  const corpus = listCorpus(dirs, {
    ...(o.limit !== undefined ? { limit: o.limit } : {}),
    ...(o.sourceByClass ? { sourceByClass: true } : {}),
  });
  if (o.forged)
    for (const c of corpus.filter((x) => x.label === 'phishing'))
      for (const forgery of FORGERIES)
        corpus.push({ ...c, forgery, source: `${c.source}+${forgery}` });
  // the workers get plain EvalItems (what they read), the sources are put back afterwards
  const items: EvalItem[] = corpus.map(({ file, label, index, path, forgery }) => ({
    file,
    label,
    index,
    path,
    ...(forgery ? { forgery } : {}),
  }));
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
  const every = outcomes as SourcedOutcome[];
  for (const [i, x] of every.entries()) x.source = corpus[i]!.source;
  // the forged runs count in no metric (see formatForged)
  const sourced = every.filter((x) => !x.forgery);
  const plain: MessageOutcome[] = sourced;
  const dirOf = new Map(corpus.map((c) => [c.source, c.dir]));
  const parseFailures = plain
    .filter((x) => x.parse_failed)
    .map((x) => ({ file: x.file, label: x.label, error: x.error ?? '' }));
  const runFailures = plain
    .filter((x) => x.error && !x.parse_failed)
    .map((x) => ({ file: x.file, label: x.label, error: x.error ?? '' }));
  return {
    workflow: wf.id,
    dir: dirs.join(', '),
    messages: plain.length,
    sources: sourceStats(sourced, (s) => dirOf.get(s) ?? ''),
    parse_failures: parseFailures,
    run_failures: runFailures,
    seconds,
    startup_seconds: (t0 - start) / 1000,
    cpu_ms_per_msg: (cpu.user + cpu.system) / 1000 / Math.max(1, items.length),
    msgs_per_s: items.length / Math.max(seconds, 1e-9),
    workers,
    all: metricsOf(countOutcomes(plain)),
    even: metricsOf(countOutcomes(plain.filter((x) => x.index % 2 === 0))),
    odd: metricsOf(countOutcomes(plain.filter((x) => x.index % 2 === 1))),
    analyzers: firing(plain, (x) =>
      Object.entries(x.analyzers)
        .filter(([, v]) => v)
        .map(([k]) => k),
    ),
    indicator_types: firing(plain, (x) => x.indicatorTypes),
    outcomes: sourced,
    ...(o.forged ? { forged: every.filter((x) => x.forgery) } : {}),
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

/** One row of a per-source table: a source, optionally which filter judged it, and the counts. */
export interface SourceRow {
  source: string;
  /** Which filter (trawl, rspamd, …) or which weights; a column appears when any row has one. */
  filter?: string;
  counts: Counts;
  /** Free text after the figures (e.g. errors of a peer). */
  note?: string;
}

const NA = '—';

/**
 * A per-source table: messages, phishing and ham counts, then the metrics that apply: recall only
 * with phishing, FPR only with ham, precision and F1 only with both (on one class they say nothing).
 */
export function formatSourceTable(rows: SourceRow[], firstColumn = 'source'): string[] {
  const w = Math.max(firstColumn.length, ...rows.map((r) => r.source.length));
  const hasFilter = rows.some((r) => r.filter);
  const fw = Math.max(6, ...rows.map((r) => r.filter?.length ?? 0));
  const cell = (v: string, n: number) => v.padStart(n);
  const head = [
    firstColumn.padEnd(w),
    ...(hasFilter ? ['filter'.padEnd(fw)] : []),
    cell('messages', 8),
    cell('phishing', 8),
    cell('ham', 5),
    cell('precision', 9),
    cell('recall', 6),
    cell('F1', 5),
    cell('FPR', 5),
  ];
  const out = [`  ${head.join('  ')}`];
  for (const r of rows) {
    const m = metricsOf(r.counts);
    const phishing = r.counts.tp + r.counts.fn;
    const ham = r.counts.fp + r.counts.tn;
    const both = phishing > 0 && ham > 0;
    const line = [
      r.source.padEnd(w),
      ...(hasFilter ? [(r.filter ?? '').padEnd(fw)] : []),
      cell(String(phishing + ham), 8),
      cell(String(phishing), 8),
      cell(String(ham), 5),
      cell(both ? f3(m.precision) : NA, 9),
      cell(phishing ? f3(m.recall) : NA, 6),
      cell(both ? f3(m.f1) : NA, 5),
      cell(ham ? f3(m.fpr) : NA, 5),
    ];
    out.push(`  ${line.join('  ')}${r.note ? `  ${r.note}` : ''}`.trimEnd());
  }
  return out;
}

/** Counts of the outcomes of one source. */
export function countsBySource(
  outs: readonly { source: string; label: Label; predicted: boolean }[],
): Map<string, Counts> {
  const m = new Map<string, Counts>();
  for (const x of outs) {
    let c = m.get(x.source);
    if (!c) {
      c = { tp: 0, fp: 0, fn: 0, tn: 0 };
      m.set(x.source, c);
    }
    if (x.label === 'phishing') x.predicted ? c.tp++ : c.fn++;
    else x.predicted ? c.fp++ : c.tn++;
  }
  return m;
}

/** The figures line that ends every report. */
export function figuresLine(m: Metrics, msgsPerS: number): string {
  return `precision=${f3(m.precision)} recall=${f3(m.recall)} F1=${f3(m.f1)} FPR=${f3(m.fpr)} msgs/s=${msgsPerS.toFixed(1)}`;
}

/**
 * The human report; its last line is `precision=… recall=… F1=… FPR=… msgs/s=…` over all messages.
 * With several sources it has a row per source; `extra` lines (peer and cross-source sections) go
 * just before the last line.
 */
export function formatReport(r: EvalReport, extra: string[] = []): string {
  const lines: string[] = [];
  lines.push(
    `workflow ${r.workflow} on ${r.dir}: ${r.messages} messages in ${r.seconds.toFixed(2)} s (${r.workers} thread${r.workers > 1 ? 's' : ''}, ${r.cpu_ms_per_msg.toFixed(2)} CPU ms/msg; start-up before the clock ${r.startup_seconds.toFixed(2)} s)`,
  );
  lines.push(`all   ${metricsLine(r.all)}`);
  lines.push(`even  ${metricsLine(r.even)}`);
  lines.push(`odd   ${metricsLine(r.odd)}`);
  if (r.sources.length > 1) {
    lines.push('per source:');
    lines.push(
      ...formatSourceTable(
        r.sources.map((s) => ({ source: s.source, counts: s.metrics })),
        'source',
      ),
    );
  }
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
  lines.push(...formatLanguages(r.outcomes));
  lines.push(...formatSymbolTable(symbolTable(r.outcomes)));
  if (r.forged) lines.push(...formatForged([...r.outcomes, ...r.forged]));
  lines.push(...extra);
  lines.push(figuresLine(r.all, r.msgs_per_s));
  return lines.join('\n');
}
