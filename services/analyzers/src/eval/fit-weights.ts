import { stringify } from 'yaml';
import type { MessageOutcome } from './eval-message.ts';

export interface FitOptions {
  /** Which outcomes train: default the even-numbered files of each class. */
  train?: (o: MessageOutcome) => boolean;
  /** L2 penalty on the weights (not the bias). */
  l2?: number;
  /** A symbol needs this many training messages (either class) to get a weight. */
  minSupport?: number;
  /** Highest false-positive rate accepted on the training half when the bias is placed. */
  maxTrainFpr?: number;
  /** Weights are rounded to this step (explainable, hand-editable numbers). */
  step?: number;
  iterations?: number;
}

export interface SymbolStat {
  phishing: number;
  ham: number;
  weight: number;
}

export interface FitResult {
  bias: number;
  symbols: Record<string, number>;
  stats: Record<string, SymbolStat>;
  train: { messages: number; tp: number; fp: number; fn: number; tn: number };
}

const sigmoid = (x: number) => 1 / (1 + Math.exp(-x));

/**
 * Fits symbol weights by L2-regularised logistic regression on the training outcomes (the symbols
 * of the offline analyzers, `scorer.*` excluded), every weight ≥ 0: a symbol is evidence for
 * phishing or nothing, never evidence of innocence (that would learn the ham corpus's era). The
 * bias is then placed for the best F1 whose training FPR stays within maxTrainFpr.
 */
export function fitWeights(outcomes: MessageOutcome[], o: FitOptions = {}): FitResult {
  const train = outcomes.filter(
    (x) => !x.parse_failed && (o.train ?? ((y) => y.index % 2 === 0))(x),
  );
  const l2 = o.l2 ?? 0.001;
  const step = o.step ?? 0.1;
  const stats: Record<string, SymbolStat> = {};
  for (const x of train)
    for (const s of x.symbols) {
      if (s.startsWith('scorer.')) continue;
      stats[s] ??= { phishing: 0, ham: 0, weight: 0 };
      x.label === 'phishing' ? stats[s].phishing++ : stats[s].ham++;
    }
  const names = Object.keys(stats)
    .filter((s) => stats[s]!.phishing + stats[s]!.ham >= (o.minSupport ?? 4))
    .sort();
  const col = new Map(names.map((n, i) => [n, i]));
  const rows = train.map((x) => ({
    y: x.label === 'phishing' ? 1 : 0,
    f: x.symbols.map((s) => col.get(s)).filter((i): i is number => i !== undefined),
  }));
  const w = new Float64Array(names.length);
  let b = -2;
  const n = rows.length;
  // projected gradient descent with a decaying step (small problem: a few hundred symbols)
  const iters = o.iterations ?? 4000;
  for (let it = 0; it < iters; it++) {
    const g = new Float64Array(names.length);
    let gb = 0;
    for (const r of rows) {
      let z = b;
      for (const i of r.f) z += w[i]!;
      const e = sigmoid(z) - r.y;
      gb += e;
      for (const i of r.f) g[i]! += e;
    }
    const lr = 2 / (1 + it / 500);
    b -= (lr * gb) / n;
    for (let i = 0; i < w.length; i++) {
      w[i] = Math.max(0, w[i]! - lr * (g[i]! / n + l2 * w[i]!));
    }
  }
  const symbols: Record<string, number> = {};
  for (const [i, name] of names.entries()) {
    const v = Math.round(w[i]! / step) * step;
    stats[name]!.weight = Number(v.toFixed(2));
    if (v > 0) symbols[name] = Number(v.toFixed(2));
  }
  // place the bias: best training F1 with FPR ≤ maxTrainFpr
  const sums = train.map((x) => ({
    y: x.label === 'phishing',
    s: x.symbols.reduce((a, s) => a + (symbols[s] ?? 0), 0),
  }));
  const hams = sums.filter((x) => !x.y).length;
  let best = { f1: -1, bias: b, tp: 0, fp: 0, fn: 0, tn: 0 };
  // biases halfway between weight steps: no message sits exactly on the threshold
  for (let k = 0; k <= Math.round(8 / step); k++) {
    const bias = -(k + 0.5) * step;
    let tp = 0;
    let fp = 0;
    for (const x of sums) if (x.s + bias >= 0) x.y ? tp++ : fp++;
    const fn = sums.length - hams - tp;
    const tn = hams - fp;
    if (fp / Math.max(1, hams) > (o.maxTrainFpr ?? 0.01)) continue;
    const f1 = (2 * tp) / Math.max(1, 2 * tp + fp + fn);
    if (f1 > best.f1) best = { f1, bias: Number(bias.toFixed(3)), tp, fp, fn, tn };
  }
  const { tp, fp, fn, tn } = best;
  return { bias: best.bias, symbols, stats, train: { messages: train.length, tp, fp, fn, tn } };
}

/** The weights file text: bias, symbols, and per symbol the training counts as a comment. */
export function weightsYaml(r: FitResult, header: string): string {
  const body = stringify({ bias: r.bias, symbols: r.symbols, types: {} }, { lineWidth: 0 });
  const lines = body.split('\n').map((l) => {
    const m = /^ {2}([^:]+): /.exec(l);
    const s = m ? r.stats[m[1]!.replace(/^"|"$/g, '')] : undefined;
    return s ? `${l} # ${s.phishing} phishing / ${s.ham} ham` : l;
  });
  return `${header
    .split('\n')
    .map((l) => `# ${l}`.trimEnd())
    .join('\n')}\n${lines.join('\n')}`;
}
