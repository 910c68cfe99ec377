import {
  type AnalyzerAnswerInput,
  type Email,
  type Indicator,
  safeParseStageContext,
} from '@trawl/contracts';
import { sigmoid } from '../rules/score.ts';
import type { ScorerSettings } from './settings.ts';
import { type ScorerWeights, weightsFor } from './weights.ts';

/** One piece of evidence the scorer counted. */
export interface Contribution {
  symbol: string;
  weight: number;
}

export interface EnsembleScore {
  /** bias + Σ weights, capped at ±max_log_odds. */
  logOdds: number;
  probability: number;
  contributions: Contribution[];
  /** Every symbol seen (with or without a weight), `<analyzer>.<symbol>`. */
  symbols: string[];
  indicators: Indicator[];
}

function symbolsOf(details: Record<string, unknown> | undefined): string[] | undefined {
  const s = details?.symbols;
  if (!Array.isArray(s)) return undefined;
  return s.filter((x): x is string => typeof x === 'string');
}

/** The symbols an ensemble score counted so far. */
interface Tally {
  seen: Set<string>;
  contributions: Contribution[];
  sum: number;
}

/** Counts `symbol` once, with its weight when it has one. */
function count(t: Tally, symbol: string, weight: number | undefined): void {
  if (t.seen.has(symbol)) return;
  t.seen.add(symbol);
  if (weight === undefined || weight === 0) return;
  t.sum += weight;
  t.contributions.push({ symbol, weight });
}

/**
 * Combines the evidence of earlier stages in log-odds space (Rspamd-style symbol scores): each
 * `<analyzer>.<symbol>` an analyzer reported adds its weight once; analyzers without symbols count
 * their distinct indicator types through `types`. p = sigmoid(bias + Σ weights).
 */
export function ensembleScore(
  ctx: Record<string, unknown> | undefined,
  w: ScorerWeights,
  opts: { stages: string[]; maxLogOdds: number; self?: string },
): EnsembleScore {
  const t: Tally = { seen: new Set(), contributions: [], sum: 0 };
  const indicators = new Map<string, Indicator>();
  for (const [stage, raw] of Object.entries(ctx ?? {})) {
    if (opts.stages.length && !opts.stages.includes(stage)) continue;
    const parsed = safeParseStageContext(raw);
    if (!parsed.success) continue; // not a stage of this engine's shape: nothing to count
    const sc = parsed.data;
    for (const [id, r] of Object.entries(sc.analyzers)) {
      if (r.status !== 'success' || id === opts.self) continue;
      const symbols = symbolsOf(r.analyzer_details);
      if (symbols) {
        for (const s of symbols) count(t, `${id}.${s}`, w.symbols[`${id}.${s}`]);
      } else {
        for (const type of new Set(r.indicators.map((i) => i.type)))
          count(t, `${id}.${type}`, w.symbols[`${id}.${type}`] ?? w.types[type]);
      }
      for (const i of r.indicators) {
        const key = `${i.type}\u0000${i.value}`;
        const prev = indicators.get(key);
        if (!prev || prev.confidence < i.confidence) indicators.set(key, i);
      }
    }
  }
  const logOdds = Math.max(-opts.maxLogOdds, Math.min(opts.maxLogOdds, w.bias + t.sum));
  t.contributions.sort((a, b) => Math.abs(b.weight) - Math.abs(a.weight));
  return {
    logOdds,
    probability: sigmoid(logOdds),
    contributions: t.contributions,
    symbols: [...t.seen],
    indicators: [...indicators.values()].sort((a, b) => b.confidence - a.confidence).slice(0, 50),
  };
}

const r3 = (n: number) => Math.round(n * 1000) / 1000;

export function analyzeScore(
  email: Email,
  s: ScorerSettings,
  self = 'scorer',
): AnalyzerAnswerInput {
  const { weights, error } = weightsFor(s.weights_file, s.reload_check_ms);
  const e = ensembleScore(email.analysis_context, weights, {
    stages: s.stages,
    maxLogOdds: s.max_log_odds,
    self,
  });
  const p = e.probability;
  const isPhishing = p >= s.phishing_score_threshold;
  const top = e.contributions
    .filter((c) => c.weight > 0)
    .slice(0, 4)
    .map((c) => `${c.symbol} +${c.weight}`)
    .join(', ');
  return {
    is_phishing: isPhishing,
    confidence: r3(isPhishing ? p : 1 - p),
    summary: `scorer: ${isPhishing ? 'phishing' : 'not phishing'} (p=${r3(p)})${top ? `: ${top}` : ''}`,
    indicators: e.indicators,
    analyzer_details: {
      probability: r3(p),
      log_odds: r3(e.logOdds),
      bias: weights.bias,
      contributions: e.contributions.slice(0, 30),
      ...(error ? { weights_file_error: error } : {}),
    },
  };
}
