import type { Email } from '@trawl/contracts';
import { attachEvidence } from '@trawl/investigation';
import type { JobFinish } from '@trawl/platform';
import type { PluginInvoker } from '@trawl/plugin-client';
import type { ConfigSnapshot } from '@trawl/workflow-engine';
import { type CompiledWorkflow, type RunOutcome, runWorkflow } from '@trawl/workflow-engine';
import type { AnalyzerCache } from './analyzer-cache.ts';
import { createEngineDeps } from './engine-deps.ts';
import type { OrchestratorMetrics } from './metrics.ts';

/** What one job's run calls: the analyzers and providers, their result cache, the metrics. */
export interface JobRunDeps {
  invoker: PluginInvoker;
  cache?: AnalyzerCache | undefined;
  metrics?: OrchestratorMetrics | undefined;
}

/**
 * Runs one job's workflow the way production does: the engine over the invoker, with the analyzer
 * result cache in front, on the configuration snapshot the job started with. The orchestrator
 * (analysis-requests.ts) and createJobRunner (dry runs, the engine benchmark) both call this one.
 */
export function runJob(
  deps: JobRunDeps,
  snapshot: ConfigSnapshot,
  wf: CompiledWorkflow,
  email: Email,
  signal?: AbortSignal,
): Promise<RunOutcome> {
  return runWorkflow(
    wf,
    email,
    createEngineDeps({
      invoker: deps.invoker,
      config: snapshot,
      email,
      cache: deps.cache,
      metrics: deps.metrics,
    }),
    { ...(signal ? { signal } : {}), configVersion: snapshot.version },
  );
}

/**
 * A run's outcome as it is stored: a completed result carries the message's evidence (issue 16);
 * `terms` are the job's search terms; `error` when the evidence could not be built (then the outcome
 * is answered unchanged).
 */
export function withJobEvidence(
  email: Email,
  outcome: RunOutcome,
  snapshot: ConfigSnapshot,
): ReturnType<typeof attachEvidence> {
  return attachEvidence(email, outcome, { authservIds: snapshot.authservIds });
}

/**
 * What `jobs.finish` stores of a run: its outcome, its search terms and, where the store keeps a
 * sender history (`withSenders`), the sender seen at `at` (it feeds the sender-history provider).
 */
export function jobFinishOf(
  jobId: string,
  email: Email,
  run: { outcome: RunOutcome; terms?: string[] | undefined },
  withSenders: boolean,
  at: Date,
): JobFinish {
  const { outcome } = run;
  return {
    job_id: jobId,
    outcome,
    ...(run.terms ? { terms: run.terms } : {}),
    sender: withSenders
      ? {
          address: email.headers.sender,
          at,
          is_phishing: outcome.status === 'completed' ? outcome.result.is_phishing : null,
        }
      : undefined,
  };
}
