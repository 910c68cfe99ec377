import { BadInputError, Workflow, type WorkflowInput } from '@trawl/contracts';
import { describe, expect, it } from 'vitest';
import { checkCondition, compileWorkflow } from '../../src/index.ts';

function problemsOf(w: WorkflowInput, opts?: Parameters<typeof compileWorkflow>[1]) {
  try {
    compileWorkflow(Workflow.parse(w), opts);
  } catch (e) {
    expect(e).toBeInstanceOf(BadInputError);
    expect((e as BadInputError).code).toBe('TRAWL_ERR_WORKFLOW_INVALID');
    return (e as BadInputError).problems ?? [];
  }
  throw new Error('expected the workflow to be refused');
}

const a = (id: string) => ({ id });

describe('compileWorkflow', () => {
  it('derives the DAG: absent depends_on = previous stage, [] = none', () => {
    const c = compileWorkflow(
      Workflow.parse({
        id: 'w',
        name: 'W',
        stages: [
          { name: 's1', analyzers: [a('x')] },
          { name: 's2', analyzers: [a('y')] },
          { name: 's3', depends_on: [], analyzers: [a('z')] },
          { name: 's4', depends_on: ['s2', 's3'], analyzers: [a('z')] },
        ],
      }),
    );
    expect(c.stages.map((s) => s.deps)).toEqual([[], [0], [], [1, 2]]);
    expect(c.stages[1]!.dependents).toEqual([3]);
    expect(c.finalStageName).toBe('s4');
    expect(c.timeoutMs).toBe(300_000);
  });

  it('refuses duplicate stage names', () => {
    const p = problemsOf({
      id: 'w',
      name: 'W',
      stages: [
        { name: 's', analyzers: [a('x')] },
        { name: 's', analyzers: [a('y')] },
      ],
    });
    expect(p).toContainEqual({ path: '/stages/1/name', message: 'duplicate stage name s' });
  });

  it('refuses unknown depends_on', () => {
    const p = problemsOf({
      id: 'w',
      name: 'W',
      stages: [{ name: 's', depends_on: ['nope'], analyzers: [a('x')] }],
    });
    expect(p).toContainEqual({ path: '/stages/0/depends_on/0', message: 'unknown stage nope' });
  });

  it('refuses cycles and names them', () => {
    const p = problemsOf({
      id: 'w',
      name: 'W',
      stages: [
        { name: 'a', depends_on: ['c'], analyzers: [a('x')] },
        { name: 'b', depends_on: ['a'], analyzers: [a('x')] },
        { name: 'c', depends_on: ['b'], analyzers: [a('x')] },
      ],
    });
    expect(p).toHaveLength(1);
    expect(p[0]!.message).toMatch(/cycle: a -> c -> b -> a/);
    expect(
      problemsOf({
        id: 'w',
        name: 'W',
        stages: [{ name: 'a', depends_on: ['a'], analyzers: [a('x')] }],
      })[0]!.message,
    ).toMatch(/itself/);
  });

  it('refuses a final_stage_name that names no stage', () => {
    const p = problemsOf({
      id: 'w',
      name: 'W',
      final_stage_name: 'ghost',
      stages: [{ name: 's', analyzers: [a('x')] }],
    });
    expect(p[0]!.path).toBe('/final_stage_name');
  });

  it('refuses CEL that does not compile, with pointers to stage and analyzer conditions', () => {
    const p = problemsOf({
      id: 'w',
      name: 'W',
      stages: [
        {
          name: 's',
          type: 'conditional',
          condition: 'stages.x.result.confidence >=',
          analyzers: [a('x')],
        },
        { name: 't', analyzers: [{ id: 'y', condition: 'nosuchvar > 1' }] },
        { name: 'u', analyzers: [{ id: 'z', condition: '1 + 2' }] },
      ],
    });
    expect(p.map((x) => x.path)).toEqual([
      '/stages/0/condition',
      '/stages/1/analyzers/0/condition',
      '/stages/2/analyzers/0/condition',
    ]);
    expect(p[2]!.message).toMatch(/bool/);
  });

  it('refuses unknown analyzers and providers when the sets are given, and lists every problem', () => {
    const w = {
      id: 'w',
      name: 'W',
      stages: [
        { name: 's', analyzers: [a('known'), a('ghost')], context_providers: [{ id: 'p0' }] },
        { name: 't', analyzers: [a('phantom')] },
      ],
    };
    const p = problemsOf(w, { knownAnalyzers: ['known'], knownProviders: new Set(['p1']) });
    expect(p.map((x) => x.path).sort()).toEqual(
      [
        '/stages/0/analyzers/1/id',
        '/stages/0/context_providers/0/id',
        '/stages/1/analyzers/0/id',
      ].sort(),
    );
    expect(() => compileWorkflow(Workflow.parse(w))).not.toThrow();
  });

  it('refuses min_successful_analyzers above the number of analyzers', () => {
    const p = problemsOf({
      id: 'w',
      name: 'W',
      stages: [{ name: 's', min_successful_analyzers: 3, analyzers: [a('x'), a('y')] }],
    });
    expect(p[0]!.path).toBe('/stages/0/min_successful_analyzers');
  });

  it('reports schema problems of an unparsed workflow with pointers', () => {
    let err: unknown;
    try {
      compileWorkflow({ id: 'w', name: 'W', stages: [] } as unknown as Workflow);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(BadInputError);
    expect((err as BadInputError).problems?.[0]?.path).toBe('/stages');
  });

  it('resolves retry settings: retry gets retry_config or the defaults, others one attempt', () => {
    const c = compileWorkflow(
      Workflow.parse({
        id: 'w',
        name: 'W',
        stages: [
          {
            name: 's',
            analyzers: [
              { id: 'a', failure_strategy: 'retry' },
              { id: 'b', failure_strategy: 'retry', retry_config: { max_attempts: 5 } },
              { id: 'c', failure_strategy: 'skip' },
            ],
          },
        ],
      }),
    );
    expect(c.stages[0]!.analyzers.map((x) => x.maxAttempts)).toEqual([3, 5, 1]);
    expect(c.stages[0]!.analyzers[0]!.retry).toEqual({
      max_attempts: 3,
      backoff_ms: 200,
      max_backoff_ms: 5000,
      exponential_backoff: true,
    });
  });
});

describe('checkCondition', () => {
  it('accepts the documented example and refuses broken or non-bool expressions', () => {
    expect(
      checkCondition('stages.triage.result.confidence >= 0.4 || size(email.attachments) > 0'),
    ).toBeUndefined();
    expect(checkCondition('email.headers.subject.contains("invoice")')).toBeUndefined();
    expect(checkCondition('stages.triage.result.is_phishing')).toBeUndefined();
    expect(checkCondition('1 +')).toMatch(/Unexpected/);
    expect(checkCondition('foo == 1')).toMatch(/foo/);
    expect(checkCondition('"a"')).toMatch(/bool/);
    expect(checkCondition('  ')).toMatch(/empty/);
  });
});
