import { join } from 'node:path';
import { builtinAnalyzers, loadEvalConfig, runEval } from '@trawl/analyzers/eval';
import { findRepoRoot } from '@trawl/config';

/**
 * The benches' baseline: the messages of `dir` (its phishing/ and ham/ folders) parsed and
 * analysed by the shipped default workflow in-process (`pnpm eval`'s runner), on `workers` worker
 * threads (0: this thread), without the platform around them.
 */
export async function analysisAlone(
  dir: string,
  o: { workers: number; limit?: number | undefined },
): Promise<{ msgsPerSec: number; messages: number; cpuPerMsgMs: number }> {
  const root = findRepoRoot();
  const defaults = join(root, 'config', 'defaults');
  const cfg = loadEvalConfig(root, {
    service: join(defaults, 'service.yaml'),
    workflows: join(defaults, 'workflows.yaml'),
  });
  const r = await runEval({
    dir,
    workflowId: cfg.service.workflow.default_workflow_id,
    workflows: cfg.workflows,
    service: cfg.service,
    registry: builtinAnalyzers,
    concurrency: 4,
    workers: o.workers,
    ...(o.limit !== undefined ? { limit: o.limit } : {}),
  });
  return { msgsPerSec: r.msgs_per_s, messages: r.messages, cpuPerMsgMs: r.cpu_ms_per_msg };
}
