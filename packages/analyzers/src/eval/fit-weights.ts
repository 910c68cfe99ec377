import { stringify } from 'yaml';
import { combine, groupCap, type ScoreTable } from '../scorer/combine.ts';
import { sigmoid } from '../shared/score.ts';
import type { GroupDef } from '../shared/symbols.ts';
import type { Label, MessageOutcome } from './eval-message.ts';
import { DEFAULT_RESCORE, evidenceOf, type RescoreSettings, rescore } from './rescore.ts';

/**
 * Fitting adapts the declared symbol scores to a labelled mail stream; it does not define them.
 *
 * The model is the scorer itself: log-odds = combine(evidence, {bias, overrides: w, groups}) bounded
 * by max_log_odds, p = sigmoid(log-odds). The loss is the source- and class-balanced logistic loss
 * plus λ·Σ (w − prior)², prior = the symbol's declared score: a symbol the data says little about
 * stays at its declared score (never 0), a symbol absent from the training mail keeps it exactly.
 * The bias has its prior too (the weights file's) under the same λ: unpenalised, it learnt the
 * base rate of the training sources (leave-one-source-out: trained without the 2002 ham it rose
 * from −3 to −2.45 and flagged 3.8% of it).
 * Weights keep the sign of their prior (a declared score of 0 counts as ≥ 0) unless allowNegative
 * lets symbols with a prior ≥ 0 go below 0. Group caps act in the fit exactly as in the scorer:
 * a symbol whose group sum is past the group's cap (or at it, in the direction the loss pushes)
 * gets no gradient from that message (a subgradient of the clamped sum). Optimised by projected
 * Adam (full batch) with a linearly decaying step.
 */
export interface FitOptions {
  /** Which outcomes train (default: all). */
  train?: (o: MessageOutcome) => boolean;
  /** The source of an outcome: each source weighs the same in the loss (default: its `source`). */
  sourceOf?: (o: MessageOutcome) => string;
  /**
   * λ of the penalty λ·Σ (w − prior)², in units of one (balanced) training message. Default 300,
   * chosen by leave-one-source-out on the shared corpora (docs/evaluation.md): 10 and 30 let the
   * fit learn what tells the training sources apart and lose on held-out ham.
   */
  l2?: number;
  /** Symbols whose declared score is ≥ 0 may be fitted below 0. */
  allowNegative?: boolean;
  /** Starting bias (the weights file's). Default -3. */
  bias?: number;
  /**
   * Keep the bias where it starts (fit the symbol scores only). Default false: the bias is fitted,
   * pulled toward where it starts by the same λ as the symbols.
   */
  fixedBias?: boolean;
  /** Group cap overrides used while fitting (the weights file's), written back unchanged. */
  groups?: Record<string, GroupDef>;
  /** Indicator-type weights (the weights file's), written back unchanged. */
  types?: Record<string, number>;
  settings?: RescoreSettings;
  iterations?: number;
  /** Adam step size at the start (decays linearly to a tenth). Default 0.05. */
  learningRate?: number;
  /** Fitted scores are rounded to this step (hand-editable numbers). Default 0.1. */
  step?: number;
  /** A symbol is written as an override when its fitted score differs this much. Default 0.1. */
  minChange?: number;
}

interface SymbolStat {
  /** Training messages (either class) where the symbol fired. */
  phishing: number;
  ham: number;
  /** Its declared score (undefined when its analyzer declared none: prior 0). */
  declared: number | undefined;
  fitted: number;
}

export interface FitResult {
  bias: number;
  /** Overrides to write: symbols whose fitted score differs from the declared one by ≥ minChange. */
  symbols: Record<string, number>;
  /** Every symbol seen in training → its fitted score (rounded). */
  fitted: Record<string, number>;
  stats: Record<string, SymbolStat>;
  groups: Record<string, GroupDef>;
  types: Record<string, number>;
  lambda: number;
  allowNegative: boolean;
  iterations: number;
  /** Objective at the end (balanced mean logistic loss + penalty / N). */
  loss: number;
  train: {
    messages: number;
    /** source → its training messages per class. */
    sources: Record<string, { phishing: number; ham: number }>;
    tp: number;
    fp: number;
    fn: number;
    tn: number;
  };
}

const EPS = 1e-12;

interface Row {
  y: number;
  /** Loss weight (Σ over rows = number of rows). */
  c: number;
  ev: ReturnType<typeof evidenceOf>;
  cols: number[];
  caps: (GroupDef | undefined)[];
}

const sourceOfDefault = (o: MessageOutcome): string =>
  (o as MessageOutcome & { source?: string }).source ?? 'all';

/** The score table of a fit (what a weights file written from it gives the scorer). */
export function fitTable(r: Pick<FitResult, 'bias' | 'symbols' | 'groups'>): ScoreTable {
  return { bias: r.bias, overrides: r.symbols, groups: r.groups };
}

export function fitWeights(outcomes: MessageOutcome[], o: FitOptions = {}): FitResult {
  const settings = o.settings ?? DEFAULT_RESCORE;
  const sourceOf = o.sourceOf ?? sourceOfDefault;
  const lambda = o.l2 ?? 300;
  const step = o.step ?? 0.1;
  const minChange = o.minChange ?? 0.1;
  const groups = o.groups ?? {};
  const allowNegative = o.allowNegative ?? false;
  const train = outcomes.filter(
    (x) => !x.parse_failed && x.error === undefined && (o.train ?? (() => true))(x),
  );

  // balance: the two classes weigh the same, and within a class each source weighs the same
  // (a source with both classes counts once in each); so within a source its classes weigh the
  // same, and two phishing sources beside one ham source do not teach that mail is mostly phishing
  const per = new Map<string, { phishing: number; ham: number }>();
  for (const x of train) {
    const s = sourceOf(x);
    const k = per.get(s) ?? { phishing: 0, ham: 0 };
    k[x.label]++;
    per.set(s, k);
  }
  const n = train.length;
  const sourcesWith = { phishing: 0, ham: 0 };
  for (const k of per.values()) {
    if (k.phishing) sourcesWith.phishing++;
    if (k.ham) sourcesWith.ham++;
  }
  const classes = (sourcesWith.phishing ? 1 : 0) + (sourcesWith.ham ? 1 : 0);
  const weightOf = (s: string, label: Label): number =>
    n / (classes * sourcesWith[label] * per.get(s)![label]);

  // symbols and their priors (the declared scores)
  const names: string[] = [];
  const col = new Map<string, number>();
  const declared: (number | undefined)[] = [];
  const stats: Record<string, SymbolStat> = {};
  const table: ScoreTable & { overrides: Record<string, number> } = {
    bias: o.bias ?? -3,
    overrides: {},
    groups,
  };
  // one row per distinct (class, evidence): messages that raised the same symbols share a row
  const byKey = new Map<string, Row>();
  for (const x of train) {
    const ev: Row['ev'] = [];
    const cols: number[] = [];
    const caps: (GroupDef | undefined)[] = [];
    for (const e of evidenceOf(x)) {
      if (ev.some((y) => y.key === e.key)) continue;
      let i = col.get(e.key);
      if (i === undefined) {
        i = names.length;
        col.set(e.key, i);
        names.push(e.key);
        declared.push(e.score);
        stats[e.key] = { phishing: 0, ham: 0, declared: e.score, fitted: e.score ?? 0 };
      }
      stats[e.key]![x.label]++;
      ev.push(e);
      cols.push(i);
      caps.push(e.group ? groupCap(table, e.group) : undefined);
    }
    const y = x.label === 'phishing' ? 1 : 0;
    const c = weightOf(sourceOf(x), x.label);
    const key = `${y}|${ev.map((e) => `${e.key}\u0000${e.score}\u0000${e.group ?? ''}`).join('\u0001')}`;
    const r = byKey.get(key);
    if (r) r.c += c;
    else byKey.set(key, { y, c, ev, cols, caps });
  }
  const rows = [...byKey.values()];

  const prior = Float64Array.from(declared, (d) => d ?? 0);
  // the bias has a prior too: the weights file's
  const bias0 = table.bias;
  const w = Float64Array.from(prior);
  const lo = Float64Array.from(prior, (p) => (p >= 0 && !allowNegative ? 0 : -Infinity));
  const hi = Float64Array.from(prior, (p) => (p < 0 ? 0 : Infinity));
  const setTable = () => {
    for (const [i, k] of names.entries()) table.overrides[k] = w[i]!;
  };
  setTable();

  const iters = o.iterations ?? 300;
  const lr0 = o.learningRate ?? 0.05;
  const m = new Float64Array(w.length + 1);
  const v = new Float64Array(w.length + 1);
  const g = new Float64Array(w.length + 1);
  const b1 = 0.9;
  const b2 = 0.999;
  let loss = 0;
  const bound = settings.maxLogOdds;
  const evaluate = (withGrad: boolean): number => {
    let l = 0;
    if (withGrad) g.fill(0);
    for (const r of rows) {
      const c = combine(r.ev, table);
      const zRaw = c.logOdds;
      const z = Math.max(-bound, Math.min(bound, zRaw));
      const p = sigmoid(z);
      l -= r.c * (r.y ? Math.log(Math.max(p, EPS)) : Math.log(Math.max(1 - p, EPS)));
      if (!withGrad) continue;
      const e = r.c * (p - r.y);
      // past the bound the score does not move (one-sided at it)
      if (zRaw > bound + EPS || zRaw < -bound - EPS) continue;
      if ((zRaw >= bound - EPS && e < 0) || (zRaw <= -bound + EPS && e > 0)) continue;
      g[w.length]! += e;
      for (const [j, i] of r.cols.entries()) {
        const cap = r.caps[j];
        if (cap) {
          const sum = c.groups[r.ev[j]!.group!]?.sum ?? 0;
          if (sum > cap.max + EPS || sum < cap.min - EPS) continue;
          if ((sum >= cap.max - EPS && e < 0) || (sum <= cap.min + EPS && e > 0)) continue;
        }
        g[i]! += e;
      }
    }
    let pen = (table.bias - bias0) ** 2;
    for (let i = 0; i < w.length; i++) pen += (w[i]! - prior[i]!) ** 2;
    return (l + lambda * pen) / Math.max(1, n);
  };
  if (rows.length > 0) {
    for (let t = 1; t <= iters; t++) {
      evaluate(true);
      const lr = lr0 * (1 - (0.9 * (t - 1)) / iters);
      for (let i = 0; i <= w.length; i++) {
        const isBias = i === w.length;
        const gi = (g[i]! + 2 * lambda * (isBias ? table.bias - bias0 : w[i]! - prior[i]!)) / n;
        m[i] = b1 * m[i]! + (1 - b1) * gi;
        v[i] = b2 * v[i]! + (1 - b2) * gi * gi;
        const d = (lr * (m[i]! / (1 - b1 ** t))) / (Math.sqrt(v[i]! / (1 - b2 ** t)) + 1e-8);
        if (isBias) {
          if (!o.fixedBias) table.bias -= d;
        } else w[i] = Math.min(hi[i]!, Math.max(lo[i]!, w[i]! - d));
      }
      setTable();
    }
    loss = evaluate(false);
  }

  const round = (x: number) => Number((Math.round(x / step) * step).toFixed(2));
  const fitted: Record<string, number> = {};
  const symbols: Record<string, number> = {};
  for (const [i, k] of names.entries()) {
    const f = Math.min(hi[i]!, Math.max(lo[i]!, round(w[i]!)));
    fitted[k] = f;
    stats[k]!.fitted = f;
    if (Math.abs(f - (declared[i] ?? 0)) >= minChange - 1e-9) symbols[k] = f;
  }
  const bias = Number(table.bias.toFixed(2));
  const result: FitResult = {
    bias,
    symbols,
    fitted,
    stats,
    groups,
    types: o.types ?? {},
    lambda,
    allowNegative,
    iterations: iters,
    loss,
    train: { messages: n, sources: Object.fromEntries(per), tp: 0, fp: 0, fn: 0, tn: 0 },
  };
  for (const x of rescore(train, fitTable(result), settings)) {
    if (x.label === 'phishing') x.predicted ? result.train.tp++ : result.train.fn++;
    else x.predicted ? result.train.fp++ : result.train.tn++;
  }
  return result;
}

/**
 * The weights file text (the scorer's schema: bias, symbols, groups, types), each symbol line with
 * its declared score and training counts as a comment.
 */
export function weightsYaml(r: FitResult, header: string): string {
  const sorted = Object.fromEntries(
    Object.entries(r.symbols).sort(([a], [b]) => a.localeCompare(b)),
  );
  const groups = Object.fromEntries(
    Object.entries(r.groups).map(([k, g]) => [k, { max: g.max, min: g.min }]),
  );
  const body = stringify(
    { bias: r.bias, symbols: sorted, groups, types: r.types },
    { lineWidth: 0 },
  );
  let section = '';
  const lines = body.split('\n').map((l) => {
    const top = /^([a-z_]+):/.exec(l);
    if (top) section = top[1]!;
    const m = section === 'symbols' ? /^ {2}("?)([^"]+)\1: /.exec(l) : null;
    const s = m ? r.stats[m[2]!] : undefined;
    return s
      ? `${l} # declared ${s.declared ?? 'none'}; fired on ${s.phishing} phishing / ${s.ham} ham`
      : l;
  });
  return `${header
    .split('\n')
    .map((l) => `# ${l}`.trimEnd())
    .join('\n')}\n${lines.join('\n')}`;
}
