import { BadInputError, Workflow } from '@trawl/contracts';
import { describe, expect, it } from 'vitest';
import { compileWorkflow } from '../../src/index.ts';

const N = 20_000;

/**
 * A chain in which each stage depends on the next one listed (s0 on s1, ..., s(N-2) on s(N-1)): the
 * search from s0 goes N stages deep. `closeCycle`: s(N-1) depends on s0.
 */
function chain(closeCycle: boolean) {
  return Workflow.parse({
    id: 'long',
    name: 'Long',
    stages: Array.from({ length: N }, (_, i) => ({
      name: `s${i}`,
      depends_on: i === N - 1 ? (closeCycle ? ['s0'] : []) : [`s${i + 1}`],
      analyzers: [{ id: 'x' }],
    })),
    final_stage_name: 's0',
  });
}

/**
 * Regression: a 20,000-stage depends_on chain overflowed the call stack in the DAG compile (the
 * cycle search was recursive), and the validate endpoint answered 500.
 */
describe('compileWorkflow on a 20,000-stage depends_on chain', () => {
  it('compiles it without overflowing the stack', () => {
    const c = compileWorkflow(chain(false));
    expect(c.stages).toHaveLength(N);
    expect(c.stages[0]!.deps).toEqual([1]);
    expect(c.stages[N - 1]!.dependents).toEqual([N - 2]);
    expect(c.finalStageName).toBe('s0');
  });

  it('refuses the chain closed into a cycle, naming it once', () => {
    let err: unknown;
    try {
      compileWorkflow(chain(true));
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(BadInputError);
    const problems = (err as BadInputError).problems ?? [];
    expect(problems).toHaveLength(1);
    expect(problems[0]!.path).toBe('/stages/19999/depends_on');
    expect(problems[0]!.message).toMatch(/^depends_on forms a cycle: s0 -> s1 -> s2 -> /);
    expect(problems[0]!.message).toMatch(/ -> s19999 -> s0$/);
  });
});
