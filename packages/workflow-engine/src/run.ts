import {
  type AnalysisContext,
  type AnalysisResult,
  type AnalyzerAnswer,
  type AnalyzerResult,
  BadInputError,
  backoffDelay,
  type CallTrace,
  type Email,
  type EnrichmentResult,
  EnrichmentResult as EnrichmentResultSchema,
  type EnrichRequest,
  errorText,
  isNotConfigured,
  type JobError,
  NOT_CONFIGURED,
  type ProviderRef,
  retryBackoff,
  type StageAggregate,
  type StageContext,
  type StageTrace,
  safeParseAnalyzerAnswer,
  type Trace,
  type VerdictThresholds,
} from '@trawl/contracts';
import { type AggregateInput, aggregate, DEFAULT_THRESHOLDS, verdictFor } from './aggregate.ts';
import { type Clock, realClock, sleep } from './clock.ts';
import type { CompiledStage, CompiledWorkflow } from './compile.ts';
import { plainCopy } from './copy.ts';
import { WORKFLOW_ERROR_CODES } from './errors.ts';
import type { EngineEvent } from './events.ts';
import { type AbortReason, Scope, type ScopeListener } from './scope.ts';
import { Semaphore } from './semaphore.ts';

/** An analyzer call's timeout when neither workflow nor service gives one. */
export const DEFAULT_ANALYZER_TIMEOUT_MS = 30_000;

/** An answer may carry `cached: true` (set by a caching caller) so the trace can say so. */
export type AnalyzerCallAnswer = AnalyzerAnswer & { cached?: boolean };

/**
 * What the engine calls. The options' `signal` is a getter that makes the call's AbortSignal on
 * first read (most callees never look; an AbortController costs about 10 µs on Node 20): read
 * `o.signal` itself rather than spreading `o`.
 */
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
  /**
   * Whether an analyzer is configured (default: every one is). One that is not (disabled in the
   * configuration) is skipped without a call, as is one whose call answers a `*_NOT_CONFIGURED`
   * error; a stage whose analyzers are all off is skipped with the reason `not configured`.
   */
  configured?: (id: string) => boolean;
  /** Default: the real clock (performance.now and global timers). */
  clock?: Clock;
  /** Default Math.random; used for retry jitter. */
  random?: () => number;
  /** Default 0.3 / 0.5 / 0.7 / 0.9. */
  thresholds?: VerdictThresholds;
  /** Per-attempt timeout of analyzers and providers without their own `timeout_ms`. Default 30000. */
  defaultAnalyzerTimeoutMs?: number;
  /**
   * `callAnalyzer` answers a valid AnalyzerAnswer (as `AnalyzerAnswer` parses it) and `callProvider`
   * a valid EnrichmentResult, parsed where they entered the process (a plugin client does): the
   * engine takes them as they are. Default false: the engine parses every answer and fails a call
   * whose answer is invalid.
   */
  validatedAnswers?: boolean;
  onEvent?: (e: EngineEvent) => void;
}

/** Options of a workflow run: its clock, signal and logger. */
export interface RunOptions {
  signal?: AbortSignal;
  configVersion?: string;
}

/** How a run ended: completed with a verdict, or failed with an error. */
export type RunOutcome =
  | { status: 'completed'; result: AnalysisResult; trace: Trace; context: AnalysisContext }
  | { status: 'failed'; error: JobError; trace: Trace; context: AnalysisContext };

type AttemptOutcome =
  | { kind: 'ok'; value: unknown }
  | { kind: 'error'; error: unknown }
  | { kind: 'timeout' }
  | { kind: 'cancelled'; reason: AbortReason };

type CallOutcome =
  | { kind: 'success'; answer: AnalyzerAnswer; cached: boolean }
  | { kind: 'not_configured' }
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

const CANCELLED: AbortReason = { kind: 'cancelled', message: 'cancelled' };

function noop(): void {}

/**
 * One call attempt, bounded by `timeoutMs` and by its scope; never waits for a callee that ignores
 * its signal. The callee's AbortSignal is made when the callee first reads it (an AbortController
 * costs about 10 µs on Node 20 and most callees never look), already aborted if the attempt has
 * been; it is aborted on timeout or cancellation.
 */
class Attempt implements ScopeListener {
  timer: unknown = undefined;
  resolve: (o: AttemptOutcome) => void = noop;
  private ac: AbortController | undefined = undefined;
  private abortedWith: AbortReason | undefined = undefined;
  private settled = false;

  constructor(
    private readonly clock: Clock,
    private readonly scope: Scope,
    private readonly timeoutMs: number,
  ) {}

  get signal(): AbortSignal {
    let ac = this.ac;
    if (ac === undefined) {
      ac = new AbortController();
      this.ac = ac;
      if (this.abortedWith !== undefined) ac.abort(this.abortedWith);
    }
    return ac.signal;
  }

  private abortCallee(reason: AbortReason): void {
    this.abortedWith = reason;
    this.ac?.abort(reason);
  }

  onAbort(reason: AbortReason): void {
    this.abortCallee(reason);
    this.finish({ kind: 'cancelled', reason });
  }

  onTimeout(): void {
    this.abortCallee({ kind: 'cancelled', message: `timed out after ${this.timeoutMs} ms` });
    this.finish({ kind: 'timeout' });
  }

  finish(o: AttemptOutcome): void {
    if (this.settled) return;
    this.settled = true;
    this.clock.clearTimeout(this.timer);
    this.scope.remove(this);
    this.resolve(o);
  }
}

/** What an analyzer call receives beside the email; `signal` is made on first read. */
class AnalyzerCallOptions {
  readonly #attempt: Attempt;
  constructor(
    a: Attempt,
    readonly timeoutMs: number,
    readonly stage: string,
    readonly attempt: number,
  ) {
    this.#attempt = a;
  }

  get signal(): AbortSignal {
    return this.#attempt.signal;
  }
}

/** What a provider call receives beside the request; `signal` is made on first read. */
class ProviderCallOptions {
  readonly #attempt: Attempt;
  constructor(
    a: Attempt,
    readonly timeoutMs: number,
    readonly attempt: number,
  ) {
    this.#attempt = a;
  }

  get signal(): AbortSignal {
    return this.#attempt.signal;
  }
}

function attempt(
  clock: Clock,
  scope: Scope,
  timeoutMs: number,
  call: (a: Attempt) => unknown,
): Promise<AttemptOutcome> {
  if (scope.reason !== undefined) {
    return Promise.resolve({ kind: 'cancelled', reason: scope.reason });
  }
  const a = new Attempt(clock, scope, timeoutMs);
  const done = new Promise<AttemptOutcome>((resolve) => {
    a.resolve = resolve;
  });
  a.timer = clock.setTimeout(() => a.onTimeout(), timeoutMs);
  scope.add(a);
  let p: unknown;
  try {
    p = call(a);
  } catch (e) {
    a.finish({ kind: 'error', error: e });
    return done;
  }
  Promise.resolve(p).then(
    (value) => a.finish({ kind: 'ok', value }),
    (error) => a.finish({ kind: 'error', error }),
  );
  return done;
}

function problemsText(issues: ReadonlyArray<{ path: PropertyKey[]; message: string }>): string {
  return issues
    .slice(0, 3)
    .map((i) => `${i.path.length ? `/${i.path.map(String).join('/')}` : '/'}: ${i.message}`)
    .join('; ');
}

/** A frozen copy of `map` with `name` set (stage names cannot be `__proto__`). */
function withStage<T>(map: Readonly<Record<string, T>>, name: string, value: T): Record<string, T> {
  const next: Record<string, T> = plainCopy(map as Record<string, T>);
  next[name] = value;
  return Object.freeze(next);
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

/** One started stage with analyzers to run: its calls, answers and cancellation scope. */
class StageRun {
  readonly answers: Array<AnalyzerAnswer | undefined>;
  providerData: Record<string, unknown> | undefined = undefined;
  error: { message: string; analyzer?: string } | undefined = undefined;

  constructor(
    readonly stage: CompiledStage,
    readonly calls: CallTrace[],
    readonly scope: Scope,
  ) {
    this.answers = [];
    for (let j = 0; j < stage.analyzers.length; j++) this.answers.push(undefined);
  }

  /** The stage fails (the first reason wins) and its calls still in flight are cancelled. */
  fail(message: string, analyzer?: string): void {
    if (this.error) return;
    this.error = analyzer === undefined ? { message } : { message, analyzer };
    this.scope.abort({ kind: 'stage_failed', message });
  }

  get stopped(): boolean {
    return this.error !== undefined || this.scope.aborted;
  }
}

class Run {
  private readonly clock: Clock;
  private readonly random: () => number;
  private readonly thresholds: VerdictThresholds;
  private readonly defaultTimeoutMs: number;
  private readonly onEvent: ((e: EngineEvent) => void) | undefined;
  private readonly validated: boolean;
  private readonly sem: Semaphore;
  private readonly scope = new Scope();
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
  private resolveDone: () => void = noop;

  constructor(
    private readonly wf: CompiledWorkflow,
    private readonly email: Email,
    private readonly deps: EngineDeps,
    private readonly opts: RunOptions,
  ) {
    this.clock = deps.clock ?? realClock;
    this.random = deps.random ?? Math.random;
    this.thresholds = deps.thresholds ?? DEFAULT_THRESHOLDS;
    this.defaultTimeoutMs = deps.defaultAnalyzerTimeoutMs ?? DEFAULT_ANALYZER_TIMEOUT_MS;
    this.onEvent = deps.onEvent;
    this.validated = deps.validatedAnswers === true;
    this.sem = new Semaphore(wf.maxParallelAnalyzers);
    this.t0 = this.clock.now();
    const h = email.headers;
    // Optional lists default to empty in conditions, so `size(email.attachments) > 0` just works.
    const headers = plainCopy(h);
    headers.cc = h.cc ?? [];
    headers.bcc = h.bcc ?? [];
    headers.raw_headers = h.raw_headers ?? {};
    const celEmail = plainCopy(email);
    celEmail.attachments = email.attachments ?? [];
    celEmail.headers = headers;
    celEmail.analysis_context = {};
    this.celEmail = celEmail;
    const n = wf.stages.length;
    this.traces = [];
    this.aggregates = [];
    this.remainingDeps = [];
    for (let i = 0; i < n; i++) {
      const s = wf.stages[i]!;
      this.traces.push({
        name: s.name,
        status: 'pending',
        duration_ms: 0,
        providers: [],
        analyzers: [],
      });
      this.aggregates.push(undefined);
      this.remainingDeps.push(s.deps.length);
    }
  }

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
    this.scope.abort(reason);
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

  private onDeadline(): void {
    const message = `the workflow did not finish within its timeout_ms (${this.wf.timeoutMs} ms)`;
    this.failJob({ code: WORKFLOW_ERROR_CODES.deadline, message }, { kind: 'deadline', message });
  }

  private onExternalAbort(): void {
    const message = 'the run was cancelled by its caller';
    this.failJob({ code: WORKFLOW_ERROR_CODES.cancelled, message }, { kind: 'cancelled', message });
  }

  async execute(): Promise<RunOutcome> {
    const done = new Promise<void>((r) => {
      this.resolveDone = r;
    });
    const deadline = this.clock.setTimeout(() => this.onDeadline(), this.wf.timeoutMs);
    const ext = this.opts.signal;
    let onExternal: (() => void) | undefined;
    if (ext) {
      if (ext.aborted) this.onExternalAbort();
      else {
        onExternal = () => this.onExternalAbort();
        ext.addEventListener('abort', onExternal, { once: true });
      }
    }

    if (!this.failure) {
      for (const s of this.wf.stages) if (s.deps.length === 0) this.startStage(s);
    }
    this.checkDone();
    await done;
    this.clock.clearTimeout(deadline);
    if (onExternal) ext?.removeEventListener('abort', onExternal);
    return this.outcome();
  }

  private startStage(s: CompiledStage): void {
    this.started++;
    this.runStage(s).then(
      () => this.stageEnded(s),
      (e: unknown) => {
        const message = `internal error in stage ${s.name}: ${errorText(e)}`;
        const tr = this.traces[s.index]!;
        tr.status = 'failed';
        tr.error = message;
        this.failJob(
          { code: WORKFLOW_ERROR_CODES.internal, message, stage: s.name },
          { kind: 'job_failed', message },
        );
        this.stageEnded(s);
      },
    );
  }

  private stageEnded(s: CompiledStage): void {
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
    return withStage(this.context, stage, { providers, analyzers: {} });
  }

  /** The email a call receives: the run's email with `analysis_context` replaced. */
  private emailWith(context: AnalysisContext): Email {
    const e = plainCopy(this.email);
    e.analysis_context = context;
    return e;
  }

  private endStage(
    s: CompiledStage,
    start: number,
    status: 'completed' | 'failed' | 'skipped',
    error?: string,
  ): void {
    const tr = this.traces[s.index]!;
    tr.status = status;
    tr.duration_ms = ms(this.clock.now() - start);
    if (error !== undefined) tr.error = error;
    if (this.onEvent) {
      const e: EngineEvent = {
        type: 'stage_finished',
        workflow_id: this.wf.id,
        stage: s.name,
        status,
        duration_ms: tr.duration_ms,
      };
      if (error !== undefined) e.error = error;
      this.emit(e);
    }
  }

  private async runStage(s: CompiledStage): Promise<void> {
    const tr = this.traces[s.index]!;
    const start = this.clock.now();
    tr.status = 'running';
    tr.started_at_ms = ms(start - this.t0);
    if (this.onEvent) this.emit({ type: 'stage_started', workflow_id: this.wf.id, stage: s.name });

    // 1. The stage's condition, on the stages completed by now.
    if (s.condition) {
      const r = s.condition.evaluate({ email: this.celEmail, stages: this.celStages });
      tr.condition =
        r.error !== undefined ? `error (treated as false): ${r.error}` : r.value ? 'true' : 'false';
      if (!r.value) return this.endStage(s, start, 'skipped');
    }

    // 2. Analyzer conditions.
    const calls: CallTrace[] = [];
    const toRun: number[] = [];
    let off = 0;
    for (let j = 0; j < s.analyzers.length; j++) {
      const a = s.analyzers[j]!;
      const call: CallTrace = { id: a.ref.id, status: 'skipped', attempts: 0, duration_ms: 0 };
      calls.push(call);
      if (this.deps.configured && !this.deps.configured(a.ref.id)) {
        call.error = NOT_CONFIGURED;
        off++;
        continue;
      }
      if (a.condition) {
        const r = a.condition.evaluate({ email: this.celEmail, stages: this.celStages });
        if (!r.value) {
          call.error =
            r.error !== undefined
              ? `condition error (treated as false): ${r.error}`
              : 'condition is false';
          continue;
        }
      }
      toRun.push(j);
    }
    tr.analyzers = calls;
    if (s.analyzers.length > 0 && toRun.length === 0) {
      if (off > 0) tr.reason = NOT_CONFIGURED;
      else tr.condition ??= 'every analyzer was skipped by its condition';
      return this.endStage(s, start, 'skipped');
    }

    const st = new StageRun(s, calls, Scope.childOf(this.scope));
    try {
      // 3. Context providers, in parallel, before the analyzers.
      if (s.providers.length > 0) {
        const data: Record<string, unknown> = {};
        st.providerData = data;
        const emailForProviders = this.emailWith(this.context);
        tr.providers = await Promise.all(
          s.providers.map((p) => this.runProvider(st, p, emailForProviders, data)),
        );
        if (!st.error && !this.scope.aborted) Object.freeze(data);
      }

      // 4. Analyzers.
      if (!st.stopped) {
        if (s.stage.type === 'sequential') {
          for (const j of toRun) {
            if (st.stopped) {
              calls[j]!.error = 'not run: the stage stopped before its turn';
              continue;
            }
            await this.runAnalyzer(st, j);
          }
        } else if (toRun.length === 1) {
          await this.runAnalyzer(st, toRun[0]!);
        } else {
          await Promise.all(toRun.map((j) => this.runAnalyzer(st, j)));
        }
      } else {
        for (const j of toRun) calls[j]!.error = 'not run: the stage stopped before its analyzers';
      }

      // 5. Verdict of the stage.
      if (this.scope.aborted && !st.error) {
        return this.endStage(
          s,
          start,
          'failed',
          `cancelled: ${(this.scope.reason ?? CANCELLED).message}`,
        );
      }
      const answers = st.answers;
      // analyzers whose call said they are not configured count as skipped, not as failed
      const ran = toRun.filter((j) => calls[j]!.error !== NOT_CONFIGURED);
      if (!st.error && ran.length === 0) {
        tr.reason = NOT_CONFIGURED;
        return this.endStage(s, start, 'skipped');
      }
      if (!st.error) {
        let ok = 0;
        for (const j of ran) if (answers[j]) ok++;
        const need = Math.min(s.stage.min_successful_analyzers, ran.length);
        if (ok < need) {
          st.fail(
            `only ${ok} of ${ran.length} analyzer(s) succeeded; min_successful_analyzers is ${s.stage.min_successful_analyzers}`,
          );
        }
      }
      if (st.error) {
        const err = st.error;
        this.endStage(s, start, 'failed', err.message);
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
      for (let j = 0; j < s.analyzers.length; j++) {
        const a = s.analyzers[j]!;
        const c = calls[j]!;
        const ans = answers[j];
        if (!ans) {
          analyzerResults[a.ref.id] = neutralResult(c);
          continue;
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
      }
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
        providers: st.providerData ?? {},
        analyzers: analyzerResults,
      });
      this.context = withStage(this.context, s.name, stageCtx);
      const cel: CelStage = { providers: stageCtx.providers, analyzers: analyzerResults };
      if (agg) cel.result = agg;
      this.celStages = withStage(this.celStages, s.name, cel);
      this.endStage(s, start, 'completed');
    } finally {
      this.scope.remove(st.scope);
    }
  }

  private async runProvider(
    st: StageRun,
    p: ProviderRef,
    email: Email,
    data: Record<string, unknown>,
  ): Promise<CallTrace> {
    const s = st.stage;
    const id = p.id;
    const start = this.clock.now();
    const trace: CallTrace = { id, status: 'failed', attempts: 1, duration_ms: 0 };
    const wfId = this.wf.id;
    if (this.onEvent) {
      this.emit({ type: 'provider_started', workflow_id: wfId, stage: s.name, provider: id });
    }
    const t = p.timeout_ms ?? this.defaultTimeoutMs;
    const req: EnrichRequest = { email, stage: s.name, workflow_id: wfId };
    const o = await attempt(this.clock, st.scope, t, (at) =>
      this.deps.callProvider(id, req, new ProviderCallOptions(at, t, 1)),
    );
    trace.duration_ms = ms(this.clock.now() - start);
    if (o.kind === 'ok') {
      const parsed = this.validated
        ? { success: true as const, data: o.value as EnrichmentResult }
        : EnrichmentResultSchema.safeParse(o.value);
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
    if (trace.status !== 'success' && p.required && o.kind !== 'cancelled') {
      st.fail(`required context provider ${id} failed: ${trace.error ?? 'unknown error'}`);
    }
    return trace;
  }

  /** Runs analyzer `j` of the stage (with its retries), records its answer or fails the stage. */
  private async runAnalyzer(st: StageRun, j: number): Promise<void> {
    const s = st.stage;
    const a = s.analyzers[j]!;
    const call = st.calls[j]!;
    const scope = st.scope;
    const id = a.ref.id;
    const stage = s.name;
    const timeoutMs = a.ref.timeout_ms ?? this.defaultTimeoutMs;
    const start = this.clock.now();
    let outcome: CallOutcome = { kind: 'failed', timeout: false, error: 'not run' };
    call.status = 'failed';
    for (let n = 1; n <= a.maxAttempts; n++) {
      // a free slot is taken at once; only a full semaphore makes the call wait
      const slot =
        (scope.reason === undefined && this.sem.tryAcquire()) || (await this.sem.acquire(scope));
      if (!slot) {
        outcome = { kind: 'cancelled', reason: scope.reason ?? CANCELLED };
        break;
      }
      call.attempts = n;
      const t1 = this.clock.now();
      if (this.onEvent) {
        this.emit({
          type: 'analyzer_started',
          workflow_id: this.wf.id,
          stage,
          analyzer: id,
          attempt: n,
        });
      }
      const email = this.emailWith(this.contextFor(stage, st.providerData));
      const o = await attempt(this.clock, scope, timeoutMs, (at) =>
        this.deps.callAnalyzer(id, email, new AnalyzerCallOptions(at, timeoutMs, stage, n)),
      );
      this.sem.release();
      let retryable = true;
      if (o.kind === 'ok') {
        const parsed = this.validated
          ? { success: true as const, data: o.value as AnalyzerCallAnswer }
          : safeParseAnalyzerAnswer(o.value);
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
      } else if (isNotConfigured(o.error)) {
        outcome = { kind: 'not_configured' };
      } else {
        outcome = { kind: 'failed', timeout: false, error: errorText(o.error) };
        retryable = !(o.error instanceof BadInputError);
      }
      if (this.onEvent && outcome.kind !== 'cancelled' && outcome.kind !== 'not_configured') {
        const e: EngineEvent = {
          type: 'analyzer_finished',
          workflow_id: this.wf.id,
          stage,
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
      if (!(await sleep(this.clock, backoffDelay(n, retryBackoff(a.retry), this.random), scope))) {
        outcome = { kind: 'cancelled', reason: scope.reason ?? CANCELLED };
        break;
      }
    }
    call.duration_ms = ms(this.clock.now() - start);
    if (outcome.kind === 'success') {
      call.status = 'success';
      if (outcome.cached) call.cached = true;
      st.answers[j] = outcome.answer;
      return;
    }
    if (outcome.kind === 'cancelled') {
      call.status = outcome.reason.kind === 'deadline' ? 'timeout' : 'failed';
      call.error = `cancelled: ${outcome.reason.message}`;
      return;
    }
    if (outcome.kind === 'not_configured') {
      call.status = 'skipped';
      call.error = NOT_CONFIGURED;
      return;
    }
    call.status = outcome.timeout ? 'timeout' : 'failed';
    call.error =
      a.maxAttempts > 1 ? `${outcome.error} (after ${call.attempts} attempt(s))` : outcome.error;
    if (a.ref.required) st.fail(`required analyzer ${id} failed: ${outcome.error}`, id);
    else if (a.ref.failure_strategy === 'fail')
      st.fail(`analyzer ${id} failed (failure_strategy fail): ${outcome.error}`, id);
    else if (!s.stage.continue_on_failure)
      st.fail(`analyzer ${id} failed and continue_on_failure is false: ${outcome.error}`, id);
  }
}
