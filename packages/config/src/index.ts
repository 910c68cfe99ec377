export * from './app-config.ts';
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
