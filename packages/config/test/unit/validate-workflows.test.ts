import { ServiceConfigFile } from '@trawl/contracts';
import { describe, expect, it } from 'vitest';
import {
  checkWorkflows,
  validateWorkflow,
  validateWorkflows,
  workflowContextFor,
} from '../../src/validate-workflows.ts';

const ctx = { analyzers: ['a', 'b', 'c'], providers: ['dir'] };

function wf(stages: unknown[], extra: Record<string, unknown> = {}) {
  return { id: 'w', name: 'W', stages, ...extra };
}
const st = (name: string, more: Record<string, unknown> = {}) => ({
  name,
  analyzers: [{ id: 'a' }],
  ...more,
});

function messages(input: unknown[], c: Parameters<typeof validateWorkflows>[1] = ctx) {
  return validateWorkflows(input, c).map((p) => `${p.path}: ${p.message}`);
}

describe('validateWorkflows', () => {
  it('accepts a valid workflow and applies defaults', () => {
    const r = checkWorkflows([wf([st('one'), st('two', { depends_on: ['one'] })])], ctx);
    expect(r.problems).toEqual([]);
    expect(r.workflows[0]?.confidence_threshold).toBe(0.5);
  });

  it('refuses duplicate workflow ids and stage names', () => {
    expect(messages([wf([st('x'), st('x')]), wf([st('y')])])).toEqual([
      '/0/stages/1/name: stage name "x" is already used by stage 0',
      '/1/id: workflow id "w" is already used by /0',
    ]);
  });

  it('refuses unknown stages in depends_on and final_stage_name', () => {
    expect(
      messages([wf([st('x', { depends_on: ['nope'] })], { final_stage_name: 'gone' })]),
    ).toEqual([
      '/0/stages/0/depends_on/0: unknown stage "nope"',
      '/0/final_stage_name: unknown stage "gone"',
    ]);
  });

  it('names a dependency cycle', () => {
    const out = messages([
      wf([
        st('a', { depends_on: ['c'] }),
        st('b', { depends_on: ['a'] }),
        st('c', { depends_on: ['b'] }),
        st('d'),
      ]),
    ]);
    expect(out).toEqual(['/0/stages/0/depends_on: dependency cycle: a -> c -> b -> a']);
  });

  it('finds a cycle through an implicit dependency on the previous stage', () => {
    // b depends on a implicitly (absent depends_on), a depends on b explicitly.
    expect(messages([wf([st('a', { depends_on: ['b'] }), st('b')])])).toEqual([
      '/0/stages/0/depends_on: dependency cycle: a -> b -> a',
    ]);
  });

  it('refuses a stage depending on itself', () => {
    expect(messages([wf([st('a', { depends_on: ['a'] })])])).toEqual([
      '/0/stages/0/depends_on/0: stage "a" depends on itself',
    ]);
  });

  it('accepts depends_on: [] (independent stages)', () => {
    expect(messages([wf([st('a'), st('b', { depends_on: [] })])])).toEqual([]);
  });

  it('refuses unknown analyzers and providers (with a hint), and required disabled ones', () => {
    const w = wf([
      st('s', {
        analyzers: [{ id: 'aa' }, { id: 'off' }, { id: 'off2', required: true }],
        context_providers: [
          { id: 'ldap' },
          { id: 'dir' },
          { id: 'dir' },
          { id: 'gone' },
          { id: 'gone2', required: true },
        ],
      }),
    ]);
    const c = { ...ctx, disabledAnalyzers: ['off', 'off2'], disabledProviders: ['gone', 'gone2'] };
    expect(messages([w], c)).toEqual([
      '/0/stages/0/analyzers/0/id: unknown analyzer "aa" (did you mean "a"?)',
      '/0/stages/0/analyzers/2/required: analyzer "off2" is required but disabled in the service configuration',
      '/0/stages/0/context_providers/0/id: unknown context provider "ldap" (known: dir)',
      '/0/stages/0/context_providers/2/id: context provider "dir" appears twice in this stage',
      '/0/stages/0/context_providers/4/required: context provider "gone2" is required but disabled in the service configuration',
    ]);
  });

  it('does not check ids when no set is given', () => {
    expect(validateWorkflows([wf([st('s', { analyzers: [{ id: 'anything' }] })])], {})).toEqual([]);
  });

  it('checks bounds of weights, thresholds and counts', () => {
    const out = messages([
      wf(
        [
          st('s', {
            analyzers: [{ id: 'a', weight: 1.2 }],
          }),
        ],
        { confidence_threshold: -0.1 },
      ),
      {
        ...wf([
          st('t', {
            min_successful_analyzers: 3,
            analyzers: [
              { id: 'a', weight: 0 },
              { id: 'b', weight: 0 },
            ],
          }),
        ]),
        id: 'w2',
      },
      {
        ...wf([
          st('u', {
            analyzers: [{ id: 'a', retry_config: { backoff_ms: 500, max_backoff_ms: 100 } }],
          }),
        ]),
        id: 'w3',
      },
    ]);
    expect(out).toEqual([
      expect.stringMatching(/^\/0\/stages\/0\/analyzers\/0\/weight: /),
      expect.stringMatching(/^\/0\/confidence_threshold: /),
      '/1/stages/0/min_successful_analyzers: is 3 but the stage has only 2 analyzer(s)',
      '/1/stages/0/analyzers: weighted_average needs at least one analyzer with a weight above 0',
      '/2/stages/0/analyzers/0/retry_config/max_backoff_ms: must be at least backoff_ms',
    ]);
  });

  it('compiles stage and analyzer conditions and reports thrown errors too', () => {
    const checkCondition = (e: string) => {
      if (e === 'boom') throw new Error('parser crashed');
      return e === 'ok' ? undefined : `bad expression`;
    };
    const w = wf([
      st('s', {
        type: 'conditional',
        condition: 'ok',
        analyzers: [{ id: 'a', condition: 'nope' }],
      }),
      st('t', { type: 'conditional', condition: 'boom' }),
    ]);
    expect(messages([w], { ...ctx, checkCondition })).toEqual([
      '/0/stages/0/analyzers/0/condition: condition does not compile: bad expression',
      '/0/stages/1/condition: condition does not compile: parser crashed',
    ]);
  });

  it('checks what a condition names against the stage, its upstream stages and their analyzers', () => {
    const seen: Array<[string, string, string[], string[]]> = [];
    const checkReferences = (
      expr: string,
      scope: { stages: ReadonlyMap<string, unknown>; upstream: ReadonlySet<string>; self: string },
    ) => {
      seen.push([expr, scope.self, [...scope.upstream].sort(), [...scope.stages.keys()]]);
      return expr.includes('scroe') ? ['line 1, column 8: unknown stage "scroe"'] : [];
    };
    const w = wf([
      st('score'),
      st('mid'),
      st('deep', {
        type: 'conditional',
        condition: 'stages.scroe.result.probability > 0.5',
        analyzers: [{ id: 'b', condition: 'stages.score.result.is_phishing' }],
      }),
    ]);
    expect(messages([w], { ...ctx, checkCondition: () => undefined, checkReferences })).toEqual([
      '/0/stages/2/condition: workflow "w", stage "deep" condition, line 1, column 8: unknown stage "scroe"',
    ]);
    expect(seen).toEqual([
      ['stages.scroe.result.probability > 0.5', 'deep', ['mid', 'score'], ['score', 'mid', 'deep']],
      ['stages.score.result.is_phishing', 'deep', ['mid', 'score'], ['score', 'mid', 'deep']],
    ]);
  });

  it('refuses a condition on a stage that is not conditional', () => {
    expect(messages([wf([st('s', { condition: 'true' })])])).toEqual([
      '/0/stages/0/condition: only a conditional stage has a condition (type is parallel)',
    ]);
  });

  it('validateWorkflow gives paths relative to the workflow', () => {
    expect(validateWorkflow(wf([st('s', { depends_on: ['x'] })]), ctx)).toEqual([
      { path: '/stages/0/depends_on/0', message: 'unknown stage "x"' },
    ]);
    expect(validateWorkflow({ id: 'w' }, ctx).map((p) => p.path)).toEqual(['/name', '/stages']);
  });
});

describe('workflowContextFor', () => {
  it('makes the enabled analyzers of both forms available, and the switched-off ones disabled', () => {
    const service = ServiceConfigFile.parse({
      analyzers: { a: { enabled: true }, off: { enabled: false }, both: { enabled: false } },
      plugins: {
        analyzers: {
          p: { enabled: true, url: 'http://x' },
          both: { enabled: true, url: 'http://y' },
        },
        context_providers: {
          dir: { enabled: true, url: 'http://z' },
          old: { enabled: false, url: 'http://z' },
        },
      },
    });
    const c = workflowContextFor(service, { knownAnalyzers: ['builtin', 'off'] });
    expect([...(c.analyzers ?? [])].sort()).toEqual(['a', 'both', 'builtin', 'p']);
    expect([...(c.disabledAnalyzers ?? [])]).toEqual(['off']);
    expect([...(c.providers ?? [])]).toEqual(['dir']);
    expect([...(c.disabledProviders ?? [])]).toEqual(['old']);
  });
});

/**
 * Regression: a 20,000-stage depends_on chain overflowed the call stack in the cycle search
 * (recursive), and the validate endpoint answered 500.
 */
describe('validateWorkflows on a 20,000-stage depends_on chain', () => {
  const N = 20_000;
  const chain = (closed: boolean) =>
    wf(
      Array.from({ length: N }, (_, i) =>
        st(`s${i}`, {
          // each on the next one listed: the search from s0 goes N stages deep
          depends_on: i === N - 1 ? (closed ? ['s0'] : []) : [`s${i + 1}`],
        }),
      ),
    );

  it('accepts the chain without overflowing the stack', () => {
    expect(messages([chain(false)])).toEqual([]);
  });

  it('names the cycle when the chain is closed', () => {
    const out = messages([chain(true)]);
    expect(out).toHaveLength(1);
    expect(out[0]).toMatch(/depends_on: dependency cycle: s0 -> s1 -> s2 -> .* -> s19999 -> s0$/);
  });
});
