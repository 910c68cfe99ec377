import type { Email } from '@trawl/contracts';
import type { Cache } from '@trawl/platform';
import type { PluginInvoker } from '@trawl/plugin-client';
import type { ConfigSource, RunOutcome } from '@trawl/workflow-engine';
import { createAnalyzerCache } from './analyzer-cache.ts';
import type { OrchestratorMetrics } from './metrics.ts';
import { runJob, withJobEvidence } from './run-job.ts';

export interface JobRunnerDeps {
  invoker: PluginInvoker;
  config: ConfigSource;
  cache?: Cache | undefined;
  metrics?: OrchestratorMetrics | undefined;
}

/**
 * Runs one workflow on one email through the orchestrator's own run (run-job.ts: engine + invoker +
 * analyzer cache, then the evidence), without broker or store: for dry runs and benchmarks. Answers
 * undefined for an unknown workflow.
 */
export function createJobRunner(deps: JobRunnerDeps) {
  const runDeps = {
    invoker: deps.invoker,
    cache: deps.cache ? createAnalyzerCache(deps.cache) : undefined,
    metrics: deps.metrics,
  };
  return async (
    workflowId: string,
    email: Email,
    opts: { signal?: AbortSignal } = {},
  ): Promise<RunOutcome | undefined> => {
    const snapshot = deps.config.getConfig();
    const wf = snapshot.workflows.get(workflowId);
    if (!wf) return undefined;
    const outcome = await runJob(runDeps, snapshot, wf, email, opts.signal);
    // as the orchestrator stores it: a completed result carries the message's evidence
    if (outcome.status !== 'completed') return outcome;
    return withJobEvidence(email, outcome, snapshot).outcome;
  };
}
