import { isAbsolute, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { INSTALL_ROOT } from '../shared/install-root.ts';

const DEFAULT_WEIGHTS_FILE = fileURLToPath(
  new URL('../../../../config/defaults/scorer/weights.yaml', import.meta.url),
);

export const ScorerSettings = z.object({
  /** YAML of symbol weights (log-odds). Relative paths: from the installation root. */
  weights_file: z
    .string()
    .default(DEFAULT_WEIGHTS_FILE)
    .transform((p) => (isAbsolute(p) ? p : resolve(INSTALL_ROOT, p))),
  /** Stages of analysis_context whose analyzers are read; empty = every completed stage. */
  stages: z.array(z.string()).default([]),
  /** p at or above which the scorer says phishing. */
  phishing_score_threshold: z.number().min(0).max(1).default(0.5),
  /** Cap on |Σ weights| so a pile of evidence cannot overflow into certainty. */
  max_log_odds: z.number().positive().default(12),
  /** How often (ms) the weights file's modification time is checked. */
  reload_check_ms: z.number().int().nonnegative().default(1000),
  cache_ttl_seconds: z.number().int().nonnegative().default(0),
});
export type ScorerSettings = z.output<typeof ScorerSettings>;
