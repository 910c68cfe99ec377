import { readFileSync } from 'node:fs';
import type { ServiceConfigFile } from '@trawl/contracts';
import { ATTACHMENTS_SYMBOLS } from './attachments/symbols.ts';
import { CLASSIFIER_SYMBOLS } from './classifier/symbols.ts';
import { CONTENT_SYMBOLS } from './content/symbols.ts';
import { HEADERS_SYMBOLS } from './headers/symbols.ts';
import { LIST_SYMBOLS } from './lists/symbols.ts';
import { compileRuleText } from './rules/rule-file.ts';
import { RulesSettings } from './rules/settings.ts';
import { ScorerSettings } from './scorer/settings.ts';
import { parseWeights } from './scorer/weights.ts';
import { GROUPS, type GroupDef, type SymbolDefs } from './shared/symbols.ts';
import { INTEL_SYMBOLS } from './threat-intel/symbols.ts';
import { URLS_SYMBOLS } from './urls/symbols.ts';

/** One row of the symbol list: what `trawl symbols` prints and docs/analyzers.md tabulates. */
interface SymbolRow {
  /** `<analyzer>.<symbol>` as the scorer counts it. */
  symbol: string;
  /** Score declared where the symbol is defined (analyzer code or rule file). */
  declared: number;
  /** What the scorer uses: the weights file's override, else the declared score. */
  score: number;
  group: string;
  reason: string;
}

export interface Catalogue {
  bias: number;
  symbols: SymbolRow[];
  groups: (GroupDef & { name: string })[];
}

const BUILT_IN: Record<string, SymbolDefs> = {
  headers: HEADERS_SYMBOLS,
  urls: URLS_SYMBOLS,
  content: CONTENT_SYMBOLS,
  attachments: ATTACHMENTS_SYMBOLS,
  intel: INTEL_SYMBOLS,
  classifier: CLASSIFIER_SYMBOLS,
  lists: LIST_SYMBOLS,
};

/**
 * Every symbol of the built-in analyzers and of the configured rule file, with its declared score,
 * the score the scorer uses under the configured weights file, its group and its reason.
 */
export function symbolCatalogue(service: ServiceConfigFile): Catalogue {
  const rules = RulesSettings.parse(service.analyzers.rules?.settings ?? {});
  const scorer = ScorerSettings.parse(service.analyzers.scorer?.settings ?? {});
  const weights = parseWeights(readFileSync(scorer.weights_file, 'utf8'), scorer.weights_file);
  const rows: SymbolRow[] = [];
  const add = (symbol: string, declared: number, group: string | undefined, reason: string) =>
    rows.push({
      symbol,
      declared,
      score: weights.symbols[symbol] ?? declared,
      group: group ?? '',
      reason,
    });
  for (const [analyzer, defs] of Object.entries(BUILT_IN))
    for (const [name, d] of Object.entries(defs))
      add(`${analyzer}.${name}`, d.score, d.group, d.reason);
  for (const r of compileRuleText(readFileSync(rules.rule_file, 'utf8'), rules.rule_file))
    add(`rules.${r.id}`, r.score, r.group, r.description);
  const groups = new Map<string, GroupDef>(Object.entries(GROUPS));
  for (const [name, g] of Object.entries(weights.groups)) groups.set(name, g);
  return {
    bias: weights.bias,
    symbols: rows,
    groups: [...groups].map(([name, g]) => ({ name, ...g })),
  };
}

const cell = (s: string) => s.replaceAll('|', '\\|');

/** The catalogue as Markdown tables (the generated part of docs/analyzers.md). */
export function catalogueMarkdown(c: Catalogue): string {
  const lines = [
    `Bias (log-odds of a message about which nothing is known): ${c.bias}. A message is phishing when bias + Σ ≥ 0 (p ≥ 0.5).`,
    '',
    '| group | max | min | what it holds |',
    '|---|---|---|---|',
    ...c.groups.map((g) => `| ${g.name} | ${g.max} | ${g.min} | ${cell(g.reason)} |`),
    '',
    '| symbol | score | group | reason |',
    '|---|---|---|---|',
    ...c.symbols.map(
      (s) =>
        `| \`${s.symbol}\` | ${s.score}${s.score !== s.declared ? ` (declared ${s.declared})` : ''} | ${s.group} | ${cell(s.reason)} |`,
    ),
  ];
  return lines.join('\n');
}

/** The catalogue as aligned text columns (`trawl symbols`). */
export function catalogueText(c: Catalogue): string {
  const w = Math.max(...c.symbols.map((s) => s.symbol.length));
  const g = Math.max(5, ...c.symbols.map((s) => s.group.length));
  const head = `${'SYMBOL'.padEnd(w)}  ${'SCORE'.padStart(6)}  ${'GROUP'.padEnd(g)}  REASON`;
  return [
    head,
    ...c.symbols.map(
      (s) =>
        `${s.symbol.padEnd(w)}  ${String(s.score).padStart(6)}  ${s.group.padEnd(g)}  ${s.reason}`,
    ),
    '',
    `bias ${c.bias}; groups: ${c.groups.map((x) => `${x.name} [${x.min}, ${x.max}]`).join(', ')}`,
  ].join('\n');
}

const BEGIN = '<!-- symbols:begin -->';
const END = '<!-- symbols:end -->';

/** `doc` with the text between its symbols markers replaced by `table`. */
export function replaceGeneratedTable(doc: string, table: string): string {
  const b = doc.indexOf(BEGIN);
  const e = doc.indexOf(END);
  if (b === -1 || e < b) throw new Error(`no ${BEGIN} … ${END} markers`);
  return `${doc.slice(0, b + BEGIN.length)}\n${table}\n${doc.slice(e)}`;
}
