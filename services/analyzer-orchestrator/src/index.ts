// The invokers the orchestrator takes (re-exported for main.ts, embedded mode and the benchmark).
export {
  createInProcessInvoker,
  createPluginClient,
  type PluginClient,
  type PluginInvoker,
} from '@trawl/plugin-client';
export { analyzerCacheKey, createAnalyzerCache, emailHash } from './analyzer-cache.ts';
export {
  buildOrchestrator,
  type Orchestrator,
  type OrchestratorDeps,
  type OrchestratorOptions,
  SERVICE_NAME,
} from './app.ts';
export {
  type ConfigSnapshot,
  type ConfigSource,
  createConfigSource,
  type SnapshotInput,
  snapshotFromFiles,
} from './config-snapshot.ts';
export { createEngineDeps, type EngineDepsOptions } from './engine-deps.ts';
export { ORCHESTRATOR_ERROR_CODES } from './errors.ts';
export { createJobRunner, type JobRunner, type JobRunnerDeps } from './job-runner.ts';
export { createMetrics, type OrchestratorMetrics } from './metrics.ts';
