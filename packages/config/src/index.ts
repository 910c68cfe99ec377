export {
  /** The values of NODE_ENV Trawl knows. */
  APP_ENVS,
  /** The whole configuration of a process, read once from the environment. */
  type AppConfig,
  /** One of APP_ENVS. */
  type AppEnv,
  /** What the calling service uses. */
  type ConfigNeeds,
  /** A connection URL and whether the user gave it (explicit) or it was built from its parts. */
  type ConnectionUrl,
  /** The PostgreSQL connection and pool settings. */
  type DatabaseConfig,
  /** The log levels LOG_LEVEL accepts. */
  LOG_LEVEL_NAMES,
  /** What loadConfig reads: the variables (default process.env), the root, the needs. */
  type LoadConfigOptions,
  /** One of LOG_LEVEL_NAMES. */
  type LogLevel,
  /** The same level as pino spells it. */
  type PinoLevel,
  /** The RabbitMQ connection settings. */
  type RabbitmqConfig,
  /** The Redis maxmemory policies Trawl accepts for its cache. */
  REDIS_MAXMEMORY_POLICIES,
  /** The Redis connection and cache settings. */
  type RedisConfig,
  /** One of REDIS_MAXMEMORY_POLICIES. */
  type RedisMaxmemoryPolicy,
  /** Which proxies in front of the gateway are believed about the client address… */
  type TrustProxy,
  /** How the webhook dispatcher (@trawl/platform's createWebhookDispatcher) delivers. */
  type WebhookSettings,
} from './app-config.ts';
export { canonicalJson, contentVersion } from './canonical.ts';
export { cliOptions } from './cli-options.ts';
export {
  DEFAULTS,
  DEV_ONLY_VARIABLES,
  EMBEDDED_HOST_DEFAULT,
  ENV_VARIABLE_NAMES,
  FILE_SECRET_VARIABLES,
  SECRET_VARIABLES,
} from './defaults.ts';
export { type DotenvResult, parseDotenv } from './dotenv.ts';
export { CONFIG_ERROR_CODES, ConfigError, type ConfigProblem, formatProblem } from './errors.ts';
export { loadConfig } from './load-config.ts';
export { exitWithProblems, loadConfigOrExit, retrieverSettingsOrExit } from './load-or-exit.ts';
export { corpusDir, findRepoRoot } from './repo-root.ts';
export {
  analyzerVersions,
  diffFiles,
  type FilesDiff,
  type LoadedFiles,
  type LoadServiceFilesOptions,
  loadServiceFiles,
} from './service-files.ts';
export {
  type SettingsResult,
  type SettingsSchema,
  settingsReader,
} from './settings-from-env.ts';
export { TEST_INFRA_DEFAULTS, type TestInfra, testInfra } from './test-infra.ts';
export { buildAmqpUrl, buildPostgresUrl, buildRedisUrl, redactUrl } from './urls.ts';
export {
  type CheckReferences,
  type ConditionScope,
  checkWorkflows,
  validateWorkflow,
  validateWorkflows,
  type WorkflowCheck,
  type WorkflowValidationContext,
  workflowContextFor,
} from './validate-workflows.ts';
