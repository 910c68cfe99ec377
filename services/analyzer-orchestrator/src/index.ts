// The analyzer orchestrator's public face (issue 30): what embedded mode, the benchmarks and the
// tests across services use. Everything else stays inside the service.
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
export {
  /** A compiled configuration: workflows, service settings, the analyzers' settings. */
  type ConfigSnapshot,
  /** What the orchestrator reads its configuration from. */
  type ConfigSource,
  /** A configuration source over a loader: reload() swaps the snapshot when the load succeeds. */
  createConfigSource,
  /** Compiles a snapshot from configuration files' content. */
  snapshotFromFiles,
} from './config-snapshot.ts';
export {
  /** The analysis settings of a milter that analyses inline (ADR 013 section 5). */
  type InlineAnalysisPorts,
  type InlineAnalysisSettings,
  type InlineSubmission,
  type InlineVerdict,
  inlineAnalysisSettings,
  type RunningInlineAnalysis,
  /** The orchestrator's analysis and job finishing in another process: verdict first, record after. */
  startInlineAnalysis,
} from './inline-analysis.ts';
export {
  /** Runs one job through the engine with the orchestrator's deadlines (benchmarks and tests). */
  createJobRunner,
} from './job-runner.ts';
export {
  /** The orchestrator's settings from the configuration: the one place its defaults live. */
  orchestratorSettings,
} from './settings.ts';
