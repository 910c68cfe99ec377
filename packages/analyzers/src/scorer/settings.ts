import { z } from 'zod';
import { cacheTtlSeconds, operatorFile, phishingScoreThreshold } from '../shared/settings.ts';

export const ScorerSettings = z.object({
  /** YAML of symbol weights (log-odds). Relative paths: from the installation root. */
  weights_file: operatorFile('scorer/weights.yaml'),
  /** Stages of analysis_context whose analyzers are read; empty = every completed stage. */
  stages: z.array(z.string()).default([]),
  /** p at or above which the scorer says phishing. */
  phishing_score_threshold: phishingScoreThreshold,
  /** Cap on |Σ weights| so a pile of evidence cannot overflow into certainty. */
  max_log_odds: z.number().positive().default(12),
  /** How often (ms) the weights file's modification time is checked. */
  reload_check_ms: z.number().int().nonnegative().default(1000),
  cache_ttl_seconds: cacheTtlSeconds,
});
export type ScorerSettings = z.output<typeof ScorerSettings>;
