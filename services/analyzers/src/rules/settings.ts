import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { DEFAULT_LEXICON_DIR } from '../content/lexicons.ts';

export const DEFAULT_RULE_FILE = fileURLToPath(
  new URL('../../../../config/defaults/rules/default.yaml', import.meta.url),
);

export const RulesSettings = z.object({
  /** YAML file of CEL rules; reloaded when it changes. */
  rule_file: z.string().default(DEFAULT_RULE_FILE),
  phishing_score_threshold: z.number().min(0).max(1).default(0.5),
  base_probability: z.number().min(0.001).max(0.999).default(0.1),
  /** How often (ms) the rule file's modification time is checked. */
  reload_check_ms: z.number().int().nonnegative().default(1000),
  lexicon_dir: z.string().default(DEFAULT_LEXICON_DIR),
  cache_ttl_seconds: z.number().int().nonnegative().default(0),
});
export type RulesSettings = z.output<typeof RulesSettings>;
