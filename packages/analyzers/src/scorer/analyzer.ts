import {
  type AnalyzerAnswerInput,
  type Email,
  type Indicator,
  safeParseStageContext,
} from '@trawl/contracts';
import { sigmoid } from '../shared/score.ts';
import { type Contribution, combine, type Evidence, type GroupTally } from './combine.ts';
import type { ScorerSettings } from './settings.ts';
import { type ScorerWeights, weightsFor } from './weights.ts';

export interface EnsembleScore {
  /** bias + Σ counted weights (groups capped), bounded at ±max_log_odds. */
  logOdds: number;
  probability: number;
  contributions: Contribution[];
  /** Each group that fired: Σ of its symbols and what it counted after its cap. */
  groups: Record<string, GroupTally>;
  /** Every symbol seen (with or without a weight), `<analyzer>.<symbol>`. */
  symbols: string[];
  indicators: Indicator[];
}

function symbolsOf(details: Record<string, unknown> | undefined): string[] | undefined {
  const s = details?.symbols;
  if (!Array.isArray(s)) return undefined;
  return s.filter((x): x is string => typeof x === 'string');
}

/** A `{ name: number }` or `{ name: string }` member of analyzer_details, else undefined. */
function recordOf<T extends 'number' | 'string'>(
  details: Record<string, unknown> | undefined,
  key: string,
  type: T,
): Record<string, T extends 'number' ? number : string> | undefined {
  const r = details?.[key];
  if (!r || typeof r !== 'object' || Array.isArray(r)) return undefined;
  for (const v of Object.values(r)) if (typeof v !== type) return undefined;
  return r as Record<string, T extends 'number' ? number : string>;
}

/** Scores outside this range from an analyzer are not believed (an override still applies). */
const MAX_DECLARED = 20;

/**
 * Combines the evidence of earlier stages in log-odds space (Rspamd-style symbol scores): each
 * `<analyzer>.<symbol>` an analyzer reported counts once, with the operator's override from the
 * weights file or else the score the analyzer declared for it (`analyzer_details.scores`); symbols
 * of one group (`analyzer_details.groups`) count together up to the group's cap. Analyzers without
 * symbols count their distinct indicator types through `types`. p = sigmoid(bias + Σ).
 */
export function ensembleScore(
  ctx: Record<string, unknown> | undefined,
  w: ScorerWeights,
  opts: { stages: string[]; maxLogOdds: number; self?: string },
): EnsembleScore {
  const evidence: Evidence[] = [];
  const indicators = new Map<string, Indicator>();
  for (const [stage, raw] of Object.entries(ctx ?? {})) {
    if (opts.stages.length && !opts.stages.includes(stage)) continue;
    const parsed = safeParseStageContext(raw);
    if (!parsed.success) continue; // not a stage of this engine's shape: nothing to count
    const sc = parsed.data;
    for (const [id, r] of Object.entries(sc.analyzers)) {
      if (r.status !== 'success' || id === opts.self) continue;
      const details = r.analyzer_details;
      const symbols = symbolsOf(details);
      if (symbols) {
        const scores = recordOf(details, 'scores', 'number');
        const groups = recordOf(details, 'groups', 'string');
        for (const sym of symbols) {
          const declared = scores?.[sym];
          evidence.push({
            key: `${id}.${sym}`,
            score:
              declared !== undefined && Math.abs(declared) <= MAX_DECLARED ? declared : undefined,
            group: groups?.[sym],
          });
        }
      } else {
        for (const type of new Set(r.indicators.map((i) => i.type)))
          evidence.push({ key: `${id}.${type}`, score: w.types[type] });
      }
      for (const i of r.indicators) {
        const key = `${i.type}\u0000${i.value}`;
        const prev = indicators.get(key);
        if (!prev || prev.confidence < i.confidence) indicators.set(key, i);
      }
    }
  }
  const c = combine(evidence, { bias: w.bias, overrides: w.symbols, groups: w.groups });
  const logOdds = Math.max(-opts.maxLogOdds, Math.min(opts.maxLogOdds, c.logOdds));
  c.contributions.sort((a, b) => Math.abs(b.weight) - Math.abs(a.weight));
  return {
    logOdds,
    probability: sigmoid(logOdds),
    contributions: c.contributions,
    groups: c.groups,
    symbols: evidence.map((e) => e.key),
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
    .filter((c) => c.weight > 0 && (!c.group || (e.groups[c.group]?.counted ?? 0) > 0))
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
      groups: e.groups,
      ...(error ? { weights_file_error: error } : {}),
    },
  };
}
