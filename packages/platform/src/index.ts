export {
  declareControlQueue,
  declareTopology,
  publishListsChanged,
  topologyNames,
  watchListChanges,
} from './broker/declare-topology.ts';
export {
  batchBody,
  batchJobs,
  createRequestBatcher,
  type ExpandOptions,
  expandDeadBatches,
  expandJobBatches,
  MAX_JOBS_PER_BATCH,
  type RequestBatcher,
} from './broker/job-batches.ts';
export { createMemoryBroker, type MemoryBroker } from './broker/memory-broker.ts';
export {
  createRabbitBroker,
  type RabbitBroker,
  type RabbitBrokerOptions,
} from './broker/rabbit-broker.ts';
export { topicMatches } from './broker/topic-match.ts';
export type * from './broker/types.ts';
export { createMemoryCache } from './cache/memory-cache.ts';
export { createRedisCache, createRedisClient } from './cache/redis-cache.ts';
export type * from './cache/types.ts';
export { PLATFORM_ERRORS } from './errors.ts';
export { type PlatformLogger, silentLogger } from './logger.ts';
export {
  type BodySchema,
  type RetrieverAppBase,
  type RetrieverHttp,
  type RetrieverHttpOptions,
  type RetrieverReply,
  refuseUnknownRoute,
  retrieverHttp,
  sendRetrieverProblem,
} from './retriever-http.ts';
export {
  connectServiceMessaging,
  createServiceBroker,
  createServiceCache,
  type ServiceMessaging,
  type ServicePorts,
  type StoreServicePorts,
} from './service-clients.ts';
export {
  DEFAULT_HARD_EXIT_MS,
  type RunningService,
  runService,
  runServiceMain,
  type ServiceProcess,
  within,
} from './service-lifecycle.ts';
export {
  createServiceLogger,
  packageVersion,
  REDACT_PATHS,
  serviceChild,
  serviceLoggerOptions,
} from './service-logger.ts';
export {
  type Assembled,
  assemble,
  createShutdown,
  type Shutdown,
} from './shutdown.ts';
export {
  type BoundedSmtp,
  boundedSmtp,
  SMTP_MAX_REPLY_BYTES,
  SMTP_REPLY_TIMEOUT_MS,
} from './smtp-replies.ts';
export type * from './store/campaign-repository.ts';
export {
  MIN_TEXT_SIMILARITY,
  MINHASH_BAND_ROWS,
  MINHASH_SIZE,
  signatureSimilarity,
} from './store/campaign-repository.ts';
export type * from './store/classifier-repository.ts';
export { createClassifierRepository } from './store/classifier-repository.ts';
export { createStore } from './store/create-store.ts';
export type * from './store/feedback-repository.ts';
export {
  createFeedbackRepository,
  FEEDBACK_SOURCES,
  FEEDBACK_VERDICTS,
  publicFeedback,
} from './store/feedback-repository.ts';
export {
  /** The statement of a batch of job finishes (group commit, ADR 007), for its benchmark. */
  buildFinishSql,
  /** The parameters of one job finish in that statement, for its benchmark. */
  pushParams,
} from './store/job-finish-batch.ts';
export type * from './store/list-repository.ts';
export { createListRepository } from './store/list-repository.ts';
export type * from './store/message-repository.ts';
export {
  loadMigrations,
  MIGRATION_LOCK_KEY,
  MIGRATIONS_DIR,
  type Migration,
  migrate,
} from './store/migrate.ts';
export { createPgClient } from './store/pg-client.ts';
export { createPgliteClient, restorePgliteDataDir } from './store/pglite-client.ts';
export { type PgliteMaintenance, startPgliteMaintenance } from './store/pglite-maintenance.ts';
export { createMigratedPglite } from './store/pglite-template.ts';
export type * from './store/quarantine-repository.ts';
export type * from './store/repositories.ts';
export { ROLES } from './store/repositories.ts';
export {
  createRetentionRepository,
  type RetentionRepository,
} from './store/retention-repository.ts';
/** SQL for a job's evidence as jsonb (the column of migration 011, or the result's). */
export { EVIDENCE_OF } from './store/rows.ts';
export { storableJson, storableText } from './store/storable-text.ts';
export type * from './store/types.ts';
export type * from './store/webhook-repository.ts';
export { createWebhookRepository, emitEventsSql } from './store/webhook-repository.ts';
export {
  backoffDelayMs,
  createWebhookDispatcher,
  DEFAULT_WEBHOOK_SETTINGS,
  emitWebhookEvent,
  type WebhookDispatcher,
  type WebhookDispatcherDeps,
  type WebhookSettings,
  webhookEventId,
  webhookPayload,
} from './webhooks/dispatcher.ts';
export {
  generateWebhookSecret,
  signWebhook,
  verifyWebhook,
  WEBHOOK_SECRET_PREFIX,
} from './webhooks/signature.ts';
