// The analyzer orchestrator's public face (issue 30): what embedded mode, the benchmarks and the
// tests across services use. Everything else stays inside the service.

// The configuration snapshot moved to @trawl/workflow-engine (ADR 024: the milter compiles it too).
export {
  type ConfigSnapshot,
  type ConfigSource,
  createConfigSource,
  snapshotFromFiles,
} from '@trawl/workflow-engine';
// The parts a milter analysing inline (ADR 024) runs and records a job with, as this service does.
export { type AnalysisSetup, startAnalysis } from './analysis-setup.ts';
export {
  /** Builds the orchestrator over its ports (store, broker, cache, invoker); it never listens. */
  buildOrchestrator,
  /** A built orchestrator: start consuming, stop, its metrics. */
  type Orchestrator,
  /** The ports and options buildOrchestrator takes. */
  type OrchestratorDeps,
} from './app.ts';
export {
  /** What startOrchestrator compiled (pools, deadlines, batch sizes, stop order): ADR 021. */
  type OrchestratorDescription,
  /** The running orchestrator: its parts, describe() and one ordered close(). */
  type RunningOrchestrator,
  /** The orchestrator's one assembly (main.ts and embedded mode): ports and settings in, running. */
  startOrchestrator,
} from './assembly.ts';
export { type CampaignQueue, createCampaignQueue } from './campaign-queue.ts';
export { consumeControlEvents } from './control-events.ts';
export { ORCHESTRATOR_ERROR_CODES } from './errors.ts';
export {
  /** Runs one job through the engine with the orchestrator's deadlines (benchmarks and tests). */
  createJobRunner,
} from './job-runner.ts';
export { createMetrics, type OrchestratorMetrics } from './metrics.ts';
export { jobFinishOf, runJob, withJobEvidence } from './run-job.ts';
export type { OrchestratorSettings } from './settings.ts';
export {
  /** The orchestrator's settings from the configuration: the one place its defaults live. */
  orchestratorSettings,
} from './settings.ts';
export { createSettlement, type Settlement } from './settlement.ts';
export { delayUntilAborted } from './stop-delay.ts';
