import { AnalysisResult, BadInputError, Trace } from '@trawl/contracts';
import { describe, expect, it } from 'vitest';
import { type RunOutcome, runWorkflow } from '../../src/index.ts';
import { answer, type Behaviour, compile, email, harness } from './helpers/fixtures.ts';

const ok = (isP: boolean, c: number, ms = 10, extra = {}): Behaviour => ({
  ms,
  answer: answer(isP, c, extra),
});
const fail = (msg = 'HTTP 500', ms = 10): Behaviour => ({ ms, error: msg });

function expectValid(o: RunOutcome) {
  expect(Trace.safeParse(o.trace).success).toBe(true);
  if (o.status === 'completed') expect(AnalysisResult.safeParse(o.result).success).toBe(true);
}

function failed(o: RunOutcome) {
  if (o.status !== 'failed') throw new Error(`expected failed, got ${o.status}`);
  return o.error;
}

function completed(o: RunOutcome) {
  if (o.status !== 'completed') throw new Error(`expected completed, got ${JSON.stringify(o)}`);
  return o.result;
}

describe('stage types', () => {
  it('parallel: analyzers start together; the stage lasts as long as the slowest', async () => {
    const h = harness({ a: ok(true, 0.9, 30), b: ok(true, 0.7, 50), c: ok(false, 0.6, 10) });
    const wf = compile({
      id: 'w',
      name: 'W',
      stages: [{ name: 's', analyzers: [{ id: 'a' }, { id: 'b' }, { id: 'c' }] }],
    });
    const o = await h.clock.run(runWorkflow(wf, email, h.deps));
    expectValid(o);
    completed(o);
    expect(h.calls.map((c) => c.start)).toEqual([0, 0, 0]);
    expect(o.trace.stages[0]!.duration_ms).toBe(50);
  });

  it('sequential: one after another in order; later ones do not see earlier ones of the same stage', async () => {
    const h = harness({ a: ok(true, 0.9, 30), b: ok(true, 0.7, 20) });
    const wf = compile({
      id: 'w',
      name: 'W',
      stages: [
        { name: 'first', analyzers: [{ id: 'a' }] },
        { name: 'seq', type: 'sequential', analyzers: [{ id: 'a' }, { id: 'b' }] },
      ],
    });
    const o = await h.clock.run(runWorkflow(wf, email, h.deps));
    completed(o);
    const seq = h.calls.filter((c) => c.stage === 'seq');
    expect(seq.map((c) => [c.id, c.start])).toEqual([
      ['a', 30],
      ['b', 60],
    ]);
    expect(Object.keys(seq[1]!.context)).toEqual(['first']);
  });

  it('conditional: runs when its condition holds, else skipped with the evaluation noted', async () => {
    const h = harness({ triage: ok(true, 0.8), llm: ok(true, 0.95), other: ok(false, 0.9) });
    const wf = compile({
      id: 'w',
      name: 'W',
      stages: [
        { name: 'triage', analyzers: [{ id: 'triage' }] },
        {
          name: 'deep',
          type: 'conditional',
          condition: 'stages.triage.result.confidence >= 0.5',
          analyzers: [{ id: 'llm' }],
        },
        {
          name: 'never',
          type: 'conditional',
          depends_on: ['triage'],
          condition: 'stages.triage.result.confidence < 0.5',
          analyzers: [{ id: 'other' }],
        },
      ],
      final_stage_name: 'deep',
    });
    const o = await h.clock.run(runWorkflow(wf, email, h.deps));
    expect(completed(o).confidence).toBeCloseTo(0.95);
    expect(o.trace.stages.map((s) => [s.status, s.condition])).toEqual([
      ['completed', undefined],
      ['completed', 'true'],
      ['skipped', 'false'],
    ]);
    expect(h.calls.map((c) => c.id)).toEqual(['triage', 'llm']);
  });

  it('a condition that fails at run time (missing field) is false and noted in the trace', async () => {
    const h = harness({ a: ok(true, 0.8), b: ok(true, 0.9) });
    const wf = compile({
      id: 'w',
      name: 'W',
      stages: [
        { name: 's1', analyzers: [{ id: 'a' }] },
        {
          name: 's2',
          type: 'conditional',
          condition: 'stages.s1.result.ghost > 0.1',
          analyzers: [{ id: 'b' }],
        },
      ],
    });
    const o = await h.clock.run(runWorkflow(wf, email, h.deps));
    completed(o);
    expect(o.trace.stages[1]!.status).toBe('skipped');
    expect(o.trace.stages[1]!.condition).toMatch(/^error \(treated as false\): .*ghost/);
    // the final stage was skipped: the result is its nearest completed ancestor's
    expect(o.trace.final_stage).toBe('s1');
  });

  it('conditions see email (optional lists default to empty) and stages.<name>.result / analyzers', async () => {
    const h = harness({ a: ok(true, 0.8), b: ok(true, 0.9), c: ok(true, 0.9), d: ok(true, 0.9) });
    const wf = compile({
      id: 'w',
      name: 'W',
      stages: [
        { name: 'triage', analyzers: [{ id: 'a' }] },
        {
          name: 'next',
          analyzers: [
            { id: 'b', condition: 'size(email.attachments) > 0' },
            {
              id: 'c',
              condition:
                'email.headers.subject.contains("locked") && stages.triage.result.is_phishing',
            },
            {
              id: 'd',
              condition:
                'stages.triage.analyzers.a.status == "success" && size(email.headers.cc) == 0',
            },
          ],
        },
      ],
    });
    const o = await h.clock.run(runWorkflow(wf, email, h.deps));
    completed(o);
    expect(o.trace.stages[1]!.analyzers.map((c) => c.status)).toEqual([
      'skipped',
      'success',
      'success',
    ]);
    expect(o.trace.stages[1]!.analyzers[0]!.error).toBe('condition is false');
  });
  it('an analyzer condition that errors is false and noted; an all-skipped stage calls no provider', async () => {
    const h = harness({ a: ok(true, 0.8), b: ok(true, 0.9) });
    const wf = compile({
      id: 'w',
      name: 'W',
      stages: [
        { name: 's1', analyzers: [{ id: 'a', condition: 'email.language == "en"' }, { id: 'b' }] },
        {
          name: 's2',
          context_providers: [{ id: 'p', required: true }],
          analyzers: [{ id: 'a', condition: 'stages.s1.result.probability > 0.99' }],
        },
      ],
    });
    const o = await h.clock.run(runWorkflow(wf, email, h.deps));
    completed(o);
    expect(o.trace.stages[0]!.analyzers[0]).toMatchObject({
      status: 'skipped',
      error: expect.stringMatching(/^condition error \(treated as false\): .*language/),
    });
    expect(o.trace.stages[1]!.status).toBe('skipped');
    expect(h.providerCalls).toHaveLength(0);
  });
});

describe('DAG and analysis_context', () => {
  it('stages without mutual dependencies run concurrently; dependents wait for all their dependencies', async () => {
    const h = harness({ a: ok(true, 0.8, 40), b: ok(true, 0.8, 10), c: ok(true, 0.8, 5) });
    const wf = compile({
      id: 'w',
      name: 'W',
      stages: [
        { name: 'A', analyzers: [{ id: 'a' }] },
        { name: 'B', depends_on: [], analyzers: [{ id: 'b' }] },
        { name: 'C', depends_on: ['A', 'B'], analyzers: [{ id: 'c' }] },
      ],
    });
    const o = await h.clock.run(runWorkflow(wf, email, h.deps));
    completed(o);
    expect(h.calls.map((c) => [c.id, c.start])).toEqual([
      ['a', 0],
      ['b', 0],
      ['c', 40],
    ]);
    expect(Object.keys(h.calls[2]!.context).sort()).toEqual(['A', 'B']);
  });

  it('each call sees only the stages completed when it starts', async () => {
    const h = harness({
      fast: ok(true, 0.8, 10),
      slow: ok(true, 0.8, 100),
      after: ok(true, 0.8, 10),
    });
    const wf = compile({
      id: 'w',
      name: 'W',
      stages: [
        { name: 'F', analyzers: [{ id: 'fast' }] },
        { name: 'S', depends_on: [], analyzers: [{ id: 'slow' }] },
        { name: 'G', depends_on: ['F'], analyzers: [{ id: 'after' }] },
      ],
      final_stage_name: 'G',
    });
    const o = await h.clock.run(runWorkflow(wf, email, h.deps));
    completed(o);
    const g = h.calls.find((c) => c.id === 'after')!;
    expect(Object.keys(g.context)).toEqual(['F']);
    expect(g.context.F).toMatchObject({
      providers: {},
      analyzers: { fast: { status: 'success', confidence: 0.8 } },
    });
    expect(Object.keys(o.context).sort()).toEqual(['F', 'G', 'S']);
    // the caller's own analysis_context is ignored
    const h2 = harness({ fast: ok(true, 0.8) });
    await h2.clock.run(
      runWorkflow(
        compile({ id: 'w', name: 'W', stages: [{ name: 'F', analyzers: [{ id: 'fast' }] }] }),
        { ...email, analysis_context: { forged: 1 } },
        h2.deps,
      ),
    );
    expect(h2.calls[0]!.context).toEqual({});
  });
});

describe('context providers', () => {
  it('run in parallel before the analyzers; data lands under analysis_context.<stage>.providers.<id>', async () => {
    const h = harness(
      { a: ok(true, 0.8, 10), b: ok(true, 0.8, 10) },
      {
        whois: { ms: 30, answer: { provider_id: 'whois', data: { age_days: 3 } } },
        vip: { ms: 20, answer: { provider_id: 'vip', data: { vips: ['ceo@x.test'] } } },
      },
    );
    const wf = compile({
      id: 'w',
      name: 'W',
      stages: [
        {
          name: 'enrich',
          context_providers: [{ id: 'whois' }, { id: 'vip' }],
          analyzers: [{ id: 'a' }],
        },
        { name: 'next', analyzers: [{ id: 'b' }] },
      ],
    });
    const o = await h.clock.run(runWorkflow(wf, email, h.deps));
    completed(o);
    expect(h.providerCalls.map((c) => c.start)).toEqual([0, 0]);
    expect(h.calls[0]!.start).toBe(30);
    // the stage's own analyzers see its provider data (but no analyzer results of their stage)
    expect(h.calls[0]!.context).toEqual({
      enrich: {
        providers: { whois: { age_days: 3 }, vip: { vips: ['ceo@x.test'] } },
        analyzers: {},
      },
    });
    expect((h.calls[1]!.context.enrich as { providers: unknown }).providers).toEqual({
      whois: { age_days: 3 },
      vip: { vips: ['ceo@x.test'] },
    });
    expect(o.trace.stages[0]!.providers.map((p) => p.status)).toEqual(['success', 'success']);
  });

  it('a required provider failure fails the stage; an optional one does not', async () => {
    const mk = (required: boolean) =>
      compile({
        id: 'w',
        name: 'W',
        stages: [
          { name: 'enrich', context_providers: [{ id: 'p', required }], analyzers: [{ id: 'a' }] },
        ],
      });
    const h = harness({ a: ok(true, 0.8) }, { p: fail('HTTP 503') });
    const bad = await h.clock.run(runWorkflow(mk(true), email, h.deps));
    expect(failed(bad)).toMatchObject({ code: 'TRAWL_ERR_STAGE_FAILED', stage: 'enrich' });
    expect(failed(bad).message).toMatch(/required context provider p failed: HTTP 503/);
    expect(h.calls).toHaveLength(0);
    const h2 = harness({ a: ok(true, 0.8) }, { p: { ms: 1, answer: { nope: true } } });
    const good = await h2.clock.run(runWorkflow(mk(false), email, h2.deps));
    completed(good);
    expect(good.trace.stages[0]!.providers[0]).toMatchObject({
      status: 'failed',
      error: expect.stringMatching(/invalid answer/),
    });
  });
});

describe('failure strategies', () => {
  const stage = (analyzers: object[], extra = {}) =>
    compile({
      id: 'w',
      name: 'W',
      stages: [{ name: 's', analyzers: analyzers as never, ...extra }],
    });

  it('skip: the failed analyzer is dropped, the stage completes with the others', async () => {
    const h = harness({ a: ok(true, 0.9), b: fail() });
    const o = await h.clock.run(runWorkflow(stage([{ id: 'a' }, { id: 'b' }]), email, h.deps));
    expect(completed(o).confidence).toBeCloseTo(0.9);
    expect(o.trace.stages[0]!.analyzers[1]).toMatchObject({
      id: 'b',
      status: 'failed',
      attempts: 1,
      error: 'HTTP 500',
    });
    expect(o.context.s!.analyzers.b).toMatchObject({
      status: 'failed',
      analyzer_details: { error: 'HTTP 500' },
    });
  });

  it('retry: exponential backoff with jitter, then success', async () => {
    const h = harness({ a: (n) => (n < 3 ? fail('flaky', 5) : ok(true, 0.9, 5)) });
    const o = await h.clock.run(
      runWorkflow(stage([{ id: 'a', failure_strategy: 'retry' }]), email, h.deps),
    );
    completed(o);
    // random() = 0.5: delays 200*0.75 = 150 then 400*0.75 = 300
    expect(h.calls.map((c) => c.start)).toEqual([0, 155, 460]);
    expect(o.trace.stages[0]!.analyzers[0]).toMatchObject({
      status: 'success',
      attempts: 3,
      duration_ms: 465,
    });
  });

  it('retry exhausted: behaves as skip, or as fail when required', async () => {
    const h = harness({ a: fail('down', 1), b: ok(false, 0.9) });
    const rc = { max_attempts: 2, backoff_ms: 10, max_backoff_ms: 10, exponential_backoff: false };
    const o = await h.clock.run(
      runWorkflow(
        stage([{ id: 'a', failure_strategy: 'retry', retry_config: rc }, { id: 'b' }]),
        email,
        h.deps,
      ),
    );
    completed(o);
    expect(o.trace.stages[0]!.analyzers[0]).toMatchObject({
      status: 'failed',
      attempts: 2,
      error: 'down (after 2 attempt(s))',
    });
    const h2 = harness({ a: fail('down', 1), b: ok(false, 0.9, 1000) });
    const o2 = await h2.clock.run(
      runWorkflow(
        stage([
          { id: 'a', failure_strategy: 'retry', retry_config: rc, required: true },
          { id: 'b' },
        ]),
        email,
        h2.deps,
      ),
    );
    expect(failed(o2)).toMatchObject({ code: 'TRAWL_ERR_STAGE_FAILED', stage: 's', analyzer: 'a' });
    expect(h2.calls.find((c) => c.id === 'b')!.aborted).toBe(true);
  });

  it('retry stops at a BadInputError (the analyzer refused the email)', async () => {
    const h = harness({
      a: { ms: 1, error: new BadInputError('X', 'HTTP 422') },
      b: ok(false, 0.9),
    });
    const o = await h.clock.run(
      runWorkflow(stage([{ id: 'a', failure_strategy: 'retry' }, { id: 'b' }]), email, h.deps),
    );
    completed(o);
    expect(o.trace.stages[0]!.analyzers[0]!.attempts).toBe(1);
  });

  it('fail: fails the stage at once and aborts its other calls', async () => {
    const h = harness({ a: fail('boom', 10), b: ok(true, 0.9, 1000) });
    const o = await h.clock.run(
      runWorkflow(stage([{ id: 'a', failure_strategy: 'fail' }, { id: 'b' }]), email, h.deps),
    );
    expect(failed(o)).toEqual({
      code: 'TRAWL_ERR_STAGE_FAILED',
      message: 'stage s failed: analyzer a failed (failure_strategy fail): boom',
      stage: 's',
      analyzer: 'a',
    });
    expect(o.trace.duration_ms).toBe(10);
    expect(h.calls[1]!.aborted).toBe(true);
    expect(o.trace.stages[0]!.status).toBe('failed');
    expect(o.trace.stages[0]!.analyzers[1]).toMatchObject({
      status: 'failed',
      error: 'cancelled: analyzer a failed (failure_strategy fail): boom',
    });
  });

  it('a required analyzer with skip still fails the stage', async () => {
    const h = harness({ a: fail(), b: ok(true, 0.9) });
    const o = await h.clock.run(
      runWorkflow(stage([{ id: 'a', required: true }, { id: 'b' }]), email, h.deps),
    );
    expect(failed(o).message).toMatch(/required analyzer a failed/);
  });

  it('continue_on_failure false: any failure fails the stage', async () => {
    const h = harness({ a: fail(), b: ok(true, 0.9) });
    const o = await h.clock.run(
      runWorkflow(stage([{ id: 'a' }, { id: 'b' }], { continue_on_failure: false }), email, h.deps),
    );
    expect(failed(o).message).toMatch(/continue_on_failure is false/);
  });

  it('a failed stage fails the job and stops the stages after it', async () => {
    const h = harness({ a: fail(), b: ok(true, 0.9) });
    const wf = compile({
      id: 'w',
      name: 'W',
      stages: [
        { name: 's1', analyzers: [{ id: 'a', required: true }] },
        { name: 's2', analyzers: [{ id: 'b' }] },
      ],
    });
    const o = await h.clock.run(runWorkflow(wf, email, h.deps));
    failed(o);
    expectValid(o);
    expect(o.trace.stages[1]).toMatchObject({
      status: 'skipped',
      error: 'not started: the job failed first',
    });
    expect(h.calls.map((c) => c.id)).toEqual(['a']);
  });

  it('min_successful_analyzers: too few successes fail the stage', async () => {
    const three = [{ id: 'a' }, { id: 'b' }, { id: 'c' }];
    const h = harness({ a: fail(), b: ok(true, 0.9), c: ok(true, 0.8) });
    completed(
      await h.clock.run(runWorkflow(stage(three, { min_successful_analyzers: 2 }), email, h.deps)),
    );
    const h2 = harness({ a: fail(), b: fail(), c: ok(true, 0.8) });
    const o = await h2.clock.run(
      runWorkflow(stage(three, { min_successful_analyzers: 2 }), email, h2.deps),
    );
    expect(failed(o).message).toMatch(
      /only 1 of 3 analyzer\(s\) succeeded; min_successful_analyzers is 2/,
    );
    // default min 1: every analyzer failing fails the stage
    const h3 = harness({ a: fail(), b: fail(), c: fail() });
    failed(await h3.clock.run(runWorkflow(stage(three), email, h3.deps)));
  });

  it('analyzers skipped by their condition do not count: the minimum shrinks to those that ran', async () => {
    const h = harness({ a: ok(true, 0.9), b: ok(true, 0.8) });
    const o = await h.clock.run(
      runWorkflow(
        stage([{ id: 'a' }, { id: 'b', condition: 'false' }], { min_successful_analyzers: 2 }),
        email,
        h.deps,
      ),
    );
    completed(o);
    const h2 = harness({ a: ok(true, 0.9) });
    const o2 = await h2.clock.run(
      runWorkflow(
        compile({
          id: 'w',
          name: 'W',
          stages: [
            { name: 'first', analyzers: [{ id: 'a' }] },
            {
              name: 'gated',
              analyzers: [
                { id: 'b', condition: 'false' },
                { id: 'c', condition: 'stages.first.result.probability > 0.95' },
              ],
            },
          ],
        }),
        email,
        h2.deps,
      ),
    );
    completed(o2);
    expect(o2.trace.stages[1]!.status).toBe('skipped');
    expect(o2.trace.final_stage).toBe('first');
    expect(Object.keys(o2.context)).toEqual(['first']);
  });
});

describe('timeouts and cancellation', () => {
  it('an attempt past its timeout is a timeout; the callee is aborted; default from deps', async () => {
    const h = harness(
      { a: { hang: true }, b: ok(true, 0.9, 10) },
      {},
      { defaultAnalyzerTimeoutMs: 500 },
    );
    const wf = compile({
      id: 'w',
      name: 'W',
      stages: [{ name: 's', analyzers: [{ id: 'a' }, { id: 'b', timeout_ms: 5 }] }],
    });
    const o = await h.clock.run(runWorkflow(wf, email, h.deps));
    expect(failed(o).message).toMatch(/only 0 of 2/);
    expect(o.trace.stages[0]!.analyzers).toMatchObject([
      { id: 'a', status: 'timeout', error: 'timed out after 500 ms', duration_ms: 500 },
      { id: 'b', status: 'timeout', error: 'timed out after 5 ms', duration_ms: 5 },
    ]);
    expect(h.calls.map((c) => [c.timeoutMs, c.aborted])).toEqual([
      [500, true],
      [5, true],
    ]);
  });

  it('a timed-out attempt is retried under retry', async () => {
    const h = harness({ a: (n) => (n === 1 ? { hang: true } : ok(true, 0.9, 1)) });
    const wf = compile({
      id: 'w',
      name: 'W',
      stages: [{ name: 's', analyzers: [{ id: 'a', timeout_ms: 100, failure_strategy: 'retry' }] }],
    });
    const o = await h.clock.run(runWorkflow(wf, email, h.deps));
    completed(o);
    expect(o.trace.stages[0]!.analyzers[0]).toMatchObject({ status: 'success', attempts: 2 });
  });

  it('the workflow deadline bounds the run, aborts in-flight calls, even ones that ignore their signal', async () => {
    const h = harness({ a: ok(true, 0.9, 50), slow: { hang: true, ignoreAbort: true } });
    const wf = compile({
      id: 'w',
      name: 'W',
      timeout_ms: 200,
      stages: [
        { name: 's1', analyzers: [{ id: 'a' }] },
        { name: 's2', analyzers: [{ id: 'slow', timeout_ms: 10_000 }] },
        { name: 's3', analyzers: [{ id: 'a' }] },
      ],
    });
    const o = await h.clock.run(runWorkflow(wf, email, h.deps));
    expect(failed(o)).toMatchObject({ code: 'TRAWL_ERR_DEADLINE' });
    expectValid(o);
    expect(o.trace.duration_ms).toBe(200);
    expect(o.trace.stages.map((s) => s.status)).toEqual(['completed', 'failed', 'skipped']);
    expect(o.trace.stages[1]!.analyzers[0]).toMatchObject({
      status: 'timeout',
      error: expect.stringMatching(/^cancelled: the workflow did not finish/),
    });
    expect(h.calls[1]!.aborted).toBe(true);
    expect(h.clock.pending).toBe(0);
  });

  it('a callee reading its signal only late finds it aborted after a timeout, untouched after an answer', async () => {
    const kept: Record<string, { signal: AbortSignal }> = {};
    const h = harness({});
    const deps = {
      ...h.deps,
      callAnalyzer: (id: string, _m: unknown, o: { signal: AbortSignal }) => {
        kept[id] = o;
        return id === 'hang' ? new Promise<never>(() => {}) : Promise.resolve(answer(true, 0.9));
      },
    };
    const wf = compile({
      id: 'w',
      name: 'W',
      stages: [{ name: 's', analyzers: [{ id: 'hang', timeout_ms: 50 }, { id: 'fast' }] }],
    });
    const o = await h.clock.run(runWorkflow(wf, email, deps));
    completed(o);
    expect(kept.hang!.signal.aborted).toBe(true);
    expect(kept.hang!.signal.reason).toEqual({
      kind: 'cancelled',
      message: 'timed out after 50 ms',
    });
    expect(kept.fast!.signal.aborted).toBe(false);
  });

  it('a caller abort cancels the run', async () => {
    const ac = new AbortController();
    const h = harness({ a: { hang: true } });
    const wf = compile({ id: 'w', name: 'W', stages: [{ name: 's', analyzers: [{ id: 'a' }] }] });
    h.clock.setTimeout(() => ac.abort(), 30);
    const o = await h.clock.run(runWorkflow(wf, email, h.deps, { signal: ac.signal }));
    expect(failed(o).code).toBe('TRAWL_ERR_WORKFLOW_CANCELLED');
    expect(o.trace.duration_ms).toBe(30);
  });

  it('max_parallel_analyzers caps calls in flight across the whole run', async () => {
    const h = harness({
      a: ok(true, 0.9, 10),
      b: ok(true, 0.9, 20),
      c: ok(true, 0.9, 30),
      d: ok(true, 0.9, 5),
    });
    const wf = compile({
      id: 'w',
      name: 'W',
      max_parallel_analyzers: 2,
      stages: [
        { name: 's1', analyzers: [{ id: 'a' }, { id: 'b' }, { id: 'c' }] },
        { name: 's2', depends_on: [], analyzers: [{ id: 'd' }, { id: 'c' }] },
      ],
      final_stage_name: 's1',
    });
    const o = await h.clock.run(runWorkflow(wf, email, h.deps));
    completed(o);
    expect(h.calls).toHaveLength(5);
    expect(h.maxInFlight()).toBe(2);
  });
});

describe('answers', () => {
  it("a malformed answer, a throw and a synchronous throw are that analyzer's failure", async () => {
    const h = harness({
      garbage: { ms: 1, answer: { is_phishing: 'yes', confidence: 7 } },
      good: ok(true, 0.9),
      none: { ms: 1, answer: null },
    });
    const deps = { ...h.deps };
    const call = deps.callAnalyzer;
    deps.callAnalyzer = (id, m, o) => {
      if (id === 'sync') throw new Error('sync boom');
      return call(id, m, o);
    };
    const wf = compile({
      id: 'w',
      name: 'W',
      stages: [
        {
          name: 's',
          analyzers: [{ id: 'garbage' }, { id: 'good' }, { id: 'sync' }, { id: 'none' }],
        },
      ],
    });
    const o = await h.clock.run(runWorkflow(wf, email, deps));
    completed(o);
    const tr = o.trace.stages[0]!.analyzers;
    expect(tr[0]!.error).toMatch(/^invalid answer: \/is_phishing/);
    expect(tr[2]).toMatchObject({ status: 'failed', error: 'sync boom' });
    expect(tr[3]!.error).toMatch(/^invalid answer/);
  });

  it('fills threat_level of an answer without one; marks cached answers', async () => {
    const h = harness({ a: { ms: 0, answer: { ...answer(true, 0.95), cached: true } } });
    const wf = compile({ id: 'w', name: 'W', stages: [{ name: 's', analyzers: [{ id: 'a' }] }] });
    const o = await h.clock.run(runWorkflow(wf, email, h.deps, { configVersion: 'abc' }));
    completed(o);
    expect(o.context.s!.analyzers.a).toMatchObject({
      threat_level: 'critical',
      cached: true,
      attempts: 1,
    });
    expect(o.trace.stages[0]!.analyzers[0]!.cached).toBe(true);
    expect(o.trace.config_version).toBe('abc');
  });

  it('validatedAnswers: answers parsed by the caller give the same run, cached ones still marked', async () => {
    const script = {
      a: ok(true, 0.9, 10, {
        summary: 'a says so',
        indicators: [{ type: 'rule_match', value: 'R1', confidence: 0.8 }],
        analyzer_details: { symbols: ['R1'] },
      }),
      b: { ms: 5, answer: { ...answer(false, 0.7), cached: true } },
    };
    const providers = { p: { ms: 2, answer: { provider_id: 'p', data: { n: 1 } } } };
    const wf = compile({
      id: 'w',
      name: 'W',
      stages: [
        { name: 's1', context_providers: [{ id: 'p' }], analyzers: [{ id: 'a' }, { id: 'b' }] },
        { name: 's2', analyzers: [{ id: 'a' }] },
      ],
    });
    const parsed = harness(script, providers);
    const trusted = harness(script, providers, { validatedAnswers: true });
    const o1 = await parsed.clock.run(runWorkflow(wf, email, parsed.deps));
    const o2 = await trusted.clock.run(runWorkflow(wf, email, trusted.deps));
    expectValid(o2);
    expect(o2).toEqual(o1);
    expect(o2.context.s1!.providers).toEqual({ p: { n: 1 } });
    expect(o2.trace.stages[0]!.analyzers[1]!.cached).toBe(true);
  });
});

describe('final result', () => {
  it('uses final_stage_name; default is the last stage in the list', async () => {
    const h = harness({ a: ok(true, 0.9), b: ok(false, 0.9) });
    const base = {
      id: 'w',
      name: 'W',
      stages: [
        { name: 's1', analyzers: [{ id: 'a' }] },
        { name: 's2', analyzers: [{ id: 'b' }] },
      ],
    };
    const o = await h.clock.run(runWorkflow(compile(base), email, h.deps));
    expect(completed(o).is_phishing).toBe(false);
    expect(o.trace.final_stage).toBe('s2');
    const o2 = await h.clock.run(
      runWorkflow(compile({ ...base, final_stage_name: 's1' }), email, h.deps),
    );
    expect(completed(o2).is_phishing).toBe(true);
  });

  it('a skipped final stage falls back to the nearest completed ancestor (BFS over depends_on)', async () => {
    const h = harness({ near: ok(true, 0.6), far: ok(true, 0.99), x: ok(true, 0.5) });
    const wf = compile({
      id: 'w',
      name: 'W',
      stages: [
        { name: 'far', analyzers: [{ id: 'far' }] },
        { name: 'mid', type: 'conditional', condition: 'false', analyzers: [{ id: 'x' }] },
        { name: 'near', depends_on: [], analyzers: [{ id: 'near' }] },
        {
          name: 'final',
          type: 'conditional',
          depends_on: ['mid', 'near'],
          condition: 'false',
          analyzers: [{ id: 'x' }],
        },
      ],
    });
    const o = await h.clock.run(runWorkflow(wf, email, h.deps));
    expect(completed(o).confidence).toBeCloseTo(0.6);
    expect(o.trace.final_stage).toBe('near');
  });

  it('no completed ancestor: the job fails with a clear code', async () => {
    const h = harness({ x: ok(true, 0.5) });
    const wf = compile({
      id: 'w',
      name: 'W',
      stages: [{ name: 'only', type: 'conditional', condition: 'false', analyzers: [{ id: 'x' }] }],
    });
    const o = await h.clock.run(runWorkflow(wf, email, h.deps));
    expect(failed(o).code).toBe('TRAWL_ERR_WORKFLOW_NO_RESULT');
  });
});

describe('trace and events', () => {
  it('records every stage and analyzer with status, attempts, durations, and emits events', async () => {
    const h = harness({ a: ok(true, 0.9, 10), b: ok(true, 0.7, 20) });
    const wf = compile({
      id: 'w',
      name: 'W',
      stages: [
        { name: 's1', analyzers: [{ id: 'a' }] },
        { name: 's2', analyzers: [{ id: 'b' }] },
      ],
    });
    const o = await h.clock.run(runWorkflow(wf, email, h.deps));
    completed(o);
    expectValid(o);
    expect(o.trace).toMatchObject({
      workflow_id: 'w',
      duration_ms: 30,
      final_stage: 's2',
      stages: [
        {
          name: 's1',
          status: 'completed',
          started_at_ms: 0,
          duration_ms: 10,
          analyzers: [{ id: 'a', status: 'success', attempts: 1, duration_ms: 10 }],
          result: { probability: 0.9 },
        },
        { name: 's2', status: 'completed', started_at_ms: 10, duration_ms: 20 },
      ],
    });
    expect(h.events.map((e) => `${e.at}:${e.type}`)).toEqual([
      '0:stage_started',
      '0:analyzer_started',
      '10:analyzer_finished',
      '10:stage_finished',
      '10:stage_started',
      '10:analyzer_started',
      '30:analyzer_finished',
      '30:stage_finished',
    ]);
  });

  it('a throwing event listener does not break the run', async () => {
    const h = harness(
      { a: ok(true, 0.9) },
      {},
      {
        onEvent: () => {
          throw new Error('listener bug');
        },
      },
    );
    const wf = compile({ id: 'w', name: 'W', stages: [{ name: 's', analyzers: [{ id: 'a' }] }] });
    completed(await h.clock.run(runWorkflow(wf, email, h.deps)));
  });
});

describe('real clock', () => {
  it('runs on real timers by default: tiny real delays complete, a hang hits the deadline', async () => {
    const sleepReal = (ms: number) => new Promise((r) => setTimeout(r, ms));
    const deps = {
      callAnalyzer: async (id: string, _m: unknown, o: { signal: AbortSignal }) => {
        if (id === 'hang') return new Promise<never>(() => {});
        await sleepReal(2);
        if (o.signal.aborted) throw new Error('aborted');
        return answer(true, 0.8);
      },
      callProvider: async () => ({ provider_id: 'p', data: {} }),
    };
    const ok1 = compile({
      id: 'w',
      name: 'W',
      stages: [{ name: 's', analyzers: [{ id: 'a' }, { id: 'b' }] }],
    });
    expect((await runWorkflow(ok1, email, deps)).status).toBe('completed');
    const hang = compile({
      id: 'w',
      name: 'W',
      timeout_ms: 30,
      stages: [{ name: 's', analyzers: [{ id: 'hang' }] }],
    });
    const o = await runWorkflow(hang, email, deps);
    expect(failed(o).code).toBe('TRAWL_ERR_DEADLINE');
  });
});

describe('analyzers that are off (issue 32: disabled means skipped)', () => {
  const notConfigured = Object.assign(new Error('llm_host is not set'), {
    code: 'TRAWL_ERR_LLM_NOT_CONFIGURED',
  });
  const wf = () =>
    compile({
      id: 'w',
      name: 'W',
      stages: [
        { name: 'score', analyzers: [{ id: 'a' }] },
        {
          name: 'llm',
          type: 'conditional',
          condition: 'true',
          min_successful_analyzers: 1,
          analyzers: [{ id: 'llm' }],
        },
      ],
    });

  it('skips a stage whose analyzer is disabled, without calling it, and keeps the verdict', async () => {
    const h = harness({ a: ok(true, 0.8), llm: ok(false, 0.99) });
    const o = await h.clock.run(
      runWorkflow(wf(), email, { ...h.deps, configured: (id) => id !== 'llm' }),
    );
    expectValid(o);
    expect(completed(o).is_phishing).toBe(true);
    expect(h.calls.map((c) => c.id)).toEqual(['a']);
    const llm = o.trace.stages[1]!;
    expect(llm).toMatchObject({ status: 'skipped', reason: 'not configured' });
    expect(llm.analyzers[0]).toMatchObject({ status: 'skipped', error: 'not configured' });
    expect(o.trace.final_stage).toBe('score');
  });

  it('skips, never fails, a stage whose analyzer answers a *_NOT_CONFIGURED error', async () => {
    const h = harness({ a: ok(true, 0.8), llm: { error: notConfigured } });
    const o = await h.clock.run(runWorkflow(wf(), email, h.deps));
    expectValid(o);
    completed(o);
    expect(o.trace.stages[1]).toMatchObject({ status: 'skipped', reason: 'not configured' });
    expect(o.trace.stages[1]!.analyzers[0]).toMatchObject({
      status: 'skipped',
      error: 'not configured',
    });
  });

  it('still fails a stage whose analyzer really failed', async () => {
    const h = harness({ a: ok(true, 0.8), llm: fail('HTTP 500') });
    const o = await h.clock.run(runWorkflow(wf(), email, h.deps));
    expect(failed(o).stage).toBe('llm');
  });
});
