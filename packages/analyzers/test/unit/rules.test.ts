import { mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { analyzeRules, compileRuleText, RulesSettings, ruleView } from '../../src/rules/index.ts';
import { loadLexicons } from '../../src/shared/lexicons.ts';
import { hamColleague, makeEmail } from '../fixtures/emails.ts';

const dir = mkdtempSync(join(tmpdir(), 'trawl-rules-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const RULES = `rules:
  - id: free-mail-reply
    description: replies go to free-mail
    expression: m.reply_to.exists(r, r.is_free_mail)
    score: 2
    indicator: reply_to_mismatch
`;

describe('rules analyzer', () => {
  it('the default rule pack compiles and raises nothing on an ordinary message', () => {
    const a = analyzeRules(hamColleague(), RulesSettings.parse({}));
    expect(a.analyzer_details?.rule_file_error).toBeUndefined();
    expect(a.analyzer_details?.rules_loaded).toBeGreaterThan(5);
    expect(a.indicators).toEqual([]);
    // every default rule evaluates (a rule that errors, e.g. on a regex JavaScript refuses, is dead)
    expect(a.analyzer_details?.rule_errors).toBeUndefined();
  });

  it('the default wallet rule matches a seed-phrase request whatever its case', () => {
    const e = makeEmail({
      text: 'Please confirm your Wallet Verification by entering your Seed Phrase.',
    });
    const a = analyzeRules(e, RulesSettings.parse({}));
    expect(a.analyzer_details?.rule_errors).toBeUndefined();
    expect(a.analyzer_details?.matched).toContain('wallet-secret-request');
  });

  it('regression: a lone PDF attachment raised an indicator typed html_attachment', () => {
    const lone = (filename: string, content: string) =>
      analyzeRules(
        makeEmail({ text: 'See attached.', attachments: [{ filename, content }] }),
        RulesSettings.parse({}),
      );
    const pdf = lone('refund.pdf', '%PDF-1.4\n%%EOF');
    expect(pdf.analyzer_details?.matched).toEqual(['lone-pdf-attachment-little-text']);
    expect(pdf.indicators?.map((i) => i.type)).toEqual(['pdf_attachment']);
    const html = lone('refund.html', '<html><body>hi</body></html>');
    expect(html.analyzer_details?.matched).toEqual(['lone-document-attachment-little-text']);
    expect(html.indicators?.map((i) => i.type)).toEqual(['html_attachment']);
  });

  it('raises the indicator type of a matching rule', () => {
    const file = join(dir, 'a.yaml');
    writeFileSync(file, RULES);
    const e = makeEmail({ headers: { 'reply-to': 'x@gmail.com' } });
    const a = analyzeRules(e, RulesSettings.parse({ rule_file: file }));
    expect(a.indicators?.[0]?.type).toBe('reply_to_mismatch');
    expect(a.analyzer_details?.matched).toEqual(['free-mail-reply']);
  });

  it('reloads a changed file and keeps the last good rules when the new one is broken', () => {
    const file = join(dir, 'b.yaml');
    writeFileSync(file, RULES);
    const s = RulesSettings.parse({ rule_file: file, reload_check_ms: 0 });
    const e = makeEmail({ headers: { 'reply-to': 'x@gmail.com' } });
    expect(analyzeRules(e, s).analyzer_details?.matched).toEqual(['free-mail-reply']);

    writeFileSync(file, RULES.replace('free-mail-reply', 'renamed-rule'));
    utimesSync(file, new Date(), new Date(Date.now() + 5000));
    expect(analyzeRules(e, s).analyzer_details?.matched).toEqual(['renamed-rule']);

    writeFileSync(file, 'rules:\n  - id: broken\n    expression: "m.subject =="\n    score: 1\n');
    utimesSync(file, new Date(), new Date(Date.now() + 10000));
    const a = analyzeRules(e, s);
    expect(a.analyzer_details?.matched).toEqual(['renamed-rule']);
    expect(String(a.analyzer_details?.rule_file_error)).toContain('broken');
  });

  it('reports a rule file that does not exist', () => {
    const a = analyzeRules(
      hamColleague(),
      RulesSettings.parse({ rule_file: join(dir, 'missing.yaml') }),
    );
    expect(String(a.analyzer_details?.rule_file_error)).toContain('cannot be read');
  });

  it('refuses duplicate ids and bad YAML with a stable error code', () => {
    expect(() => compileRuleText('rules: [', 'x')).toThrow(/not valid YAML/);
    try {
      compileRuleText(`${RULES}${RULES.replace('rules:\n', '')}`, 'x');
      expect.unreachable();
    } catch (err) {
      expect((err as { code: string }).code).toBe('TRAWL_ERR_RULES_FILE_INVALID');
    }
  });

  it('exposes the documented view', () => {
    const m = ruleView(
      makeEmail({ subject: 'Action required: verify your account' }),
      loadLexicons(),
    );
    expect(Object.keys(m)).toEqual(
      expect.arrayContaining([
        'from',
        'reply_to',
        'return_path',
        'subject',
        'text',
        'urls',
        'attachments',
        'auth',
        'lexicon',
        'brands',
      ]),
    );
    expect((m.lexicon as Record<string, number>).urgency).toBeGreaterThan(0);
  });
});

describe('rule expressions: matches() cannot backtrack', () => {
  it('refuses a pattern that needs backtracking and runs a nested quantifier in linear time', () => {
    expect(() =>
      compileRuleText(
        'rules:\n  - { id: backref, expression: "m.subject.matches(\'(a)\\\\\\\\1\')", score: 1 }\n',
        't',
      ),
    ).toThrow(/does not compile/);
    const [rule] = compileRuleText(
      'rules:\n  - { id: nested, expression: "m.subject.matches(\'(a+)+$\')", score: 1 }\n',
      't',
    );
    const t = performance.now();
    expect(rule!.run({ m: { subject: `${'a'.repeat(100_000)}!` } })).toBe(false);
    expect(performance.now() - t).toBeLessThan(2000);
  });
});
