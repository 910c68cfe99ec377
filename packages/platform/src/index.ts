export { declareTopology, topologyNames } from './broker/declare-topology.ts';
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
  createServiceLogger,
  packageVersion,
  REDACT_PATHS,
  serviceChild,
  serviceLoggerOptions,
} from './service-logger.ts';
export type * from './store/classifier-repository.ts';
export { createClassifierRepository } from './store/classifier-repository.ts';
export { createStore } from './store/create-store.ts';
export {
  loadMigrations,
  MIGRATION_LOCK_KEY,
  MIGRATIONS_DIR,
  type Migration,
  migrate,
} from './store/migrate.ts';
export { createPgClient } from './store/pg-client.ts';
export { createPgliteClient, restorePgliteDataDir } from './store/pglite-client.ts';
export { createMigratedPglite } from './store/pglite-template.ts';
export type * from './store/repositories.ts';
export { ROLES } from './store/repositories.ts';
export type * from './store/types.ts';
