import {
  type AnalysisContext,
  type AnalysisResult,
  AnalyzerAnswer,
  type AnalyzerResult,
  BadInputError,
  type CallTrace,
  type Email,
  type EnrichmentResult,
  EnrichmentResult as EnrichmentResultSchema,
  type EnrichRequest,
  type JobError,
  type StageAggregate,
  type StageContext,
  type StageTrace,
  type Trace,
  type VerdictThresholds,
} from '@trawl/contracts';
import { type AggregateInput, aggregate, DEFAULT_THRESHOLDS, verdictFor } from './aggregate.ts';
import { backoffDelay } from './backoff.ts';
import { type Clock, realClock, sleep } from './clock.ts';
import type { CompiledAnalyzer, CompiledStage, CompiledWorkflow } from './compile.ts';
import { WORKFLOW_ERROR_CODES } from './errors.ts';
import type { EngineEvent } from './events.ts';
import { Semaphore } from './semaphore.ts';

export const DEFAULT_ANALYZER_TIMEOUT_MS = 30_000;

/** An answer may carry `cached: true` (set by a caching caller) so the trace can say so. */
export type AnalyzerCallAnswer = AnalyzerAnswer & { cached?: boolean };

export interface EngineDeps {
  callAnalyzer(
    id: string,
    email: Email,
    o: { signal: AbortSignal; timeoutMs: number; stage: string; attempt: number },
  ): Promise<AnalyzerCallAnswer>;
  callProvider(
    id: string,
    req: EnrichRequest,
    o: { signal: AbortSignal; timeoutMs: number; attempt: number },
  ): Promise<EnrichmentResult>;
  /** Default: the real clock (performance.now and global timers). */
  clock?: Clock;
  /** Default Math.random; used for retry jitter. */
  random?: () => number;
  /** Default 0.3 / 0.5 / 0.7 / 0.9. */
  thresholds?: VerdictThresholds;
  /** Per-attempt timeout of analyzers and providers without their own `timeout_ms`. Default 30000. */
  defaultAnalyzerTimeoutMs?: number;
  onEvent?: (e: EngineEvent) => void;
}

export interface RunOptions {
  signal?: AbortSignal;
  configVersion?: string;
}

export type RunOutcome =
  | { status: 'completed'; result: AnalysisResult; trace: Trace; context: AnalysisContext }
  | { status: 'failed'; error: JobError; trace: Trace; context: AnalysisContext };

/** Why a run's calls were cancelled. */
type AbortReason = {
  kind: 'deadline' | 'cancelled' | 'job_failed' | 'stage_failed';
  message: string;
};

type AttemptOutcome =
  | { kind: 'ok'; value: unknown }
  | { kind: 'error'; error: unknown }
  | { kind: 'timeout' }
  | { kind: 'cancelled'; reason: AbortReason };

type CallOutcome =
  | { kind: 'success'; answer: AnalyzerAnswer; cached: boolean }
  | { kind: 'failed'; timeout: boolean; error: string }
  | { kind: 'cancelled'; reason: AbortReason };

interface CelStage {
  providers: Record<string, unknown>;
  analyzers: Record<string, AnalyzerResult>;
  result?: StageAggregate;
}

function ms(x: number): number {
  return x <= 0 ? 0 : Math.round(x * 1000) / 1000;
}

function errorText(e: unknown): string {
  if (e instanceof Error) return e.message || e.name;
  if (typeof e === 'string') return e;
  return 'unknown error';
}

function reasonOf(signal: AbortSignal): AbortReason {
  const r = signal.reason as AbortReason | undefined;
  return r && typeof r === 'object' && 'kind' in r
    ? r
    : { kind: 'cancelled', message: 'cancelled' };
}

/** Aborts `child` when `parent` aborts; returns the function that undoes the link. */
function link(parent: AbortSignal, child: AbortController): () => void {
  if (parent.aborted) {
    child.abort(parent.reason);
    return () => {};
  }
  const on = () => child.abort(parent.reason);
  parent.addEventListener('abort', on, { once: true });
  return () => parent.removeEventListener('abort', on);
}

/**
 * One call attempt bounded by `timeoutMs` and `parent`; never waits for a callee that ignores its
 * signal. The callee's own signal is aborted on timeout or cancellation.
 */
function attempt(
  clock: Clock,
  parent: AbortSignal,
  timeoutMs: number,
  call: (signal: AbortSignal) => Promise<unknown>,
): Promise<AttemptOutcome> {
  if (parent.aborted) return Promise.resolve({ kind: 'cancelled', reason: reasonOf(parent) });
  return new Promise((resolve) => {
    const ac = new AbortController();
    let settled = false;
    const finish = (o: AttemptOutcome) => {
      if (settled) return;
      settled = true;
      clock.clearTimeout(timer);
      parent.removeEventListener('abort', onParent);
      resolve(o);
    };
    const onParent = () => {
      const reason = reasonOf(parent);
      ac.abort(reason);
      finish({ kind: 'cancelled', reason });
    };
    const timer = clock.setTimeout(() => {
      ac.abort({ kind: 'cancelled', message: `timed out after ${timeoutMs} ms` });
      finish({ kind: 'timeout' });
    }, timeoutMs);
    parent.addEventListener('abort', onParent, { once: true });
    let p: Promise<unknown>;
    try {
      p = call(ac.signal);
    } catch (e) {
      finish({ kind: 'error', error: e });
      return;
    }
    Promise.resolve(p).then(
      (value) => finish({ kind: 'ok', value }),
      (error) => finish({ kind: 'error', error }),
    );
  });
}

function problemsText(issues: ReadonlyArray<{ path: PropertyKey[]; message: string }>): string {
  return issues
    .slice(0, 3)
    .map((i) => `${i.path.length ? `/${i.path.map(String).join('/')}` : '/'}: ${i.message}`)
    .join('; ');
}

function neutralResult(c: CallTrace): AnalyzerResult {
  return {
    analyzer_id: c.id,
    status: c.status,
    is_phishing: false,
    confidence: 0,
    threat_level: 'none',
    indicators: [],
    analyzer_details: c.error === undefined ? {} : { error: c.error },
    attempts: c.attempts,
    duration_ms: c.duration_ms,
  };
}

/**
 * Runs a compiled workflow on one email. Never throws: every run ends `completed` (with the final
 * result) or `failed` (with a JobError), always with the full trace and the analysis_context built.
 */
export function runWorkflow(
  wf: CompiledWorkflow,
  email: Email,
  deps: EngineDeps,
  opts: RunOptions = {},
): Promise<RunOutcome> {
  return new Run(wf, email, deps, opts).execute();
}

class Run {
  private readonly clock: Clock;
  private readonly random: () => number;
  private readonly thresholds: VerdictThresholds;
  private readonly defaultTimeoutMs: number;
  private readonly onEvent: ((e: EngineEvent) => void) | undefined;
  private readonly sem: Semaphore;
  private readonly runAc = new AbortController();
  private readonly t0: number;
  private readonly celEmail: unknown;
  private readonly traces: StageTrace[];
  private readonly aggregates: Array<StageAggregate | undefined>;
  private readonly remainingDeps: number[];
  /** Completed stages only, replaced (never mutated) when a stage completes. */
  private context: AnalysisContext = Object.freeze({});
  private celStages: Record<string, CelStage> = Object.freeze({});
  private failure: JobError | undefined;
  private started = 0;
  private finished = 0;
  private resolveDone: () => void = () => {};

  constructor(
    private readonly wf: CompiledWorkflow,
    private readonly email: Email,
    deps: EngineDeps,
    private readonly opts: RunOptions,
  ) {
    this.deps = deps;
    this.clock = deps.clock ?? realClock;
    this.random = deps.random ?? Math.random;
    this.thresholds = deps.thresholds ?? DEFAULT_THRESHOLDS;
    this.defaultTimeoutMs = deps.defaultAnalyzerTimeoutMs ?? DEFAULT_ANALYZER_TIMEOUT_MS;
    this.onEvent = deps.onEvent;
    this.sem = new Semaphore(wf.maxParallelAnalyzers);
    this.t0 = this.clock.now();
    const h = email.headers;
    // Optional lists default to empty in conditions, so `size(email.attachments) > 0` just works.
    this.celEmail = {
      ...email,
      attachments: email.attachments ?? [],
      headers: { ...h, cc: h.cc ?? [], bcc: h.bcc ?? [], raw_headers: h.raw_headers ?? {} },
      analysis_context: {},
    };
    this.traces = wf.stages.map((s) => ({
      name: s.name,
      status: 'pending',
      duration_ms: 0,
      providers: [],
      analyzers: [],
    }));
    this.aggregates = wf.stages.map(() => undefined);
    this.remainingDeps = wf.stages.map((s) => s.deps.length);
  }

  private readonly deps: EngineDeps;

  private emit(e: EngineEvent): void {
    if (!this.onEvent) return;
    try {
      this.onEvent(e);
    } catch {
      // a listener's bug must not break a run
    }
  }

  private failJob(error: JobError, reason: AbortReason): void {
    if (this.failure) return;
    this.failure = error;
    this.runAc.abort(reason);
    this.checkDone();
  }

  private checkDone(): void {
    if (
      this.started === this.finished &&
      (this.failure || this.finished === this.wf.stages.length)
    ) {
      this.resolveDone();
    }
  }

  async execute(): Promise<RunOutcome> {
    const done = new Promise<void>((r) => {
      this.resolveDone = r;
    });
    const deadline = this.clock.setTimeout(() => {
      const message = `the workflow did not finish within its timeout_ms (${this.wf.timeoutMs} ms)`;
      this.failJob({ code: WORKFLOW_ERROR_CODES.deadline, message }, { kind: 'deadline', message });
    }, this.wf.timeoutMs);
    const ext = this.opts.signal;
    const onExternal = () => {
      const message = 'the run was cancelled by its caller';
      this.failJob(
        { code: WORKFLOW_ERROR_CODES.cancelled, message },
        { kind: 'cancelled', message },
      );
    };
    if (ext?.aborted) onExternal();
    else ext?.addEventListener('abort', onExternal, { once: true });

    if (!this.failure) {
      for (const s of this.wf.stages) if (s.deps.length === 0) this.startStage(s);
    }
    this.checkDone();
    await done;
    this.clock.clearTimeout(deadline);
    ext?.removeEventListener('abort', onExternal);
    return this.outcome();
  }

  private startStage(s: CompiledStage): void {
    this.started++;
    void this.runStage(s)
      .catch((e: unknown) => {
        const message = `internal error in stage ${s.name}: ${errorText(e)}`;
        const tr = this.traces[s.index]!;
        tr.status = 'failed';
        tr.error = message;
        this.failJob(
          { code: WORKFLOW_ERROR_CODES.internal, message, stage: s.name },
          { kind: 'job_failed', message },
        );
      })
      .finally(() => {
        this.finished++;
        if (!this.failure) {
          const st = this.traces[s.index]!.status;
          if (st === 'completed' || st === 'skipped') {
            for (const d of s.dependents) {
              if (--this.remainingDeps[d]! === 0) this.startStage(this.wf.stages[d]!);
            }
          }
        }
        this.checkDone();
      });
  }

  private outcome(): RunOutcome {
    const now = this.clock.now();
    const failure = this.failure;
    for (const tr of this.traces) {
      if (tr.status === 'pending' && failure) {
        tr.status = 'skipped';
        tr.error = 'not started: the job failed first';
      }
    }
    const trace: Trace = {
      workflow_id: this.wf.id,
      duration_ms: ms(now - this.t0),
      stages: this.traces,
    };
    if (this.opts.configVersion !== undefined) trace.config_version = this.opts.configVersion;
    if (failure) return { status: 'failed', error: failure, trace, context: this.context };

    // Final result: the final stage's aggregate, else its nearest completed ancestor's (BFS).
    const seen = new Set<number>([this.wf.finalStageIndex]);
    const queue = [this.wf.finalStageIndex];
    while (queue.length > 0) {
      const i = queue.shift()!;
      const agg = this.aggregates[i];
      if (agg && this.traces[i]!.status === 'completed') {
        trace.final_stage = this.wf.stages[i]!.name;
        const result: AnalysisResult = {
          is_phishing: agg.is_phishing,
          threat_level: agg.threat_level,
          confidence: agg.confidence,
          summary: agg.summary,
          recommended_action: agg.recommended_action,
          indicators: agg.indicators,
        };
        return { status: 'completed', result, trace, context: this.context };
      }
      for (const d of this.wf.stages[i]!.deps) {
        if (!seen.has(d)) {
          seen.add(d);
          queue.push(d);
        }
      }
    }
    const message = `no stage produced a result: stage ${this.wf.finalStageName} and all its ancestors were skipped or had no successful analyzer`;
    return {
      status: 'failed',
      error: { code: WORKFLOW_ERROR_CODES.noResult, message, stage: this.wf.finalStageName },
      trace,
      context: this.context,
    };
  }

  /** analysis_context for a call starting now: completed stages, plus this stage's provider data. */
  private contextFor(
    stage: string,
    providers: Record<string, unknown> | undefined,
  ): AnalysisContext {
    if (!providers) return this.context;
    return Object.freeze({ ...this.context, [stage]: { providers, analyzers: {} } });
  }

  private async runStage(s: CompiledStage): Promise<void> {
    const tr = this.traces[s.index]!;
    const start = this.clock.now();
    tr.status = 'running';
    tr.started_at_ms = ms(start - this.t0);
    const wfId = this.wf.id;
    this.emit({ type: 'stage_started', workflow_id: wfId, stage: s.name });
    const finish = (status: 'completed' | 'failed' | 'skipped', error?: string) => {
      tr.status = status;
      tr.duration_ms = ms(this.clock.now() - start);
      if (error !== undefined) tr.error = error;
      if (this.onEvent) {
        const e: EngineEvent = {
          type: 'stage_finished',
          workflow_id: wfId,
          stage: s.name,
          status,
          duration_ms: tr.duration_ms,
        };
        if (error !== undefined) e.error = error;
        this.emit(e);
      }
    };

    // 1. The stage's condition, on the stages completed by now.
    if (s.condition) {
      const r = s.condition.evaluate({ email: this.celEmail, stages: this.celStages });
      tr.condition =
        r.error !== undefined ? `error (treated as false): ${r.error}` : r.value ? 'true' : 'false';
      if (!r.value) return finish('skipped');
    }

    // 2. Analyzer conditions.
    const calls: CallTrace[] = s.analyzers.map((a) => ({
      id: a.ref.id,
      status: 'skipped',
      attempts: 0,
      duration_ms: 0,
    }));
    tr.analyzers = calls;
    const toRun: number[] = [];
    s.analyzers.forEach((a, j) => {
      if (a.condition) {
        const r = a.condition.evaluate({ email: this.celEmail, stages: this.celStages });
        if (!r.value) {
          calls[j]!.error =
            r.error !== undefined
              ? `condition error (treated as false): ${r.error}`
              : 'condition is false';
          return;
        }
      }
      toRun.push(j);
    });
    if (s.analyzers.length > 0 && toRun.length === 0) {
      tr.condition ??= 'every analyzer was skipped by its condition';
      return finish('skipped');
    }

    const stageAc = new AbortController();
    const unlink = link(this.runAc.signal, stageAc);
    let stageError: { message: string; analyzer?: string } | undefined;
    const failStage = (message: string, analyzer?: string) => {
      if (stageError) return;
      stageError = analyzer === undefined ? { message } : { message, analyzer };
      stageAc.abort({ kind: 'stage_failed', message } satisfies AbortReason);
    };

    try {
      // 3. Context providers, in parallel, before the analyzers.
      let providerData: Record<string, unknown> | undefined;
      if (s.providers.length > 0) {
        providerData = {};
        const data = providerData;
        const emailForProviders: Email = { ...this.email, analysis_context: this.context };
        tr.providers = await Promise.all(
          s.providers.map((p) =>
            this.runProvider(
              s,
              p.id,
              p.timeout_ms,
              p.required,
              emailForProviders,
              stageAc.signal,
              data,
              failStage,
            ),
          ),
        );
        if (!stageError && !this.runAc.signal.aborted) Object.freeze(data);
      }

      // 4. Analyzers.
      const answers: Array<AnalyzerAnswer | undefined> = s.analyzers.map(() => undefined);
      const runOne = async (j: number): Promise<void> => {
        const a = s.analyzers[j]!;
        const out = await this.runAnalyzer(s, a, calls[j]!, stageAc.signal, providerData);
        if (out.kind === 'success') {
          answers[j] = out.answer;
          return;
        }
        if (out.kind === 'cancelled') return;
        const id = a.ref.id;
        if (a.ref.required) failStage(`required analyzer ${id} failed: ${out.error}`, id);
        else if (a.ref.failure_strategy === 'fail')
          failStage(`analyzer ${id} failed (failure_strategy fail): ${out.error}`, id);
        else if (!s.stage.continue_on_failure)
          failStage(`analyzer ${id} failed and continue_on_failure is false: ${out.error}`, id);
      };
      if (!stageError && !stageAc.signal.aborted) {
        if (s.stage.type === 'sequential') {
          for (const j of toRun) {
            if (stageError || stageAc.signal.aborted) {
              calls[j]!.error = 'not run: the stage stopped before its turn';
              continue;
            }
            await runOne(j);
          }
        } else {
          await Promise.all(toRun.map(runOne));
        }
      } else {
        for (const j of toRun) calls[j]!.error = 'not run: the stage stopped before its analyzers';
      }

      // 5. Verdict of the stage.
      if (this.runAc.signal.aborted && !stageError) {
        return finish('failed', `cancelled: ${reasonOf(this.runAc.signal).message}`);
      }
      if (!stageError) {
        let ok = 0;
        for (const j of toRun) if (answers[j]) ok++;
        const need = Math.min(s.stage.min_successful_analyzers, toRun.length);
        if (ok < need) {
          failStage(
            `only ${ok} of ${toRun.length} analyzer(s) succeeded; min_successful_analyzers is ${s.stage.min_successful_analyzers}`,
          );
        }
      }
      if (stageError) {
        const err = stageError;
        finish('failed', err.message);
        const jobError: JobError = {
          code: WORKFLOW_ERROR_CODES.stageFailed,
          message: `stage ${s.name} failed: ${err.message}`,
          stage: s.name,
        };
        if (err.analyzer !== undefined) jobError.analyzer = err.analyzer;
        this.failJob(jobError, { kind: 'job_failed', message: `stage ${s.name} failed` });
        return;
      }

      // 6. Aggregate and publish the stage to the context of later calls.
      const inputs: AggregateInput[] = [];
      const analyzerResults: Record<string, AnalyzerResult> = {};
      s.analyzers.forEach((a, j) => {
        const c = calls[j]!;
        const ans = answers[j];
        if (!ans) {
          analyzerResults[a.ref.id] = neutralResult(c);
          return;
        }
        inputs.push({ answer: ans, weight: a.ref.weight, id: a.ref.id });
        const r: AnalyzerResult = {
          analyzer_id: a.ref.id,
          status: 'success',
          is_phishing: ans.is_phishing,
          confidence: ans.confidence,
          threat_level:
            ans.threat_level ??
            verdictFor(ans.is_phishing ? ans.confidence : 1 - ans.confidence, this.thresholds)
              .threat_level,
          summary: ans.summary,
          indicators: ans.indicators,
          analyzer_details: ans.analyzer_details ?? {},
          attempts: c.attempts,
          duration_ms: c.duration_ms,
        };
        if (c.cached) r.cached = true;
        analyzerResults[a.ref.id] = r;
      });
      let agg: StageAggregate | undefined;
      if (inputs.length > 0) {
        agg = aggregate(
          s.stage.aggregation_method,
          inputs,
          this.wf.confidenceThreshold,
          this.thresholds,
        );
        tr.result = agg;
        this.aggregates[s.index] = agg;
      }
      const stageCtx: StageContext = Object.freeze({
        providers: providerData ?? {},
        analyzers: analyzerResults,
      });
      this.context = Object.freeze({ ...this.context, [s.name]: stageCtx });
      const cel: CelStage = { providers: stageCtx.providers, analyzers: analyzerResults };
      if (agg) cel.result = agg;
      this.celStages = Object.freeze({ ...this.celStages, [s.name]: cel });
      finish('completed');
    } finally {
      unlink();
    }
  }

  private async runProvider(
    s: CompiledStage,
    id: string,
    timeoutMs: number | undefined,
    required: boolean,
    email: Email,
    signal: AbortSignal,
    data: Record<string, unknown>,
    failStage: (message: string) => void,
  ): Promise<CallTrace> {
    const start = this.clock.now();
    const trace: CallTrace = { id, status: 'failed', attempts: 1, duration_ms: 0 };
    const wfId = this.wf.id;
    this.emit({ type: 'provider_started', workflow_id: wfId, stage: s.name, provider: id });
    const t = timeoutMs ?? this.defaultTimeoutMs;
    const req: EnrichRequest = { email, stage: s.name, workflow_id: wfId };
    const o = await attempt(this.clock, signal, t, (sig) =>
      this.deps.callProvider(id, req, { signal: sig, timeoutMs: t, attempt: 1 }),
    );
    trace.duration_ms = ms(this.clock.now() - start);
    if (o.kind === 'ok') {
      const parsed = EnrichmentResultSchema.safeParse(o.value);
      if (parsed.success) {
        trace.status = 'success';
        data[id] = parsed.data.data;
      } else {
        trace.error = `invalid answer: ${problemsText(parsed.error.issues)}`;
      }
    } else if (o.kind === 'timeout') {
      trace.status = 'timeout';
      trace.error = `timed out after ${t} ms`;
    } else if (o.kind === 'cancelled') {
      trace.status = o.reason.kind === 'deadline' ? 'timeout' : 'failed';
      trace.error = `cancelled: ${o.reason.message}`;
    } else {
      trace.error = errorText(o.error);
    }
    if (this.onEvent) {
      const e: EngineEvent = {
        type: 'provider_finished',
        workflow_id: wfId,
        stage: s.name,
        provider: id,
        status: trace.status === 'success' || trace.status === 'timeout' ? trace.status : 'failed',
        duration_ms: trace.duration_ms,
      };
      if (trace.error !== undefined) e.error = trace.error;
      this.emit(e);
    }
    if (trace.status !== 'success' && required && o.kind !== 'cancelled') {
      failStage(`required context provider ${id} failed: ${trace.error ?? 'unknown error'}`);
    }
    return trace;
  }

  private async runAnalyzer(
    s: CompiledStage,
    a: CompiledAnalyzer,
    call: CallTrace,
    signal: AbortSignal,
    providerData: Record<string, unknown> | undefined,
  ): Promise<CallOutcome> {
    const id = a.ref.id;
    const wfId = this.wf.id;
    const timeoutMs = a.ref.timeout_ms ?? this.defaultTimeoutMs;
    const start = this.clock.now();
    let outcome: CallOutcome = { kind: 'failed', timeout: false, error: 'not run' };
    call.status = 'failed';
    for (let n = 1; n <= a.maxAttempts; n++) {
      if (!(await this.sem.acquire(signal))) {
        outcome = { kind: 'cancelled', reason: reasonOf(signal) };
        break;
      }
      call.attempts = n;
      const t1 = this.clock.now();
      this.emit({
        type: 'analyzer_started',
        workflow_id: wfId,
        stage: s.name,
        analyzer: id,
        attempt: n,
      });
      const email: Email = {
        ...this.email,
        analysis_context: this.contextFor(s.name, providerData),
      };
      const o = await attempt(this.clock, signal, timeoutMs, (sig) =>
        this.deps.callAnalyzer(id, email, { signal: sig, timeoutMs, stage: s.name, attempt: n }),
      );
      this.sem.release();
      let retryable = true;
      if (o.kind === 'ok') {
        const parsed = AnalyzerAnswer.safeParse(o.value);
        if (parsed.success) {
          const cached = (o.value as { cached?: unknown }).cached === true;
          outcome = { kind: 'success', answer: parsed.data, cached };
        } else {
          outcome = {
            kind: 'failed',
            timeout: false,
            error: `invalid answer: ${problemsText(parsed.error.issues)}`,
          };
        }
      } else if (o.kind === 'timeout') {
        outcome = { kind: 'failed', timeout: true, error: `timed out after ${timeoutMs} ms` };
      } else if (o.kind === 'cancelled') {
        outcome = { kind: 'cancelled', reason: o.reason };
      } else {
        outcome = { kind: 'failed', timeout: false, error: errorText(o.error) };
        retryable = !(o.error instanceof BadInputError);
      }
      if (this.onEvent && outcome.kind !== 'cancelled') {
        const e: EngineEvent = {
          type: 'analyzer_finished',
          workflow_id: wfId,
          stage: s.name,
          analyzer: id,
          attempt: n,
          status: outcome.kind === 'success' ? 'success' : outcome.timeout ? 'timeout' : 'failed',
          duration_ms: ms(this.clock.now() - t1),
        };
        if (outcome.kind === 'failed') e.error = outcome.error;
        if (outcome.kind === 'success' && outcome.cached) e.cached = true;
        this.emit(e);
      }
      if (outcome.kind !== 'failed' || !retryable || n >= a.maxAttempts) break;
      if (!(await sleep(this.clock, backoffDelay(a.retry, n, this.random), signal))) {
        outcome = { kind: 'cancelled', reason: reasonOf(signal) };
        break;
      }
    }
    call.duration_ms = ms(this.clock.now() - start);
    if (outcome.kind === 'success') {
      call.status = 'success';
      if (outcome.cached) call.cached = true;
    } else if (outcome.kind === 'failed') {
      call.status = outcome.timeout ? 'timeout' : 'failed';
      call.error =
        a.maxAttempts > 1 ? `${outcome.error} (after ${call.attempts} attempt(s))` : outcome.error;
    } else {
      call.status = outcome.reason.kind === 'deadline' ? 'timeout' : 'failed';
      call.error = `cancelled: ${outcome.reason.message}`;
    }
    return outcome;
  }
}
