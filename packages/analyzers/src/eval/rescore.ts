import { combine, type Evidence, type ScoreTable } from '../scorer/combine.ts';
import type { ScorerWeights } from '../scorer/weights.ts';
import { sigmoid } from '../shared/score.ts';
import type { MessageOutcome } from './eval-message.ts';

/**
 * Offline re-scoring of eval outcomes: every outcome holds the symbols its message raised, with
 * their declared scores and groups, so a message's verdict under other weights is `combine()` of
 * that evidence with another table, as the scorer computes it, without running the analyzers again.
 */

/** The scorer settings a verdict depends on. */
export interface RescoreSettings {
  /** p at or above which the scorer says phishing (scorer `phishing_score_threshold`). */
  threshold: number;
  /** Bound on |log-odds| (scorer `max_log_odds`). */
  maxLogOdds: number;
}

export const DEFAULT_RESCORE: RescoreSettings = { threshold: 0.5, maxLogOdds: 12 };

/** Declared scores outside ±this are not believed by the scorer (its MAX_DECLARED). */
const MAX_DECLARED = 20;

/** The evidence the scorer saw for one message (its own `scorer.*` symbols excluded). */
export function evidenceOf(o: Pick<MessageOutcome, 'symbols' | 'scores' | 'groups'>): Evidence[] {
  const ev: Evidence[] = [];
  for (const key of o.symbols) {
    if (key.startsWith('scorer.')) continue;
    const d = o.scores[key];
    ev.push({
      key,
      score: d !== undefined && Math.abs(d) <= MAX_DECLARED ? d : undefined,
      group: o.groups[key],
    });
  }
  return ev;
}

/** The table of a weights file (bias, symbol overrides, group caps). */
export function tableOf(w: Pick<ScorerWeights, 'bias' | 'symbols' | 'groups'>): ScoreTable {
  return { bias: w.bias, overrides: w.symbols, groups: w.groups };
}

/**
 * The scorer's bounded log-odds for the evidence, snapped to 1e-9: scores such as 0.45 + 0.55 + … can
 * sum to exactly −bias, and then the order of the additions (not the evidence) would decide the
 * verdict; snapped, such a message sits at p = 0.5 whatever the order.
 */
function logOddsOf(ev: Iterable<Evidence>, t: ScoreTable, s: RescoreSettings): number {
  const z = Math.round(combine(ev, t).logOdds * 1e9) / 1e9;
  return Math.max(-s.maxLogOdds, Math.min(s.maxLogOdds, z));
}

/**
 * The verdict under table `t`. A message that failed to parse or whose workflow failed stays "not
 * phishing", as the eval counts it.
 */
export function predicts(o: MessageOutcome, t: ScoreTable, s: RescoreSettings): boolean {
  if (o.error !== undefined || o.parse_failed) return false;
  return sigmoid(logOddsOf(evidenceOf(o), t, s)) >= s.threshold;
}

/** The outcomes with `predicted` replaced by the verdict under table `t`. */
export function rescore<T extends MessageOutcome>(
  outs: readonly T[],
  t: ScoreTable,
  s: RescoreSettings,
): T[] {
  return outs.map((o) => ({ ...o, predicted: predicts(o, t, s) }));
}
