import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AnalysisContext, Email, ServiceConfigFile, Workflow } from '@trawl/contracts';
import { parseRawEmail } from '@trawl/mail';
import type { PluginDefinition } from '@trawl/plugin-sdk';
import { compileWorkflow, runWorkflow } from '@trawl/workflow-engine';
import { inProcessDeps } from './in-process-invoker.ts';

export type Label = 'phishing' | 'ham';

export interface MessageOutcome {
  file: string;
  label: Label;
  /** Position of the file within its class (sorted by name), for the even/odd split. */
  index: number;
  predicted: boolean;
  probability: number;
  error?: string;
  /** analyzer id → its own verdict (is_phishing) */
  analyzers: Record<string, boolean>;
  indicatorTypes: string[];
  indicators: { type: string; value: string }[];
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
  seconds: number;
  msgs_per_s: number;
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

function summarizeContext(
  ctx: AnalysisContext,
): Pick<MessageOutcome, 'analyzers' | 'indicatorTypes' | 'indicators'> {
  const analyzers: Record<string, boolean> = {};
  const types = new Set<string>();
  const indicators: { type: string; value: string }[] = [];
  for (const stage of Object.values(ctx)) {
    for (const [id, r] of Object.entries(stage.analyzers)) {
      if (r.status !== 'success') continue;
      analyzers[id] = r.is_phishing;
      for (const i of r.indicators) {
        types.add(i.type);
        if (indicators.length < 40) indicators.push({ type: i.type, value: i.value });
      }
    }
  }
  return { analyzers, indicatorTypes: [...types], indicators };
}

export interface EvalOptions {
  dir: string;
  workflowId: string;
  workflows: Workflow[];
  service: ServiceConfigFile;
  registry: Record<string, PluginDefinition>;
  /** At most this many messages per class (first in name order); all when absent. */
  limit?: number;
  /** Messages in flight at once (parsing is asynchronous). */
  concurrency?: number;
  onProgress?: (done: number, total: number) => void;
}

/** Runs every message of dir/phishing and dir/ham through the workflow, in-process. */
export async function runEval(o: EvalOptions): Promise<EvalReport> {
  const wf = o.workflows.find((w) => w.id === o.workflowId);
  if (!wf)
    throw new Error(
      `workflow ${o.workflowId} not found (have: ${o.workflows.map((w) => w.id).join(', ')})`,
    );
  const compiled = compileWorkflow(wf);
  const deps = {
    ...inProcessDeps(o.registry, o.service),
    thresholds: o.service.verdict.thresholds,
    defaultAnalyzerTimeoutMs: o.service.analyzer.timeout_ms,
  };
  const items: { file: string; label: Label; index: number; path: string }[] = [];
  for (const label of ['phishing', 'ham'] as const) {
    for (const [index, f] of listEml(join(o.dir, label))
      .slice(0, o.limit ?? Number.POSITIVE_INFINITY)
      .entries()) {
      items.push({ file: f, label, index, path: join(o.dir, label, f) });
    }
  }
  const outcomes: MessageOutcome[] = new Array(items.length);
  const parseFailures: EvalReport['parse_failures'] = [];
  const runFailures: EvalReport['run_failures'] = [];
  const t0 = performance.now();
  let next = 0;
  let done = 0;
  const worker = async () => {
    for (;;) {
      const i = next++;
      if (i >= items.length) return;
      const it = items[i]!;
      const base = {
        file: it.file,
        label: it.label,
        index: it.index,
        analyzers: {},
        indicatorTypes: [],
        indicators: [],
      };
      let email: Email;
      try {
        email = await parseRawEmail(readFileSync(it.path));
      } catch (err) {
        const error = (err as Error).message.slice(0, 300);
        parseFailures.push({ file: it.file, label: it.label, error });
        outcomes[i] = { ...base, predicted: false, probability: 0, error: `parse: ${error}` };
        continue;
      }
      const out = await runWorkflow(compiled, email, deps);
      if (out.status === 'completed') {
        const p = out.result.is_phishing ? out.result.confidence : 1 - out.result.confidence;
        outcomes[i] = {
          ...base,
          predicted: out.result.is_phishing,
          probability: p,
          ...summarizeContext(out.context),
        };
      } else {
        runFailures.push({ file: it.file, label: it.label, error: out.error.message });
        outcomes[i] = {
          ...base,
          predicted: false,
          probability: 0,
          error: out.error.message,
          ...summarizeContext(out.context),
        };
      }
      done++;
      o.onProgress?.(done, items.length);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, o.concurrency ?? 4) }, worker));
  const seconds = (performance.now() - t0) / 1000;
  return {
    workflow: wf.id,
    dir: o.dir,
    messages: items.length,
    parse_failures: parseFailures,
    run_failures: runFailures,
    seconds,
    msgs_per_s: items.length / Math.max(seconds, 1e-9),
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

const f3 = (n: number) => n.toFixed(3);

function metricsLine(m: Metrics): string {
  return `TP=${m.tp} FP=${m.fp} FN=${m.fn} TN=${m.tn}  precision=${f3(m.precision)} recall=${f3(m.recall)} F1=${f3(m.f1)} FPR=${f3(m.fpr)}`;
}

/** The human report; its last line is `precision=… recall=… F1=… FPR=… msgs/s=…`. */
export function formatReport(r: EvalReport): string {
  const lines: string[] = [];
  lines.push(
    `workflow ${r.workflow} on ${r.dir}: ${r.messages} messages in ${r.seconds.toFixed(2)} s`,
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
