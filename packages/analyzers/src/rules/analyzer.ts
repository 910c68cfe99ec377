import type { AnalyzerAnswerInput, Email } from '@trawl/contracts';
import { loadLexicons } from '../shared/lexicons.ts';
import { answerFrom, type Finding } from '../shared/score.ts';
import { type Rule, RuleSet } from './rule-file.ts';
import { ruleView } from './rule-view.ts';
import type { RulesSettings } from './settings.ts';

type Log = { warn(obj: object, msg?: string): void };

const sets = new Map<string, RuleSet>();

/** The live rule set of a file (one per path per process). */
function ruleSetFor(path: string, checkEveryMs: number, log?: Log): RuleSet {
  let s = sets.get(path);
  if (!s) {
    s = new RuleSet(path, {
      checkEveryMs,
      onError: (msg) =>
        log?.warn(
          { rule_file: path, error: msg },
          'rule file refused; keeping the last good rules',
        ),
    });
    sets.set(path, s);
  }
  return s;
}

const groupMaps = new WeakMap<readonly Rule[], Record<string, { group?: string }>>();
/** rule id → its group, made once per rule set. */
function groupsOf(rules: readonly Rule[]): Record<string, { group?: string }> {
  let m = groupMaps.get(rules);
  if (!m) {
    m = {};
    for (const r of rules) if (r.group) m[r.id] = { group: r.group };
    groupMaps.set(rules, m);
  }
  return m;
}

function firstLine(s: string): string {
  const nl = s.indexOf('\n');
  return nl === -1 ? s : s.slice(0, nl);
}

export function analyzeRules(
  email: Email,
  settings: RulesSettings,
  log?: Log,
): AnalyzerAnswerInput {
  const set = ruleSetFor(settings.rule_file, settings.reload_check_ms, log).current();
  const lex = loadLexicons(settings.lexicon_dir);
  const m = ruleView(email, lex);
  const findings: Finding[] = [];
  const matched: string[] = [];
  const errors: string[] = [];
  const ctx = { m };
  // A rule that fails is reported by its message alone: capturing a stack trace for every error
  // the evaluator raises would cost more than evaluating all the rules (restored below).
  const stackTraceLimit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    for (const r of set.rules) {
      let hit: unknown;
      try {
        hit = r.run(ctx);
      } catch (err) {
        if (errors.length < 5) errors.push(`${r.id}: ${firstLine((err as Error).message)}`);
        continue;
      }
      if (hit === true) {
        matched.push(r.id);
        findings.push({
          type: r.indicator,
          symbol: r.id,
          value: `rule ${r.id}: ${r.description || r.expression}`.slice(0, 500),
          weight: r.score,
        });
      }
    }
  } finally {
    Error.stackTraceLimit = stackTraceLimit;
  }
  return answerFrom(findings, {
    base: settings.base_probability,
    threshold: settings.phishing_score_threshold,
    name: 'rules',
    maxLogOdds: 8,
    groups: groupsOf(set.rules),
    details: {
      rules_loaded: set.rules.length,
      matched,
      ...(set.error ? { rule_file_error: set.error } : {}),
      ...(errors.length ? { rule_errors: errors } : {}),
    },
  });
}
