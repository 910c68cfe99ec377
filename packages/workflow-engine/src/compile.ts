import {
  type AnalyzerRef,
  BadInputError,
  type ProviderRef,
  RETRY_DEFAULTS,
  type RetryConfig,
  type Stage,
  toProblems,
  upstreamStages,
  type ValidationProblem,
  Workflow,
} from '@trawl/contracts';
import { type CompiledCondition, compileCondition } from './cel.ts';
import { checkConditionReferences, type ReferenceScope } from './cel-references.ts';
import { WORKFLOW_ERROR_CODES } from './errors.ts';

/** An analyzer of a compiled stage, with its compiled condition and attempts allowed. */
export interface CompiledAnalyzer {
  readonly ref: AnalyzerRef;
  readonly condition: CompiledCondition | undefined;
  /** Attempts allowed: `retry_config.max_attempts` (default 3) for `retry`, else 1. */
  readonly maxAttempts: number;
  readonly retry: RetryConfig;
}

/** A compiled stage: its calls, dependencies and compiled condition. */
export interface CompiledStage {
  readonly index: number;
  readonly name: string;
  readonly stage: Stage;
  /** Indices of the stages this one depends on (after applying the "previous stage" default). */
  readonly deps: readonly number[];
  /** Indices of the stages that depend on this one. */
  readonly dependents: readonly number[];
  readonly condition: CompiledCondition | undefined;
  readonly analyzers: readonly CompiledAnalyzer[];
  readonly providers: readonly ProviderRef[];
}

/** A workflow compiled once: stages in order, conditions ready to evaluate. */
export interface CompiledWorkflow {
  readonly id: string;
  readonly workflow: Workflow;
  readonly timeoutMs: number;
  readonly confidenceThreshold: number;
  readonly maxParallelAnalyzers: number | undefined;
  readonly stages: readonly CompiledStage[];
  readonly finalStageIndex: number;
  readonly finalStageName: string;
}

/** Options of compileWorkflow. */
export interface CompileOptions {
  knownAnalyzers?: Iterable<string>;
  knownProviders?: Iterable<string>;
}

function invalid(id: string, problems: ValidationProblem[]): BadInputError {
  const head = problems
    .slice(0, 3)
    .map((p) => `${p.path || '/'}: ${p.message}`)
    .join('; ');
  const more = problems.length > 3 ? ` (and ${problems.length - 3} more)` : '';
  return new BadInputError(
    WORKFLOW_ERROR_CODES.invalid,
    `workflow ${id} is invalid: ${head}${more}`,
    { status: 422, problems },
  );
}

/**
 * Validates a workflow completely and prepares it for runs: stage DAG, CEL conditions compiled once,
 * retry settings resolved. Throws BadInputError (TRAWL_ERR_WORKFLOW_INVALID) listing every problem,
 * each with a JSON pointer into the workflow.
 */
export function compileWorkflow(w: Workflow, opts: CompileOptions = {}): CompiledWorkflow {
  const parsed = Workflow.safeParse(w);
  const rawId = (w as { id?: unknown } | null)?.id;
  const label = typeof rawId === 'string' ? rawId : '(no id)';
  if (!parsed.success) throw invalid(label, toProblems(parsed.error));
  const wf = parsed.data;
  const problems: ValidationProblem[] = [];
  const known = {
    analyzers: opts.knownAnalyzers ? new Set(opts.knownAnalyzers) : undefined,
    providers: opts.knownProviders ? new Set(opts.knownProviders) : undefined,
  };

  const indexByName = new Map<string, number>();
  wf.stages.forEach((s, i) => {
    if (indexByName.has(s.name)) {
      problems.push({ path: `/stages/${i}/name`, message: `duplicate stage name ${s.name}` });
    } else {
      indexByName.set(s.name, i);
    }
  });

  const deps: number[][] = wf.stages.map((s, i) => {
    if (s.depends_on === undefined) return i === 0 ? [] : [i - 1];
    const out: number[] = [];
    s.depends_on.forEach((d, j) => {
      const k = indexByName.get(d);
      if (k === undefined) {
        problems.push({ path: `/stages/${i}/depends_on/${j}`, message: `unknown stage ${d}` });
      } else if (k === i) {
        problems.push({
          path: `/stages/${i}/depends_on/${j}`,
          message: 'a stage cannot depend on itself',
        });
      } else if (!out.includes(k)) {
        out.push(k);
      }
    });
    return out;
  });

  // Cycles: depth-first search with colours; report each cycle once, at the stage that closes it.
  // Iterative (an explicit stack of [stage, next dependency]): a long depends_on chain must not
  // overflow the call stack (a 20,000-stage chain did, as a 500 from validate).
  const colour = new Array<number>(wf.stages.length).fill(0);
  const path: number[] = [];
  /** Position of each stage on `path` while it is grey (on the path), for the cycle's text. */
  const onPath = new Array<number>(wf.stages.length).fill(-1);
  const next: number[] = [];
  for (let root = 0; root < wf.stages.length; root++) {
    if (colour[root] !== 0) continue;
    colour[root] = 1;
    onPath[root] = path.push(root) - 1;
    next.push(0);
    while (path.length > 0) {
      const top = path.length - 1;
      const i = path[top]!;
      const ds = deps[i]!;
      const j = next[top]!;
      if (j >= ds.length) {
        path.pop();
        next.pop();
        onPath[i] = -1;
        colour[i] = 2;
        continue;
      }
      next[top] = j + 1;
      const d = ds[j]!;
      if (colour[d] === 1) {
        const cyc = path.slice(onPath[d]!).map((k) => wf.stages[k]!.name);
        problems.push({
          path: `/stages/${i}/depends_on`,
          message: `depends_on forms a cycle: ${[...cyc, wf.stages[d]!.name].join(' -> ')}`,
        });
      } else if (colour[d] === 0) {
        colour[d] = 1;
        onPath[d] = path.push(d) - 1;
        next.push(0);
      }
    }
  }

  // What each stage's conditions may name: stages upstream of it, and their analyzers/providers.
  const stageIds = new Map(
    wf.stages.map((s) => [
      s.name,
      { analyzers: s.analyzers.map((a) => a.id), providers: s.context_providers.map((p) => p.id) },
    ]),
  );
  // computed only for the stages that have a condition: for every stage at once it is quadratic in
  // memory (a 20,000-stage chain would hold 200 million names)
  const stageDeps = new Map(
    wf.stages.map((s, i) => [s.name, deps[i]!.map((d) => wf.stages[d]!.name)]),
  );
  const upstreamMemo = new Map<string, Set<string>>();
  const upstreamOf = (stage: string): Set<string> => {
    let set = upstreamMemo.get(stage);
    if (!set) {
      set = upstreamStages(stageDeps, stage);
      upstreamMemo.set(stage, set);
    }
    return set;
  };

  const cond = (
    expr: string | null | undefined,
    path: string,
    stage: string,
    analyzer?: string,
  ): CompiledCondition | undefined => {
    if (expr === null || expr === undefined) return undefined;
    let compiled: CompiledCondition;
    try {
      compiled = compileCondition(expr);
    } catch (e) {
      problems.push({ path, message: `condition does not compile: ${(e as Error).message}` });
      return undefined;
    }
    const scope: ReferenceScope = {
      stages: stageIds,
      upstream: upstreamOf(stage),
      self: stage,
    };
    for (const m of checkConditionReferences(expr, scope)) {
      const of = analyzer === undefined ? '' : ` analyzer "${analyzer}"`;
      problems.push({
        path,
        message: `workflow "${wf.id}", stage "${stage}"${of} condition, ${m}`,
      });
    }
    return compiled;
  };

  const stages: CompiledStage[] = wf.stages.map((s, i) => {
    const analyzers = s.analyzers.map((a, j): CompiledAnalyzer => {
      if (known.analyzers && !known.analyzers.has(a.id)) {
        problems.push({
          path: `/stages/${i}/analyzers/${j}/id`,
          message: `unknown analyzer ${a.id}`,
        });
      }
      const retry: RetryConfig = a.retry_config ?? { ...RETRY_DEFAULTS };
      if (retry.max_backoff_ms < retry.backoff_ms) {
        problems.push({
          path: `/stages/${i}/analyzers/${j}/retry_config/max_backoff_ms`,
          message: 'max_backoff_ms must be at least backoff_ms',
        });
      }
      return {
        ref: a,
        condition: cond(a.condition, `/stages/${i}/analyzers/${j}/condition`, s.name, a.id),
        maxAttempts: a.failure_strategy === 'retry' ? retry.max_attempts : 1,
        retry,
      };
    });
    const seenProviders = new Set<string>();
    s.context_providers.forEach((p, j) => {
      if (known.providers && !known.providers.has(p.id)) {
        problems.push({
          path: `/stages/${i}/context_providers/${j}/id`,
          message: `unknown context provider ${p.id}`,
        });
      }
      if (seenProviders.has(p.id)) {
        problems.push({
          path: `/stages/${i}/context_providers/${j}/id`,
          message: `context provider ${p.id} appears twice in this stage`,
        });
      }
      seenProviders.add(p.id);
    });
    if (s.analyzers.length > 0 && s.min_successful_analyzers > s.analyzers.length) {
      problems.push({
        path: `/stages/${i}/min_successful_analyzers`,
        message: `min_successful_analyzers (${s.min_successful_analyzers}) is more than the stage's ${s.analyzers.length} analyzer(s)`,
      });
    }
    return {
      index: i,
      name: s.name,
      stage: s,
      deps: deps[i]!,
      dependents: [],
      condition: cond(s.condition, `/stages/${i}/condition`, s.name),
      analyzers,
      providers: s.context_providers,
    };
  });
  stages.forEach((s) => {
    for (const d of s.deps) (stages[d]!.dependents as number[]).push(s.index);
  });

  let finalStageIndex = wf.stages.length - 1;
  if (wf.final_stage_name !== undefined) {
    const k = indexByName.get(wf.final_stage_name);
    if (k === undefined) {
      problems.push({
        path: '/final_stage_name',
        message: `final_stage_name names no stage of this workflow: ${wf.final_stage_name}`,
      });
    } else {
      finalStageIndex = k;
    }
  }

  if (problems.length > 0) throw invalid(wf.id, problems);
  return Object.freeze({
    id: wf.id,
    workflow: wf,
    timeoutMs: wf.timeout_ms,
    confidenceThreshold: wf.confidence_threshold,
    maxParallelAnalyzers: wf.max_parallel_analyzers,
    stages,
    finalStageIndex,
    finalStageName: wf.stages[finalStageIndex]!.name,
  });
}
