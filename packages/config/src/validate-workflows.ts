import {
  editDistance,
  errorText,
  type ServiceConfigFile,
  type Stage,
  toProblems,
  upstreamStages,
  Workflow,
} from '@trawl/contracts';
import type { ConfigProblem } from './errors.ts';
import { unknownKeys } from './unknown-keys.ts';

/** What a workflow may refer to. A set left undefined is not checked. */
export interface WorkflowValidationContext {
  /** Analyzer ids that may be used (enabled). */
  analyzers?: Iterable<string>;
  /**
   * Analyzer ids switched off in service.yaml: known, skipped at run time; only a `required`
   * reference to one is a problem.
   */
  disabledAnalyzers?: Iterable<string>;
  /** Context provider ids that may be used. */
  providers?: Iterable<string>;
  disabledProviders?: Iterable<string>;
  /** Compiles a CEL expression: an error message, or undefined when it compiles. */
  checkCondition?: (expr: string) => string | undefined;
  /**
   * Checks the stages, analyzers and providers a condition names (the workflow engine's
   * checkConditionReferences): one message per problem, each naming its line and column.
   */
  checkReferences?: CheckReferences;
  /** Named in every problem (`file`). */
  file?: string;
  /** JSON pointer prefix of the list (default ''); problems are `<prefix>/<index>/...`. */
  pathPrefix?: string;
}

/** What the stage holding a condition may refer to (the engine's ReferenceScope). */
export interface ConditionScope {
  stages: ReadonlyMap<string, { analyzers: readonly string[]; providers: readonly string[] }>;
  /** Transitive dependencies of the stage holding the condition. */
  upstream: ReadonlySet<string>;
  self: string;
}

/** Checks the names a CEL condition reads; answers the problems. */
export type CheckReferences = (expr: string, scope: ConditionScope) => string[];

/** What validating workflows gives: the workflows that passed, and every problem found. */
export interface WorkflowCheck {
  /** The workflows that passed the schema (defaults applied), in order. */
  workflows: Workflow[];
  problems: ConfigProblem[];
}

/**
 * Validates workflows completely: schema (contracts Workflow, unknown keys refused), unique workflow
 * ids, unique stage names, known `depends_on` names, no cycles, known `final_stage_name`, known analyzers
 * and providers (a disabled one only when required), sensible counts, and CEL conditions through `checkCondition`.
 */
export function checkWorkflows(
  input: readonly unknown[],
  ctx: WorkflowValidationContext = {},
): WorkflowCheck {
  const problems: ConfigProblem[] = [];
  const prefix = ctx.pathPrefix ?? '';
  const add = (path: string, message: string): void => {
    problems.push(ctx.file === undefined ? { path, message } : { file: ctx.file, path, message });
  };
  const sets = {
    analyzers: ctx.analyzers === undefined ? undefined : new Set(ctx.analyzers),
    disabledAnalyzers: new Set(ctx.disabledAnalyzers ?? []),
    providers: ctx.providers === undefined ? undefined : new Set(ctx.providers),
    disabledProviders: new Set(ctx.disabledProviders ?? []),
  };

  const workflows: Workflow[] = [];
  const firstIndexOfId = new Map<string, number>();
  input.forEach((raw, i) => {
    const at = `${prefix}/${i}`;
    const rawId =
      raw !== null && typeof raw === 'object' ? (raw as Record<string, unknown>).id : undefined;
    if (typeof rawId === 'string') {
      const first = firstIndexOfId.get(rawId);
      if (first !== undefined) {
        add(`${at}/id`, `workflow id "${rawId}" is already used by ${prefix}/${first}`);
      } else firstIndexOfId.set(rawId, i);
    }
    const parsed = Workflow.safeParse(raw);
    if (!parsed.success) {
      for (const p of toProblems(parsed.error, at)) add(p.path, p.message);
      return;
    }
    for (const path of unknownKeys(raw, parsed.data, at)) add(path, 'unknown key');
    workflows.push(parsed.data);
    checkOne(parsed.data, at, add, sets, ctx.checkCondition, ctx.checkReferences);
  });
  return { workflows, problems };
}

/** Problems of a list of workflows (see checkWorkflows); empty when they are valid. */
export function validateWorkflows(
  input: readonly unknown[],
  ctx: WorkflowValidationContext = {},
): ConfigProblem[] {
  return checkWorkflows(input, ctx).problems;
}

/**
 * Problems of one workflow (POST /workflows/validate): paths are relative to the workflow itself.
 */
export function validateWorkflow(
  input: unknown,
  ctx: Omit<WorkflowValidationContext, 'pathPrefix'> = {},
): ConfigProblem[] {
  return checkWorkflows([input], { ...ctx, pathPrefix: '' }).problems.map((p) => ({
    ...p,
    path: p.path.replace(/^\/0(?=\/|$)/, ''),
  }));
}

/** The analyzers and providers a service file makes available, for WorkflowValidationContext. */
export function workflowContextFor(
  service: ServiceConfigFile,
  extra: { knownAnalyzers?: Iterable<string>; knownProviders?: Iterable<string> } = {},
): Pick<
  WorkflowValidationContext,
  'analyzers' | 'disabledAnalyzers' | 'providers' | 'disabledProviders'
> {
  const analyzers = new Set(extra.knownAnalyzers ?? []);
  const disabledAnalyzers = new Set<string>();
  const entries: Array<[string, { enabled: boolean }]> = [
    ...Object.entries(service.analyzers),
    ...Object.entries(service.plugins.analyzers),
  ];
  // An analyzer enabled by either form is available; one only ever switched off is disabled.
  for (const [id, e] of entries) if (!e.enabled) disabledAnalyzers.add(id);
  for (const [id, e] of entries) {
    if (e.enabled) {
      analyzers.add(id);
      disabledAnalyzers.delete(id);
    }
  }
  for (const id of disabledAnalyzers) analyzers.delete(id);

  const providers = new Set(extra.knownProviders ?? []);
  const disabledProviders = new Set<string>();
  for (const [id, e] of Object.entries(service.plugins.context_providers)) {
    if (e.enabled) providers.add(id);
    else {
      providers.delete(id);
      disabledProviders.add(id);
    }
  }
  return { analyzers, disabledAnalyzers, providers, disabledProviders };
}

type Add = (path: string, message: string) => void;
interface Sets {
  analyzers: Set<string> | undefined;
  disabledAnalyzers: Set<string>;
  providers: Set<string> | undefined;
  disabledProviders: Set<string>;
}

function checkOne(
  wf: Workflow,
  at: string,
  add: Add,
  sets: Sets,
  checkCondition: ((expr: string) => string | undefined) | undefined,
  checkReferences: CheckReferences | undefined,
): void {
  const index = new Map<string, number>();
  wf.stages.forEach((s, i) => {
    const first = index.get(s.name);
    if (first !== undefined) {
      add(`${at}/stages/${i}/name`, `stage name "${s.name}" is already used by stage ${first}`);
    } else index.set(s.name, i);
  });

  // Dependencies: absent = the previous stage; [] = none.
  const deps = new Map<string, string[]>();
  wf.stages.forEach((s, i) => {
    if (s.depends_on === undefined) {
      const prev = i > 0 ? wf.stages[i - 1] : undefined;
      if (!deps.has(s.name)) deps.set(s.name, prev ? [prev.name] : []);
      return;
    }
    const known: string[] = [];
    s.depends_on.forEach((d, j) => {
      if (!index.has(d)) add(`${at}/stages/${i}/depends_on/${j}`, `unknown stage "${d}"`);
      else if (d === s.name)
        add(`${at}/stages/${i}/depends_on/${j}`, `stage "${d}" depends on itself`);
      else known.push(d);
    });
    if (!deps.has(s.name)) deps.set(s.name, known);
  });
  for (const cycle of findCycles(wf.stages, deps)) {
    const i = index.get(cycle[0] ?? '') ?? 0;
    add(`${at}/stages/${i}/depends_on`, `dependency cycle: ${cycle.join(' -> ')}`);
  }

  if (wf.final_stage_name !== undefined && !index.has(wf.final_stage_name)) {
    add(`${at}/final_stage_name`, `unknown stage "${wf.final_stage_name}"`);
  }

  const stageIds = new Map(
    wf.stages.map((s) => [
      s.name,
      { analyzers: s.analyzers.map((a) => a.id), providers: s.context_providers.map((p) => p.id) },
    ]),
  );

  const condition = (
    path: string,
    expr: string | null | undefined,
    stage: string,
    analyzer?: string,
  ): void => {
    if (expr === undefined || expr === null || checkCondition === undefined) return;
    if (expr.trim() === '') {
      add(path, 'condition is empty');
      return;
    }
    let err: string | undefined;
    try {
      err = checkCondition(expr);
    } catch (e) {
      err = errorText(e);
    }
    if (err !== undefined) {
      add(path, `condition does not compile: ${err}`);
      return;
    }
    if (checkReferences === undefined) return;
    const scope: ConditionScope = {
      stages: stageIds,
      upstream: upstreamStages(deps, stage),
      self: stage,
    };
    const of = analyzer === undefined ? '' : ` analyzer "${analyzer}"`;
    for (const m of checkReferences(expr, scope)) {
      add(path, `workflow "${wf.id}", stage "${stage}"${of} condition, ${m}`);
    }
  };

  wf.stages.forEach((s, i) => {
    const sp = `${at}/stages/${i}`;
    condition(`${sp}/condition`, s.condition, s.name);
    if (s.type !== 'conditional' && s.condition) {
      add(`${sp}/condition`, `only a conditional stage has a condition (type is ${s.type})`);
    }
    s.analyzers.forEach((a, j) => {
      const ap = `${sp}/analyzers/${j}`;
      if (sets.disabledAnalyzers.has(a.id)) {
        // A disabled analyzer is skipped at run time; only a required one makes the stage unusable.
        if (a.required) {
          add(
            `${ap}/required`,
            `analyzer "${a.id}" is required but disabled in the service configuration`,
          );
        }
      } else if (sets.analyzers !== undefined && !sets.analyzers.has(a.id)) {
        add(`${ap}/id`, `unknown analyzer "${a.id}"${hint(a.id, sets.analyzers)}`);
      }
      condition(`${ap}/condition`, a.condition, s.name, a.id);
      const rc = a.retry_config;
      if (rc !== undefined && rc.max_backoff_ms < rc.backoff_ms) {
        add(`${ap}/retry_config/max_backoff_ms`, 'must be at least backoff_ms');
      }
    });
    const seenProviders = new Set<string>();
    s.context_providers.forEach((p, j) => {
      const pp = `${sp}/context_providers/${j}/id`;
      if (seenProviders.has(p.id))
        add(pp, `context provider "${p.id}" appears twice in this stage`);
      seenProviders.add(p.id);
      if (sets.disabledProviders.has(p.id)) {
        if (p.required) {
          add(
            `${sp}/context_providers/${j}/required`,
            `context provider "${p.id}" is required but disabled in the service configuration`,
          );
        }
      } else if (sets.providers !== undefined && !sets.providers.has(p.id)) {
        add(pp, `unknown context provider "${p.id}"${hint(p.id, sets.providers)}`);
      }
    });
    if (s.analyzers.length > 0 && s.min_successful_analyzers > s.analyzers.length) {
      add(
        `${sp}/min_successful_analyzers`,
        `is ${s.min_successful_analyzers} but the stage has only ${s.analyzers.length} analyzer(s)`,
      );
    }
    if (
      s.aggregation_method === 'weighted_average' &&
      s.analyzers.length > 0 &&
      s.analyzers.every((a) => a.weight === 0)
    ) {
      add(`${sp}/analyzers`, 'weighted_average needs at least one analyzer with a weight above 0');
    }
  });
}

/**
 * Each elementary cycle found by a depth-first search, as `[a, b, ..., a]`, reported once. The search
 * is iterative (an explicit stack): a long depends_on chain must not overflow the call stack.
 */
function findCycles(stages: readonly Stage[], deps: Map<string, string[]>): string[][] {
  const state = new Map<string, 'visiting' | 'done'>();
  const cycles: string[][] = [];
  const seen = new Set<string>();
  const path: string[] = [];
  const position = new Map<string, number>();
  const next: number[] = [];
  const enter = (n: string) => {
    state.set(n, 'visiting');
    position.set(n, path.push(n) - 1);
    next.push(0);
  };
  for (const s of stages) {
    if (state.has(s.name)) continue;
    enter(s.name);
    while (path.length > 0) {
      const top = path.length - 1;
      const n = path[top] as string;
      const ds = deps.get(n) ?? [];
      const j = next[top] as number;
      if (j >= ds.length) {
        path.pop();
        next.pop();
        position.delete(n);
        state.set(n, 'done');
        continue;
      }
      next[top] = j + 1;
      const d = ds[j] as string;
      const st = state.get(d);
      if (st === 'visiting') {
        const cycle = path.slice(position.get(d));
        const key = [...cycle].sort().join('\u0000');
        if (!seen.has(key)) {
          seen.add(key);
          cycles.push([...cycle, d]);
        }
      } else if (st === undefined) enter(d);
    }
  }
  return cycles;
}

function hint(id: string, known: Set<string>): string {
  if (known.size === 0) return ' (no analyzer or provider is available)';
  const list = [...known].sort();
  const close = list.find((k) => editDistance(k, id) <= 2);
  return close !== undefined
    ? ` (did you mean "${close}"?)`
    : ` (known: ${list.slice(0, 20).join(', ')})`;
}
