import type {
  AggregationMethod,
  AnalyzerAnswer,
  Indicator,
  RecommendedAction,
  StageAggregate,
  ThreatLevel,
  VerdictThresholds,
} from '@trawl/contracts';

/** The default verdict thresholds. */
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

function byConfidenceDesc(a: Indicator, b: Indicator): number {
  return b.confidence - a.confidence;
}

/** Up to this many indicators in all, duplicates are found by a scan instead of a Map. */
const SCAN_LIMIT = 32;

/** Union of indicators, deduplicated by (type, value) keeping the highest confidence; sorted by it. */
function mergeIndicators(items: readonly AggregateInput[]): Indicator[] {
  let total = 0;
  for (const it of items) total += it.answer.indicators.length;
  // first occurrence of each (type, value) in input order; a more confident duplicate takes its place
  const out: Indicator[] = [];
  if (total <= SCAN_LIMIT) {
    for (const it of items) {
      for (const ind of it.answer.indicators) {
        let j = 0;
        while (j < out.length && (out[j]!.type !== ind.type || out[j]!.value !== ind.value)) j++;
        if (j === out.length) out.push(ind);
        else if (ind.confidence > out[j]!.confidence) out[j] = ind;
      }
    }
  } else {
    const at = new Map<string, number>();
    for (const it of items) {
      for (const ind of it.answer.indicators) {
        const key = `${ind.type}\u0000${ind.value}`;
        const j = at.get(key);
        if (j === undefined) {
          at.set(key, out.length);
          out.push(ind);
        } else if (ind.confidence > out[j]!.confidence) {
          out[j] = ind;
        }
      }
    }
  }
  if (out.length > 1) out.sort(byConfidenceDesc);
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
    s += ' Driven by ';
    for (let i = 0; i < drivers.length && i < 3; i++) {
      const d = drivers[i]!;
      s += `${i > 0 ? ', ' : ''}${d.id} (${pct(d.p)})`;
    }
    s += '.';
  }
  if (indicators.length > 0) {
    s += ' Top indicators: ';
    for (let i = 0; i < indicators.length && i < 3; i++) {
      const ind = indicators[i]!;
      const v = ind.value.length > 120 ? `${ind.value.slice(0, 117)}...` : ind.value;
      s += `${i > 0 ? '; ' : ''}${ind.type}: ${v}`;
    }
    s += '.';
  }
  return s;
}

/** Most influential first: the largest weighted pull towards a phishing verdict. */
function byPullToPhishing(a: Scored, b: Scored): number {
  return b.w * b.p - a.w * a.p;
}

/** Most influential first: the largest weighted pull towards a not-phishing verdict. */
function byPullToHam(a: Scored, b: Scored): number {
  return b.w * (1 - b.p) - a.w * (1 - a.p);
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
  const scored: Scored[] = [];
  let totalW = 0;
  for (let i = 0; i < results.length; i++) {
    const r = results[i]!;
    const w = Number.isFinite(r.weight) && r.weight > 0 ? r.weight : 0;
    scored.push({
      id: r.id ?? `analyzer#${i + 1}`,
      p: probabilityOf(r.answer),
      w,
      answer: r.answer,
    });
    totalW += w;
  }
  const counted: Scored[] = [];
  for (const x of scored) {
    if (totalW <= 0) counted.push({ id: x.id, p: x.p, w: 1, answer: x.answer });
    else if (x.w > 0) counted.push(x);
  }

  let p = 0;
  let drivers: Scored[] = [];
  if (counted.length > 0) {
    switch (method) {
      case 'weighted_average': {
        let sw = 0;
        for (const x of counted) sw += x.w;
        let swp = 0;
        for (const x of counted) swp += x.w * x.p;
        p = swp / sw;
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
        const side: Scored[] = [];
        for (const x of counted) if (x.answer.is_phishing === phishWins) side.push(x);
        let sp = 0;
        for (const x of side) sp += x.p;
        p = sp / side.length;
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
    drivers = pool.slice().sort(isPhishing ? byPullToPhishing : byPullToHam);
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
