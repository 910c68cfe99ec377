import { describe, expect, it } from 'vitest';
import { parseWith, Workflow } from '../../src/index.ts';

const wf = () => ({
  id: 'default',
  name: 'Default',
  stages: [
    {
      name: 'triage',
      type: 'parallel',
      analyzers: [{ id: 'headers' }, { id: 'urls', weight: 0.5 }],
    },
    {
      name: 'deep',
      type: 'conditional',
      condition: 'stages.triage.result.confidence < 0.7',
      analyzers: [{ id: 'llm', failure_strategy: 'retry', retry_config: { max_attempts: 2 } }],
    },
  ],
});

const pathsOf = (v: unknown) => {
  const r = parseWith(Workflow, v);
  return r.ok ? [] : r.problems.map((p) => p.path);
};

describe('Workflow, Stage, AnalyzerRef, ProviderRef (spec 2.7)', () => {
  it('accepts a valid workflow and applies the defaults', () => {
    const w = Workflow.parse(wf());
    expect(w.timeout_ms).toBe(300000);
    expect(w.confidence_threshold).toBe(0.5);
    const s0 = w.stages[0]!;
    expect(s0.aggregation_method).toBe('weighted_average');
    expect(s0.context_providers).toEqual([]);
    expect(s0.depends_on).toBeUndefined();
    expect(s0.analyzers[0]).toMatchObject({ weight: 1, required: false, failure_strategy: 'skip' });
    const retry = w.stages[1]!.analyzers[0]!.retry_config!;
    expect(retry).toEqual({
      max_attempts: 2,
      backoff_ms: 200,
      max_backoff_ms: 5000,
      exponential_backoff: true,
    });
  });

  it('keeps depends_on: [] apart from an absent depends_on', () => {
    const w = wf() as any;
    w.stages[1].depends_on = [];
    expect(Workflow.parse(w).stages[1]!.depends_on).toEqual([]);
  });

  it.each([
    [
      'missing id',
      (w: any) => {
        delete w.id;
      },
      '/id',
    ],
    [
      'missing name',
      (w: any) => {
        delete w.name;
      },
      '/name',
    ],
    [
      'no stages',
      (w: any) => {
        w.stages = [];
      },
      '/stages',
    ],
    [
      'bad stage type',
      (w: any) => {
        w.stages[0].type = 'random';
      },
      '/stages/0/type',
    ],
    [
      'bad aggregation',
      (w: any) => {
        w.stages[0].aggregation_method = 'median';
      },
      '/stages/0/aggregation_method',
    ],
    [
      'weight above 1',
      (w: any) => {
        w.stages[0].analyzers[0].weight = 1.1;
      },
      '/stages/0/analyzers/0/weight',
    ],
    [
      'weight below 0',
      (w: any) => {
        w.stages[0].analyzers[0].weight = -0.1;
      },
      '/stages/0/analyzers/0/weight',
    ],
    [
      'confidence_threshold above 1',
      (w: any) => {
        w.confidence_threshold = 2;
      },
      '/confidence_threshold',
    ],
    [
      'timeout_ms not positive',
      (w: any) => {
        w.timeout_ms = 0;
      },
      '/timeout_ms',
    ],
    [
      'max_parallel_analyzers zero',
      (w: any) => {
        w.max_parallel_analyzers = 0;
      },
      '/max_parallel_analyzers',
    ],
    [
      'bad failure strategy',
      (w: any) => {
        w.stages[0].analyzers[0].failure_strategy = 'ignore';
      },
      '/stages/0/analyzers/0/failure_strategy',
    ],
    [
      'retry attempts zero',
      (w: any) => {
        w.stages[1].analyzers[0].retry_config.max_attempts = 0;
      },
      '/stages/1/analyzers/0/retry_config/max_attempts',
    ],
    [
      'conditional without condition',
      (w: any) => {
        delete w.stages[1].condition;
      },
      '/stages/1/condition',
    ],
    [
      'stage without analyzers',
      (w: any) => {
        w.stages[0].analyzers = [];
      },
      '/stages/0/analyzers',
    ],
    [
      'analyzer twice in a stage',
      (w: any) => {
        w.stages[0].analyzers.push({ id: 'headers' });
      },
      '/stages/0/analyzers/2/id',
    ],
    [
      'analyzer without id',
      (w: any) => {
        delete w.stages[0].analyzers[0].id;
      },
      '/stages/0/analyzers/0/id',
    ],
    [
      'provider without id',
      (w: any) => {
        w.stages[0].context_providers = [{ timeout_ms: 5 }];
      },
      '/stages/0/context_providers/0/id',
    ],
    [
      'min_successful negative',
      (w: any) => {
        w.stages[0].min_successful_analyzers = -1;
      },
      '/stages/0/min_successful_analyzers',
    ],
  ])('rejects %s', (_n, mutate, path) => {
    const w = wf();
    mutate(w);
    expect(pathsOf(w)).toContain(path);
  });
});
