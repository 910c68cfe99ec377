import {
  AnalysisContext,
  AnalysisResult,
  StageAggregate,
  Trace,
  type WorkflowInput,
} from '@trawl/contracts';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { runWorkflow } from '../../src/index.ts';
import { type Behaviour, compile, email, harness } from './helpers/fixtures.ts';

const IDS = ['a0', 'a1', 'a2', 'a3', 'a4', 'a5'];

const behaviour: fc.Arbitrary<Behaviour> = fc.oneof(
  {
    weight: 12,
    arbitrary: fc.record({
      ms: fc.integer({ min: 0, max: 120 }),
      answer: fc.record({
        is_phishing: fc.boolean(),
        confidence: fc.double({ min: 0, max: 1, noNaN: true }),
        indicators: fc.array(
          fc.record({
            type: fc.constantFrom('suspicious_url', 'urgency_language'),
            value: fc.constantFrom('x', 'y'),
            confidence: fc.double({ min: 0, max: 1, noNaN: true }),
          }),
          { maxLength: 3 },
        ),
      }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({ ms: fc.integer({ min: 0, max: 120 }), error: fc.constant('HTTP 500') }),
  },
  { weight: 1, arbitrary: fc.constant({ hang: true as const }) },
  {
    weight: 1,
    arbitrary: fc.record({
      ms: fc.integer({ min: 0, max: 50 }),
      answer: fc.constant({ confidence: 'high' }),
    }),
  },
);

const analyzerRef = (id: string) =>
  fc.record(
    {
      id: fc.constant(id),
      weight: fc.double({ min: 0, max: 1, noNaN: true }),
      timeout_ms: fc.integer({ min: 5, max: 300 }),
      required: fc.integer({ min: 0, max: 9 }).map((x) => x < 2),
      failure_strategy: fc.constantFrom('skip', 'retry', 'fail'),
      retry_config: fc.record({
        max_attempts: fc.integer({ min: 1, max: 3 }),
        backoff_ms: fc.integer({ min: 0, max: 40 }),
        max_backoff_ms: fc.constant(100),
        exponential_backoff: fc.boolean(),
      }),
      condition: fc.constantFrom(null, 'true', 'false', 'size(email.attachments) == 0'),
    },
    { requiredKeys: ['id'] },
  );

const stageArb = (i: number) =>
  fc
    .record({
      deps: fc.option(fc.subarray(Array.from({ length: i }, (_, k) => `s${k}`)), {
        nil: undefined,
      }),
      type: fc.constantFrom('parallel', 'sequential', 'conditional'),
      condRef: fc.integer({ min: 0, max: 5 }),
      condKind: fc.constantFrom('true', 'false', 'ref', 'ghost'),
      continue_on_failure: fc.boolean(),
      aggregation_method: fc.constantFrom('weighted_average', 'max_confidence', 'majority_vote'),
      ids: fc.uniqueArray(fc.constantFrom(...IDS), { minLength: 1, maxLength: 3 }),
      minFrac: fc.double({ min: 0, max: 1, noNaN: true }),
    })
    .chain((s) => fc.tuple(fc.constant(s), fc.tuple(...s.ids.map((id) => analyzerRef(id)))))
    .map(([s, analyzers]) => {
      // A condition may name only an upstream stage (checked when the workflow compiles).
      const upstream = s.deps ?? (i > 0 ? [`s${i - 1}`] : []);
      const ref = upstream.length > 0 ? upstream[s.condRef % upstream.length] : undefined;
      const condition =
        s.condKind === 'ref'
          ? ref === undefined
            ? 'true'
            : `stages.${ref}.result.probability >= 0.5`
          : s.condKind === 'ghost'
            ? // a missing key: an error at run time, treated as false
              'email.ghost.confidence > 0.1'
            : s.condKind;
      return {
        name: `s${i}`,
        type: s.type,
        ...(s.deps === undefined ? {} : { depends_on: s.deps }),
        ...(s.type === 'conditional' ? { condition } : {}),
        continue_on_failure: s.continue_on_failure,
        aggregation_method: s.aggregation_method,
        min_successful_analyzers:
          Math.floor(s.minFrac * (analyzers.length + 1)) % (analyzers.length + 1),
        analyzers,
      };
    });

const workflowArb = fc.integer({ min: 1, max: 5 }).chain((n) =>
  fc.record({
    stages: fc.tuple(...Array.from({ length: n }, (_, i) => stageArb(i))),
    timeout_ms: fc.integer({ min: 50, max: 1500 }),
    max_parallel_analyzers: fc.option(fc.integer({ min: 1, max: 4 }), { nil: undefined }),
    confidence_threshold: fc.double({ min: 0, max: 1, noNaN: true }),
    finalIdx: fc.option(fc.integer({ min: 0, max: n - 1 }), { nil: undefined }),
  }),
);

describe('property: random valid workflows', () => {
  it('hold every invariant of the engine', async () => {
    await fc.assert(
      fc.asyncProperty(
        workflowArb,
        fc.array(behaviour, { minLength: 1, maxLength: 30 }),
        async (w, behaviours) => {
          const input = {
            id: 'prop',
            name: 'Prop',
            timeout_ms: w.timeout_ms,
            confidence_threshold: w.confidence_threshold,
            ...(w.max_parallel_analyzers
              ? { max_parallel_analyzers: w.max_parallel_analyzers }
              : {}),
            ...(w.finalIdx === undefined ? {} : { final_stage_name: `s${w.finalIdx}` }),
            stages: w.stages,
          } as WorkflowInput;
          const wf = compile(input);
          let k = 0;
          const next = (): Behaviour => behaviours[k++ % behaviours.length]!;
          const script = Object.fromEntries(IDS.map((id) => [id, () => next()]));
          const h = harness(script);
          const o = await h.clock.run(runWorkflow(wf, email, h.deps));

          // every run ends completed or failed, with valid shapes
          expect(['completed', 'failed']).toContain(o.status);
          expect(Trace.safeParse(o.trace).success).toBe(true);
          expect(AnalysisContext.safeParse(o.context).success).toBe(true);
          if (o.status === 'completed')
            expect(AnalysisResult.safeParse(o.result).success).toBe(true);
          // every aggregate within bounds
          for (const s of o.trace.stages) {
            if (s.result) {
              expect(StageAggregate.safeParse(s.result).success).toBe(true);
              expect(s.result.probability).toBeGreaterThanOrEqual(0);
              expect(s.result.probability).toBeLessThanOrEqual(1);
            }
            expect(['pending', 'running']).not.toContain(s.status);
          }
          // the deadline holds
          expect(o.trace.duration_ms).toBeLessThanOrEqual(w.timeout_ms);
          // max_parallel_analyzers is never exceeded
          if (w.max_parallel_analyzers)
            expect(h.maxInFlight()).toBeLessThanOrEqual(w.max_parallel_analyzers);
          // dependencies finish before dependents start (event order and time)
          const finishedAt = new Map<string, number>();
          h.events.forEach((e, idx) => {
            if (e.type === 'stage_finished') finishedAt.set(e.stage, idx);
            if (e.type === 'stage_started') {
              for (const d of wf.stages.find((s) => s.name === e.stage)!.deps) {
                const f = finishedAt.get(wf.stages[d]!.name);
                expect(f).toBeDefined();
                expect(f!).toBeLessThan(idx);
              }
            }
          });
          // analyzer calls of a stage start only after its dependencies finished
          for (const c of h.calls) {
            const st = wf.stages.find((s) => s.name === c.stage)!;
            for (const d of st.deps) {
              const dt = o.trace.stages[d]!;
              expect(c.start).toBeGreaterThanOrEqual((dt.started_at_ms ?? 0) + dt.duration_ms);
            }
            // and see only stages that completed before they started
            for (const name of Object.keys(c.context)) {
              const dt = o.trace.stages.find((s) => s.name === name)!;
              if (name !== c.stage)
                expect((dt.started_at_ms ?? 0) + dt.duration_ms).toBeLessThanOrEqual(c.start);
            }
          }
          // no timer is left behind
          expect(h.clock.pending).toBe(0);
        },
      ),
      { numRuns: 300 },
    );
  });
});
