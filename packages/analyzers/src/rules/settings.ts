import { isAbsolute, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { INSTALL_ROOT } from '../shared/install-root.ts';
import { DEFAULT_LEXICON_DIR } from '../shared/lexicons.ts';

const DEFAULT_RULE_FILE = fileURLToPath(
  new URL('../../../../config/defaults/rules/default.yaml', import.meta.url),
);

export const RulesSettings = z.object({
  /** YAML file of CEL rules; reloaded when it changes. Relative paths: from the installation root. */
  rule_file: z
    .string()
    .default(DEFAULT_RULE_FILE)
    .transform((p) => (isAbsolute(p) ? p : resolve(INSTALL_ROOT, p))),
  phishing_score_threshold: z.number().min(0).max(1).default(0.5),
  base_probability: z.number().min(0.001).max(0.999).default(0.1),
  /** How often (ms) the rule file's modification time is checked. */
  reload_check_ms: z.number().int().nonnegative().default(1000),
  lexicon_dir: z.string().default(DEFAULT_LEXICON_DIR),
  cache_ttl_seconds: z.number().int().nonnegative().default(0),
});
export type RulesSettings = z.output<typeof RulesSettings>;
