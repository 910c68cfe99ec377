import type { Email } from '@trawl/contracts';
import type { Cache } from '@trawl/platform';
import type { PluginInvoker } from '@trawl/plugin-client';
import { type RunOutcome, runWorkflow } from '@trawl/workflow-engine';
import { createAnalyzerCache } from './analyzer-cache.ts';
import type { ConfigSource } from './config-snapshot.ts';
import { createEngineDeps } from './engine-deps.ts';
import { attachEvidence } from './evidence.ts';
import type { OrchestratorMetrics } from './metrics.ts';

export interface JobRunnerDeps {
  invoker: PluginInvoker;
  config: ConfigSource;
  cache?: Cache | undefined;
  metrics?: OrchestratorMetrics | undefined;
}

/**
 * Runs one workflow on one email the way the orchestrator does (engine + invoker + analyzer cache),
 * without broker or store: for dry runs and benchmarks. Answers undefined for an unknown workflow.
 */
export function createJobRunner(deps: JobRunnerDeps) {
  const analyzerCache = deps.cache ? createAnalyzerCache(deps.cache) : undefined;
  return async (
    workflowId: string,
    email: Email,
    opts: { signal?: AbortSignal } = {},
  ): Promise<RunOutcome | undefined> => {
    const snapshot = deps.config.getConfig();
    const wf = snapshot.workflows.get(workflowId);
    if (!wf) return undefined;
    const outcome = await runWorkflow(
      wf,
      email,
      createEngineDeps({
        invoker: deps.invoker,
        config: snapshot,
        email,
        cache: analyzerCache,
        metrics: deps.metrics,
      }),
      { ...(opts.signal ? { signal: opts.signal } : {}), configVersion: snapshot.version },
    );
    // as the orchestrator stores it: a completed result carries the message's evidence
    if (outcome.status !== 'completed') return outcome;
    return attachEvidence(email, outcome, { authservIds: snapshot.authservIds }).outcome;
  };
}
export type JobRunner = ReturnType<typeof createJobRunner>;
