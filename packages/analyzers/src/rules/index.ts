import { defineAnalyzer } from '@trawl/plugin-sdk';
import { analyzeRules } from './analyzer.ts';
import { RulesSettings } from './settings.ts';

export { analyzeRules } from './analyzer.ts';
export { compileRuleText } from './rule-file.ts';
export { ruleView } from './rule-view.ts';
export { RulesSettings } from './settings.ts';

export const analyzer = defineAnalyzer({
  id: 'rules',
  version: '1.0.0',
  description:
    'CEL rules from rule_file over a normalised view of the email; reloaded when the file changes',
  settings: RulesSettings,
  analyze: (email, { settings, log }) => analyzeRules(email, settings, log),
});
