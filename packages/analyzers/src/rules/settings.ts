import { z } from 'zod';
import { LEXICON_SETTINGS, operatorFile, VERDICT_SETTINGS } from '../shared/settings.ts';

export const RulesSettings = z.object({
  /** YAML file of CEL rules; reloaded when it changes. Relative paths: from the installation root. */
  rule_file: operatorFile('rules/default.yaml'),
  ...VERDICT_SETTINGS,
  /** How often (ms) the rule file's modification time is checked. */
  reload_check_ms: z.number().int().nonnegative().default(1000),
  ...LEXICON_SETTINGS,
});
export type RulesSettings = z.output<typeof RulesSettings>;
