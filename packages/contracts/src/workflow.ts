import { z } from 'zod';

const Identifier = z
  .string()
  .min(1)
  .max(128)
  .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/, {
    message: 'must start with a letter or digit and hold only letters, digits, _ . -',
  });

const PositiveMs = z.number().int().positive();

/** The retry defaults of an analyzer call. */
export const RETRY_DEFAULTS = {
  max_attempts: 3,
  backoff_ms: 200,
  max_backoff_ms: 5000,
  exponential_backoff: true,
} as const;

/** How often and after what wait a failed analyzer call is tried again. */
export const RetryConfig = z.object({
  max_attempts: z.number().int().min(1).max(20).default(RETRY_DEFAULTS.max_attempts),
  backoff_ms: z.number().int().nonnegative().default(RETRY_DEFAULTS.backoff_ms),
  max_backoff_ms: z.number().int().nonnegative().default(RETRY_DEFAULTS.max_backoff_ms),
  exponential_backoff: z.boolean().default(RETRY_DEFAULTS.exponential_backoff),
});
export type RetryConfig = z.output<typeof RetryConfig>;

/** What a stage does when an analyzer fails. */
export const FAILURE_STRATEGIES = ['skip', 'retry', 'fail'] as const;
/** A stage's failure strategy (FAILURE_STRATEGIES). */
export const FailureStrategy = z.enum(FAILURE_STRATEGIES);
export type FailureStrategy = z.infer<typeof FailureStrategy>;

/** An analyzer in a stage: its id, weight, timeout and retries. */
export const AnalyzerRef = z.object({
  id: Identifier,
  weight: z.number().min(0).max(1).default(1),
  timeout_ms: PositiveMs.optional(),
  required: z.boolean().default(false),
  failure_strategy: FailureStrategy.default('skip'),
  retry_config: RetryConfig.optional(),
  condition: z.string().max(4096).nullable().optional(),
});
export type AnalyzerRef = z.output<typeof AnalyzerRef>;

/** A context provider in a stage: its id and timeout. */
export const ProviderRef = z.object({
  id: Identifier,
  timeout_ms: PositiveMs.optional(),
  required: z.boolean().default(false),
});
export type ProviderRef = z.output<typeof ProviderRef>;

/** How a stage runs its analyzers. */
export const STAGE_TYPES = ['parallel', 'sequential', 'conditional'] as const;
/** A stage's type (STAGE_TYPES). */
export const StageType = z.enum(STAGE_TYPES);
export type StageType = z.infer<typeof StageType>;

/** How a workflow combines its analyzers' answers into a verdict. */
export const AGGREGATION_METHODS = ['weighted_average', 'max_confidence', 'majority_vote'] as const;
/** A workflow's aggregation method (AGGREGATION_METHODS). */
export const AggregationMethod = z.enum(AGGREGATION_METHODS);
export type AggregationMethod = z.infer<typeof AggregationMethod>;

/** One stage of a workflow: its analyzers, type, dependencies and condition. */
export const Stage = z
  .object({
    name: Identifier,
    type: StageType.default('parallel'),
    /** Absent: depends on the previous stage in the list. Empty: depends on nothing. */
    depends_on: z.array(Identifier).optional(),
    continue_on_failure: z.boolean().default(true),
    min_successful_analyzers: z.number().int().nonnegative().default(1),
    aggregation_method: AggregationMethod.default('weighted_average'),
    analyzers: z.array(AnalyzerRef).default([]),
    condition: z.string().max(4096).nullable().optional(),
    context_providers: z.array(ProviderRef).default([]),
  })
  .superRefine((s, ctx) => {
    if (s.type === 'conditional' && !s.condition) {
      ctx.addIssue({
        code: 'custom',
        path: ['condition'],
        message: 'a conditional stage needs a condition',
      });
    }
    if (s.analyzers.length === 0 && s.context_providers.length === 0) {
      ctx.addIssue({
        code: 'custom',
        path: ['analyzers'],
        message: 'a stage needs at least one analyzer or context provider',
      });
    }
    const seen = new Set<string>();
    s.analyzers.forEach((a, i) => {
      if (seen.has(a.id)) {
        ctx.addIssue({
          code: 'custom',
          path: ['analyzers', i, 'id'],
          message: `analyzer ${a.id} appears twice in this stage`,
        });
      }
      seen.add(a.id);
    });
  });
export type Stage = z.output<typeof Stage>;
/** A stage as written (defaults not yet applied). */
export type StageInput = z.input<typeof Stage>;

/** The transitive dependencies of `stage`, given each stage's direct dependencies. */
export function upstreamStages(
  deps: ReadonlyMap<string, readonly string[]>,
  stage: string,
): Set<string> {
  const seen = new Set<string>();
  const stack = [...(deps.get(stage) ?? [])];
  while (stack.length > 0) {
    const d = stack.pop() as string;
    if (seen.has(d)) continue;
    seen.add(d);
    for (const e of deps.get(d) ?? []) stack.push(e);
  }
  return seen;
}

/** A workflow's default timeout: five minutes. */
export const WORKFLOW_TIMEOUT_DEFAULT_MS = 300_000;

/** A workflow: its stages, aggregation and timeout. */
export const Workflow = z.object({
  id: Identifier,
  name: z.string().min(1).max(256),
  version: z.number().int().nonnegative().optional(),
  description: z.string().max(4096).optional(),
  stages: z.array(Stage).min(1, { message: 'a workflow needs at least one stage' }),
  timeout_ms: PositiveMs.default(WORKFLOW_TIMEOUT_DEFAULT_MS),
  max_parallel_analyzers: z.number().int().positive().optional(),
  final_stage_name: Identifier.optional(),
  confidence_threshold: z.number().min(0).max(1).default(0.5),
  created_by: z.string().max(256).optional(),
});
export type Workflow = z.output<typeof Workflow>;
/** A workflow as written (defaults not yet applied). */
export type WorkflowInput = z.input<typeof Workflow>;

/** workflows.yaml: the workflows an installation runs. */
export const WorkflowsFile = z.object({
  workflows: z.array(Workflow),
});
export type WorkflowsFile = z.output<typeof WorkflowsFile>;
