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
  BIG_PLATFORMS,
  isSuspicious,
  type Lure,
  lureOf,
  recordCampaign,
  textSignature,
} from './campaigns.ts';
export {
  type ConfigSnapshot,
  type ConfigSource,
  createConfigSource,
  type SnapshotInput,
  snapshotFromFiles,
} from './config-snapshot.ts';
export { createEngineDeps, type EngineDepsOptions } from './engine-deps.ts';
export { ORCHESTRATOR_ERROR_CODES } from './errors.ts';
export {
  attachEvidence,
  buildEvidence,
  type EvidenceOptions,
  scoreOf,
  withEvidence,
} from './evidence.ts';
export { createJobRunner, type JobRunner, type JobRunnerDeps } from './job-runner.ts';
export { createMetrics, type OrchestratorMetrics } from './metrics.ts';
export {
  createReportNotifier,
  fill as fillTemplate,
  loadTemplate,
  type MailTransport,
  NOTIFY_ERROR_CODES,
  type NotifyOutcome,
  NotifyTemplateError,
  notifyTransport,
  parseTemplate,
  type ReportNotifier,
  type ReportNotifierDeps,
  type ReportNotifierOptions,
  type ReportTemplate,
  renderNotification,
  reportNotifierFromConfig,
  reportNotifyQueue,
  TEMPLATE_PLACEHOLDERS,
} from './report-notifier.ts';
export {
  createRetention,
  RETENTION_LOCK_KEY,
  type Retention,
  type RetentionOptions,
  type RetentionPolicy,
  type RetentionReport,
  retentionOfStore,
} from './retention.ts';
