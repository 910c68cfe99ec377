import type {
  AggregationMethod,
  AnalyzerAnswer,
  Indicator,
  RecommendedAction,
  StageAggregate,
  ThreatLevel,
  VerdictThresholds,
} from '@trawl/contracts';

export const DEFAULT_THRESHOLDS: VerdictThresholds = Object.freeze({
  low: 0.3,
  medium: 0.5,
  high: 0.7,
  critical: 0.9,
});

/** One successful analyzer answer entering a stage's aggregate. */
export interface AggregateInput {
  answer: AnalyzerAnswer;
  weight: number;
  /** Analyzer id, named in the summary. */
  id?: string;
}

function clamp01(x: number): number {
  if (!Number.isFinite(x)) return 0;
  return Math.min(1, Math.max(0, x));
}

/** The phishing probability of an answer: `confidence` when phishing, else `1 - confidence`. */
export function probabilityOf(r: { is_phishing: boolean; confidence: number }): number {
  const c = clamp01(r.confidence);
  return r.is_phishing ? c : 1 - c;
}

/** Threat level and recommended action for a phishing probability. */
export function verdictFor(
  p: number,
  thresholds: VerdictThresholds = DEFAULT_THRESHOLDS,
): { threat_level: ThreatLevel; recommended_action: RecommendedAction } {
  if (p < thresholds.low) return { threat_level: 'none', recommended_action: 'allow' };
  if (p < thresholds.medium) return { threat_level: 'low', recommended_action: 'flag' };
  if (p < thresholds.high) return { threat_level: 'medium', recommended_action: 'review' };
  if (p < thresholds.critical) return { threat_level: 'high', recommended_action: 'quarantine' };
  return { threat_level: 'critical', recommended_action: 'quarantine' };
}

interface Scored {
  id: string;
  p: number;
  w: number;
  answer: AnalyzerAnswer;
}

/** Union of indicators, deduplicated by (type, value) keeping the highest confidence; sorted by it. */
function mergeIndicators(items: readonly AggregateInput[]): Indicator[] {
  const byKey = new Map<string, Indicator>();
  for (const it of items) {
    for (const ind of it.answer.indicators) {
      const key = `${ind.type}\u0000${ind.value}`;
      const prev = byKey.get(key);
      if (prev === undefined || ind.confidence > prev.confidence) byKey.set(key, ind);
    }
  }
  const out = [...byKey.values()];
  out.sort((a, b) => b.confidence - a.confidence);
  return out;
}

function pct(x: number): string {
  return `${Math.round(x * 100)}%`;
}

function summarize(
  isPhishing: boolean,
  p: number,
  threat: ThreatLevel,
  drivers: readonly Scored[],
  indicators: readonly Indicator[],
): string {
  const verdict = isPhishing ? 'Phishing' : 'Not phishing';
  let s = `${verdict} (threat ${threat}, phishing probability ${pct(p)}).`;
  if (drivers.length > 0) {
    s += ` Driven by ${drivers
      .slice(0, 3)
      .map((d) => `${d.id} (${pct(d.p)})`)
      .join(', ')}.`;
  }
  if (indicators.length > 0) {
    s += ` Top indicators: ${indicators
      .slice(0, 3)
      .map((i) => `${i.type}: ${i.value.length > 120 ? `${i.value.slice(0, 117)}...` : i.value}`)
      .join('; ')}.`;
  }
  return s;
}

/**
 * The aggregate of a stage's successful analyzer answers (decisions.md, "Workflow semantics").
 * Weights below 0 count as 0; when every weight is 0 each answer counts 1, so nothing divides by 0.
 */
export function aggregate(
  method: AggregationMethod,
  results: readonly AggregateInput[],
  threshold: number,
  thresholds: VerdictThresholds = DEFAULT_THRESHOLDS,
): StageAggregate {
  const scored: Scored[] = results.map((r, i) => ({
    id: r.id ?? `analyzer#${i + 1}`,
    p: probabilityOf(r.answer),
    w: Number.isFinite(r.weight) && r.weight > 0 ? r.weight : 0,
    answer: r.answer,
  }));
  const totalW = scored.reduce((s, x) => s + x.w, 0);
  const counted = totalW > 0 ? scored.filter((x) => x.w > 0) : scored.map((x) => ({ ...x, w: 1 }));

  let p = 0;
  let drivers: Scored[] = [];
  if (counted.length > 0) {
    switch (method) {
      case 'weighted_average': {
        const sw = counted.reduce((s, x) => s + x.w, 0);
        p = counted.reduce((s, x) => s + x.w * x.p, 0) / sw;
        break;
      }
      case 'max_confidence': {
        let best = counted[0]!;
        for (const x of counted) {
          const c = clamp01(x.answer.confidence);
          const bc = clamp01(best.answer.confidence);
          if (c > bc || (c === bc && x.p > best.p)) best = x;
        }
        p = best.p;
        drivers = [best];
        break;
      }
      case 'majority_vote': {
        let wPhish = 0;
        let wHam = 0;
        for (const x of counted) {
          if (x.answer.is_phishing) wPhish += x.w;
          else wHam += x.w;
        }
        const phishWins = wPhish >= wHam;
        const side = counted.filter((x) => x.answer.is_phishing === phishWins);
        p = side.reduce((s, x) => s + x.p, 0) / side.length;
        drivers = side;
        break;
      }
    }
  }
  p = clamp01(p);
  const isPhishing = p >= threshold;
  if (method !== 'max_confidence') {
    // Most influential first: the largest weighted pull towards the verdict.
    const pool = method === 'majority_vote' ? drivers : counted;
    drivers = [...pool].sort((a, b) =>
      isPhishing ? b.w * b.p - a.w * a.p : b.w * (1 - b.p) - a.w * (1 - a.p),
    );
  }
  const indicators = mergeIndicators(results);
  const v = verdictFor(p, thresholds);
  return {
    is_phishing: isPhishing,
    confidence: isPhishing ? p : 1 - p,
    probability: p,
    threat_level: v.threat_level,
    recommended_action: v.recommended_action,
    indicators,
    summary:
      counted.length === 0
        ? 'No analyzer result.'
        : summarize(isPhishing, p, v.threat_level, drivers, indicators),
  };
}
