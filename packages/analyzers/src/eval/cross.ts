import type { ScoreTable } from '../scorer/combine.ts';
import { type FitOptions, type FitResult, fitTable, fitWeights } from './fit-weights.ts';
import { type RescoreSettings, rescore } from './rescore.ts';
import {
  type Counts,
  countOutcomes,
  formatSourceTable,
  metricsOf,
  type SourcedOutcome,
  type SourceRow,
} from './run-eval.ts';

/** One leave-one-source-out fold: train on every other source, test on the held-out one. */
export interface Fold<T> {
  heldOut: string;
  train: T[];
  test: T[];
}

/** The leave-one-source-out folds, sources in order of first appearance. */
export function looFolds<T extends { source: string }>(outs: readonly T[]): Fold<T>[] {
  const sources = [...new Set(outs.map((x) => x.source))];
  return sources.map((heldOut) => ({
    heldOut,
    train: outs.filter((x) => x.source !== heldOut),
    test: outs.filter((x) => x.source === heldOut),
  }));
}

export interface CrossRow {
  source: string;
  counts: Counts;
  /** The sources the fold's weights were fitted on (fitted rows only). */
  trainedOn?: string[];
  fit?: FitResult;
  /** Why the fold was not fitted (its training mail lacks a class). */
  skipped?: string;
}

export interface Worst {
  /** Lowest recall among sources with phishing. */
  recall?: { source: string; value: number };
  /** Highest FPR among sources with ham. */
  fpr?: { source: string; value: number };
}

export interface CrossReport {
  /** Leave-one-source-out: weights fitted without the source, tested on it. */
  fitted: CrossRow[];
  /** The shipped defaults (declared scores + the weights file), no fit. */
  defaults: CrossRow[];
  worst: { fitted: Worst; defaults: Worst };
  /** Messages whose offline re-score with the defaults differs from the workflow's verdict. */
  differ: number;
  messages: number;
  lambda: number;
}

/** The worst source: lowest recall among phishing sources, highest FPR among ham sources. */
export function worstOf(rows: readonly CrossRow[]): Worst {
  const w: Worst = {};
  for (const r of rows) {
    const m = metricsOf(r.counts);
    if (r.counts.tp + r.counts.fn > 0 && (!w.recall || m.recall < w.recall.value))
      w.recall = { source: r.source, value: m.recall };
    if (r.counts.fp + r.counts.tn > 0 && (!w.fpr || m.fpr > w.fpr.value))
      w.fpr = { source: r.source, value: m.fpr };
  }
  return w;
}

/**
 * Leave-one-source-out over the outcomes of one eval run: for each source, weights fitted (toward
 * the declared scores) on the other sources' outcomes and tested on it, all by offline re-scoring
 * with `combine()`; beside it the shipped defaults' rows, re-scored with `defaults` the same way.
 */
export function crossEvaluate(
  outs: readonly SourcedOutcome[],
  o: { defaults: ScoreTable; settings: RescoreSettings; fit?: FitOptions },
): CrossReport {
  const fitted: CrossRow[] = [];
  const defaults: CrossRow[] = [];
  const base = {
    ...o.fit,
    bias: o.defaults.bias,
    groups: { ...o.defaults.groups },
    settings: o.settings,
    // each outcome's `source` (the default of fitWeights) balances the loss
  } satisfies FitOptions;
  for (const f of looFolds(outs)) {
    const trainedOn = [...new Set(f.train.map((x) => x.source))];
    const labels = new Set(f.train.filter((x) => !x.parse_failed).map((x) => x.label));
    const row: CrossRow = { source: f.heldOut, counts: countOutcomes([]), trainedOn };
    if (labels.size < 2) {
      row.skipped = `the other sources have no ${labels.has('phishing') ? 'ham' : 'phishing'}`;
    } else {
      const fit = fitWeights(f.train, base);
      row.fit = fit;
      row.counts = countOutcomes(rescore(f.test, fitTable(fit), o.settings));
    }
    fitted.push(row);
  }
  const re = rescore(outs, o.defaults, o.settings);
  let differ = 0;
  for (const [i, x] of re.entries()) if (x.predicted !== outs[i]!.predicted) differ++;
  for (const f of looFolds(re)) defaults.push({ source: f.heldOut, counts: countOutcomes(f.test) });
  return {
    fitted,
    defaults,
    worst: { fitted: worstOf(fitted.filter((r) => !r.skipped)), defaults: worstOf(defaults) },
    differ,
    messages: outs.length,
    lambda: o.fit?.l2 ?? 300,
  };
}

const f3 = (n: number) => n.toFixed(3);

function worstLine(title: string, w: Worst): string {
  const parts = [
    w.recall
      ? `recall ${f3(w.recall.value)} (${w.recall.source})`
      : 'recall — (no phishing source)',
    w.fpr ? `FPR ${f3(w.fpr.value)} (${w.fpr.source})` : 'FPR — (no ham source)',
  ];
  return `${title}${parts.join(', ')}`;
}

/** The --cross section: a fitted and a defaults row per held-out source, then the worst source. */
export function formatCross(r: CrossReport): string[] {
  const rows: SourceRow[] = [];
  for (const [i, f] of r.fitted.entries()) {
    const d = r.defaults[i]!;
    const moved = f.fit ? Object.keys(f.fit.symbols).length : 0;
    rows.push({
      source: f.source,
      filter: 'loso-fit',
      counts: f.counts,
      note: f.skipped
        ? `not fitted: ${f.skipped}`
        : `trained on ${f.trainedOn?.join(' + ')} (bias ${f.fit?.bias}, ${moved} symbol${moved === 1 ? '' : 's'} moved ≥ 0.1)`,
    });
    rows.push({ source: d.source, filter: 'defaults', counts: d.counts });
  }
  const lines = [
    `cross-source (leave-one-source-out): loso-fit = weights fitted toward the declared scores (λ=${r.lambda}) on the other sources, tested on the held-out one; defaults = declared scores + the weights file, no fit`,
    ...formatSourceTable(rows, 'held out'),
  ];
  if (r.differ)
    lines.push(
      `  note: the offline re-score of the defaults differs from the workflow's verdict on ${r.differ} of ${r.messages} messages (LLM stage, analyzers without symbols, or another workflow)`,
    );
  lines.push(worstLine('worst source, leave-one-source-out fit: ', r.worst.fitted));
  lines.push(worstLine('worst source, shipped defaults:          ', r.worst.defaults));
  return lines;
}
