import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { builtinAnalyzers, loadEvalConfig, runEval } from '@trawl/analyzers/eval';
import { findRepoRoot } from '@trawl/config';
import { forkBench } from './support/fork-bench.ts';

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

/**
 * The baseline as the milter it is set beside runs: in a fresh process of its own (its CPU not the
 * bench's, nor shared with what the bench did before), after `warmup` messages as the milter was
 * warmed, `runs` measured runs of `dir`; the median CPU ms per message and each run's.
 */
export async function analysisAloneWarm(
  dir: string,
  o: { warmup: number; runs: number },
): Promise<{ cpuPerMsgMs: number; runs: number[]; warmed: number }> {
  const here = dirname(fileURLToPath(import.meta.url));
  const child = forkBench(join(here, 'analysis-alone-process.ts'), JSON.stringify({ dir, ...o }));
  const answer = await new Promise<{ cpu: number[]; warmed: number }>((resolve, reject) => {
    child.once('message', (m) => resolve(m as { cpu: number[]; warmed: number }));
    child.once('exit', (code) => reject(new Error(`analysis-alone process exited (${code})`)));
  });
  const runs = [...answer.cpu].sort((a, b) => a - b);
  return {
    cpuPerMsgMs: runs[Math.floor(runs.length / 2)] as number,
    runs: answer.cpu,
    warmed: answer.warmed,
  };
}
