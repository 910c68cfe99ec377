import type { AnalyzerAnswerInput } from '@trawl/contracts';

/** One thing an analyzer found: an indicator plus its weight of evidence (log-odds). */
export interface Finding {
  type: string;
  value: string;
  /** Log-odds this finding adds to the analyzer's phishing probability. */
  weight: number;
  /**
   * Stable machine name of what was found (default: type), listed in analyzer_details.symbols for
   * the scorer. A finding with weight 0 is a symbol only (no indicator, no effect on this analyzer).
   */
  symbol?: string;
}

/** A finding with its symbol, the form every technique writes. */
export function finding(type: string, value: string, symbol: string, weight: number): Finding {
  return { type, value, symbol, weight };
}

/** A technique's answer of one finding. */
export function one(type: string, value: string, symbol: string, weight: number): Finding[] {
  return [finding(type, value, symbol, weight)];
}

export function sigmoid(x: number): number {
  return 1 / (1 + Math.exp(-x));
}

function logit(p: number): number {
  const q = Math.min(Math.max(p, 1e-6), 1 - 1e-6);
  return Math.log(q / (1 - q));
}

function round(n: number): number {
  return Math.round(n * 1000) / 1000;
}

export interface AnswerOptions {
  /** Probability when nothing is found. */
  base: number;
  /** p at or above which the analyzer says phishing. */
  threshold: number;
  /** Analyzer name for the summary. */
  name: string;
  details?: Record<string, unknown>;
  /** Cap on the summed log-odds, keeps one noisy analyzer from dominating. */
  maxLogOdds?: number;
  /** Symbol → group (shared/symbols.ts GROUPS), reported for the scorer's group caps. */
  groups?: Readonly<Record<string, { group?: string } | undefined>>;
}

/**
 * Turns findings into an AnalyzerAnswer: p = sigmoid(logit(base) + Σ weight); each indicator's
 * confidence is its own p = sigmoid(logit(base) + weight).
 */
export function answerFrom(findings: Finding[], o: AnswerOptions): AnalyzerAnswerInput {
  const b = logit(o.base);
  let sum = 0;
  // the declared score of each symbol reported (its largest when it fired twice) and its group:
  // the scorer combines these, so an analyzer's weights setting is what the verdict uses
  const scores: Record<string, number> = {};
  const groups: Record<string, string> = {};
  for (const f of findings) {
    sum += f.weight;
    const sym = f.symbol ?? f.type;
    const prev = scores[sym];
    if (prev === undefined || Math.abs(f.weight) > Math.abs(prev)) scores[sym] = round(f.weight);
    const g = o.groups?.[sym]?.group;
    if (g) groups[sym] = g;
  }
  if (o.maxLogOdds !== undefined) sum = Math.min(sum, o.maxLogOdds);
  const p = sigmoid(b + sum);
  const isPhishing = p >= o.threshold;
  const seen = new Map<string, { type: string; value: string; confidence: number }>();
  for (const f of findings) {
    if (f.weight <= 0) continue;
    const key = `${f.type}\u0000${f.value}`;
    const c = round(sigmoid(b + f.weight));
    const prev = seen.get(key);
    if (!prev || prev.confidence < c)
      seen.set(key, { type: f.type, value: f.value.slice(0, 500), confidence: c });
  }
  const indicators = [...seen.values()].sort((x, y) => y.confidence - x.confidence).slice(0, 50);
  const top = indicators
    .slice(0, 3)
    .map((i) => i.value)
    .join('; ');
  return {
    is_phishing: isPhishing,
    confidence: round(isPhishing ? p : 1 - p),
    summary: indicators.length
      ? `${o.name}: ${isPhishing ? 'phishing' : 'not phishing'} (p=${round(p)}): ${top}`
      : `${o.name}: nothing suspicious found`,
    indicators,
    analyzer_details: {
      probability: round(p),
      score: round(sum),
      symbols: Object.keys(scores),
      scores,
      ...(Object.keys(groups).length ? { groups } : {}),
      ...(o.details ?? {}),
    },
  };
}

/** A technique's answer of one finding at its symbol's weight in `w` (the weights setting). */
export function oneOf<S extends string>(
  w: Readonly<Record<S, number>>,
  symbol: S,
  type: string,
  value: string,
): Finding[] {
  return one(type, value, symbol, w[symbol]);
}
