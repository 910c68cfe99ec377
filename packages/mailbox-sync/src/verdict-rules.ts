import { jsonText, type VerdictRequest } from '@trawl/contracts';
import { z } from 'zod';

/**
 * What a verdict does to the message: move it (a folder path with '/' between levels; Gmail: the
 * label that replaces the processed label), tag it (Graph categories, Gmail labels), flag it.
 */
export const VerdictRule = z.object({
  move_to: z.string().min(1).max(200).optional(),
  tags: z.array(z.string().min(1).max(200)).max(10).default([]),
  flag: z.boolean().default(false),
});
export type VerdictRule = z.output<typeof VerdictRule>;

/** The verdicts a retriever's verdict rules are keyed by. */
export const VERDICT_RULE_KEYS = [
  'allow',
  'flag',
  'review',
  'quarantine',
  'unanalyzed',
  'none',
  'low',
  'medium',
  'high',
  'critical',
] as const;

/**
 * Rules by recommended action, `unanalyzed` (Trawl could not analyse it: held for a person), and,
 * optionally, by threat level: a rule for the verdict's threat level wins over its action's.
 */
export const VerdictRules = z.partialRecord(z.enum(VERDICT_RULE_KEYS), VerdictRule);
export type VerdictRules = z.output<typeof VerdictRules>;

/** The rule a verdict calls for (`defaults` fill what `rules` leave out). */
export function ruleFor(
  req: VerdictRequest,
  rules: VerdictRules,
  defaults: Required<Pick<VerdictRules, 'allow' | 'flag' | 'review' | 'quarantine' | 'unanalyzed'>>,
): { key: string; rule: VerdictRule } {
  if (req.verdict === 'unanalyzed')
    return { key: 'unanalyzed', rule: rules.unanalyzed ?? defaults.unanalyzed };
  const level = req.result.threat_level;
  const byLevel = rules[level];
  if (byLevel) return { key: level, rule: byLevel };
  const action = req.result.recommended_action;
  return { key: action, rule: rules[action] ?? defaults[action] };
}

/** A JSON object of rules (TRAWL_GRAPH_VERDICT_RULES...). */
export const VerdictRulesJson = jsonText(VerdictRules, 'must be a JSON object of verdict rules');

/** The folders (Graph) or labels (Gmail) the rules move to, and the tags they set. */
export function ruleTargets(...sets: VerdictRules[]): { folders: string[]; tags: string[] } {
  const rules = sets.flatMap((s) => Object.values(s)).filter((r): r is VerdictRule => !!r);
  return {
    folders: [...new Set(rules.flatMap((r) => (r.move_to ? [r.move_to] : [])))],
    tags: [...new Set(rules.flatMap((r) => r.tags ?? []))],
  };
}
