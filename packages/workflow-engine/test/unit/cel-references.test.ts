import { describe, expect, it } from 'vitest';
import {
  checkConditionReferences,
  compileWorkflow,
  conditionReferences,
  type ReferenceScope,
} from '../../src/index.ts';

const stages: ReferenceScope['stages'] = new Map([
  ['score', { analyzers: ['urls', 'headers'], providers: ['vip'] }],
  ['deep', { analyzers: ['llm'], providers: [] }],
  ['side', { analyzers: ['rules'], providers: [] }],
]);
const scope: ReferenceScope = { stages, upstream: new Set(['score']), self: 'deep' };

describe('conditionReferences', () => {
  it('finds stages, sections and ids named with literal keys, with their positions', () => {
    const refs = conditionReferences(
      '"score" in stages && stages.score.result.is_phishing\n  || stages["deep"].analyzers.llm.is_phishing',
    );
    expect(refs.map((r) => [r.stage, r.at.line, r.at.column, r.section?.name, r.id?.name])).toEqual(
      [
        ['score', 1, 2, undefined, undefined],
        ['score', 1, 29, 'result', undefined],
        ['deep', 2, 14, 'analyzers', 'llm'],
      ],
    );
  });

  it('ignores dynamic keys, a shadowing macro variable and expressions that do not parse', () => {
    expect(conditionReferences('stages[email.language].result.is_phishing')).toEqual([]);
    expect(conditionReferences('[1].exists(stages, stages > 0)')).toEqual([]);
    expect(conditionReferences('stages.score.result >')).toEqual([]);
  });
});

describe('checkConditionReferences', () => {
  it('accepts an upstream stage and its own analyzers and providers', () => {
    expect(
      checkConditionReferences(
        'stages.score.analyzers.urls.is_phishing || stages.score.providers.vip.is_vip',
        scope,
      ),
    ).toEqual([]);
  });

  it('names a misspelt stage with its line and column', () => {
    expect(checkConditionReferences('stages.scroe.result.probability > 0.5', scope)).toEqual([
      'line 1, column 8: unknown stage "scroe" (did you mean "score"?)',
    ]);
  });

  it('refuses a stage that is not upstream, and the stage itself', () => {
    expect(
      checkConditionReferences('"side" in stages && stages.deep.result.is_phishing', scope),
    ).toEqual([
      'line 1, column 2: stage "side" is not upstream of stage "deep" (add it to depends_on); a condition sees only stages completed before it runs',
      'line 1, column 28: stage "deep" refers to itself; a condition sees only stages completed before it runs',
    ]);
  });

  it('refuses an unknown section and an analyzer or provider the stage does not have', () => {
    expect(
      checkConditionReferences(
        'stages.score.resutl.is_phishing || stages.score.analyzers.lmm.is_phishing || stages.score.providers.dir.x',
        scope,
      ),
    ).toEqual([
      'line 1, column 14: stages.score has no "resutl" (did you mean "result"?); use result, analyzers or providers',
      'line 1, column 59: stage "score" has no analyzer "lmm" (known: headers, urls)',
      'line 1, column 101: stage "score" has no context provider "dir" (did you mean "vip"?)',
    ]);
  });
});

describe('compileWorkflow: a condition naming a stage that does not exist', () => {
  it('is refused, naming the workflow, the stage, the line and the column (it was skipped at run time)', () => {
    const wf = {
      id: 'default',
      name: 'Default',
      stages: [
        { name: 'score', analyzers: [{ id: 'urls' }] },
        {
          name: 'deep',
          type: 'conditional' as const,
          condition: 'stages.scroe.result.probability > 0.25',
          analyzers: [{ id: 'llm', condition: 'stages.score.analyzers.url.is_phishing' }],
        },
      ],
    };
    let problems: unknown;
    try {
      compileWorkflow(wf as never);
    } catch (e) {
      problems = (e as { problems?: unknown }).problems;
    }
    expect(problems).toEqual([
      {
        path: '/stages/1/analyzers/0/condition',
        message:
          'workflow "default", stage "deep" analyzer "llm" condition, line 1, column 24: stage "score" has no analyzer "url" (did you mean "urls"?)',
      },
      {
        path: '/stages/1/condition',
        message:
          'workflow "default", stage "deep" condition, line 1, column 8: unknown stage "scroe" (did you mean "score"?)',
      },
    ]);
  });

  it('accepts a reference to a transitive dependency', () => {
    expect(() =>
      compileWorkflow({
        id: 'w',
        name: 'W',
        stages: [
          { name: 'a', analyzers: [{ id: 'x' }] },
          { name: 'b', analyzers: [{ id: 'y' }] },
          {
            name: 'c',
            type: 'conditional',
            condition: 'stages.a.result.is_phishing',
            analyzers: [{ id: 'z' }],
          },
        ],
      } as never),
    ).not.toThrow();
  });
});
