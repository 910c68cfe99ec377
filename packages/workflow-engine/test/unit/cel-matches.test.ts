import { readFileSync } from 'node:fs';
import { BadInputError, Workflow } from '@trawl/contracts';
import { describe, expect, it } from 'vitest';
import {
  checkCondition,
  compileCondition,
  compileWorkflow,
  createCelEnvironment,
} from '../../src/index.ts';

const vars = (subject: string) => ({ email: { headers: { subject } }, stages: {} });

/**
 * Regression: CEL `matches()` ran a backtracking RegExp, so an admin's `(a+)+$` took 18 s on 29
 * characters of a message. It now runs on V8's linear-time engine, and what that engine cannot run
 * (backreferences, lookarounds) or a pattern that is not a literal is refused when the condition is
 * compiled.
 */
describe('CEL matches()', () => {
  it('runs (a+)+$ in linear time: 29 characters, then 200,000', () => {
    const c = compileCondition("email.headers.subject.matches('(a+)+$')");
    // with backtracking each of these takes 2^n steps: the test would never end
    expect(c.evaluate(vars(`${'a'.repeat(29)}!`))).toEqual({ value: false });
    expect(c.evaluate(vars(`${'a'.repeat(200_000)}!`))).toEqual({ value: false });
    expect(c.evaluate(vars('aaaa'))).toEqual({ value: true });
    // an unanchored scan that backtracking makes quadratic is linear too
    const q = compileCondition("email.headers.subject.matches('.*x')");
    expect(q.evaluate(vars('a'.repeat(200_000)))).toEqual({ value: false });
  });

  it('keeps the JavaScript RegExp semantics of the library (a search, not a full match)', () => {
    const c = compileCondition("email.headers.subject.matches('inv(oice|o) ?[0-9]{2,}')");
    expect(c.evaluate(vars('Your invoice 0042 is due')).value).toBe(true);
    expect(c.evaluate(vars('Your invoice is due')).value).toBe(false);
    expect(compileCondition("'hello'.matches('^h.*o$')").evaluate(vars('')).value).toBe(true);
  });

  it('refuses at compile time what the linear engine cannot run, and non-literal patterns', () => {
    expect(checkCondition("email.headers.subject.matches('(a+)\\\\1')")).toMatch(
      /needs backtracking .*: refused/,
    );
    expect(checkCondition("email.headers.subject.matches('a(?=b)')")).toMatch(/needs backtracking/);
    expect(checkCondition("email.headers.subject.matches('(?<!a)b')")).toMatch(
      /needs backtracking/,
    );
    expect(checkCondition('email.headers.subject.matches(email.headers.sender)')).toBe(
      'matches() takes its pattern as a string literal',
    );
    expect(checkCondition("email.headers.subject.matches('(')")).toMatch(
      /not a valid regular expression/,
    );
    expect(checkCondition("size(email.attachments).matches('1')")).toMatch(
      /no matching overload for 'int.matches\(string\)'/,
    );
  });

  it('a workflow whose condition uses a refused pattern is invalid', () => {
    let err: unknown;
    try {
      compileWorkflow(
        Workflow.parse({
          id: 'w',
          name: 'W',
          stages: [
            {
              name: 's',
              condition: "email.headers.subject.matches('(\\\\w+)\\\\s\\\\1')",
              analyzers: [{ id: 'x' }],
            },
          ],
        }),
      );
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(BadInputError);
    expect((err as BadInputError).code).toBe('TRAWL_ERR_WORKFLOW_INVALID');
    expect((err as BadInputError).problems?.[0]?.path).toBe('/stages/0/condition');
  });

  it('a receiver that is not a string at run time is an evaluation error (false, with a note)', () => {
    const c = compileCondition("stages.x.result.summary.matches('a')");
    const r = c.evaluate({ email: {}, stages: { x: { result: { summary: 3 } } } });
    expect(r.value).toBe(false);
    expect(r.error).toMatch(/matches\(\) needs a string, got number/);
  });

  it('compiles every expression of the shipped rules file, and wallet-secret-request matches', () => {
    const file = new URL('../../../../config/defaults/rules/default.yaml', import.meta.url);
    // one `- id:` then one single-line `expression:` per rule (plain or double-quoted scalar)
    const rules: { id: string; expression: string }[] = [];
    for (const line of readFileSync(file, 'utf8').split('\n')) {
      const id = /^\s*- id:\s*(\S+)/.exec(line)?.[1];
      if (id) rules.push({ id, expression: '' });
      const ex = /^\s*expression:\s*(.+)$/.exec(line)?.[1];
      const last = rules[rules.length - 1];
      if (ex && last) last.expression = ex.startsWith('"') ? (JSON.parse(ex) as string) : ex;
    }
    expect(rules.length).toBeGreaterThan(0);
    const doc = { rules };
    // the environment of rule expressions: every variable dyn, as the global `parse` has
    const env = createCelEnvironment({ unlistedVariablesAreDyn: true });
    for (const r of doc.rules) expect(() => env.parse(r.expression), r.id).not.toThrow();
    const wallet = doc.rules.find((r) => r.id === 'wallet-secret-request');
    expect(wallet?.expression).toContain('.matches(');
    const fn = env.parse(wallet?.expression ?? '');
    expect(fn({ m: { text: 'Please confirm your Recovery Phrase today' } })).toBe(true);
    expect(fn({ m: { text: 'Wallet sync required' } })).toBe(true);
    expect(fn({ m: { text: 'The quarterly report is attached' } })).toBe(false);
  });
});

describe('hasQuantifier', () => {
  it('finds quantifiers outside classes and escapes only', async () => {
    const { hasQuantifier } = await import('../../src/cel-matches.ts');
    expect(hasQuantifier('(seed|recovery|secret)[ -]phrase|private key')).toBe(false);
    expect(hasQuantifier('(?:a|b)c[*+?]\\+')).toBe(false);
    expect(hasQuantifier('(a+)+$')).toBe(true);
    expect(hasQuantifier('ab?')).toBe(true);
    expect(hasQuantifier('x{2,}')).toBe(true);
  });
});
