export {
  type AggregateInput,
  aggregate,
  DEFAULT_THRESHOLDS,
  probabilityOf,
  verdictFor,
} from './aggregate.ts';
export { type CompiledCondition, checkCondition, compileCondition } from './cel.ts';
export { createCelEnvironment, linearRegExp } from './cel-matches.ts';
export {
  type ConditionPosition,
  type ConditionReference,
  checkConditionReferences,
  conditionReferences,
  type ReferenceScope,
} from './cel-references.ts';
export { type Clock, realClock } from './clock.ts';
export {
  type CompiledAnalyzer,
  type CompiledStage,
  type CompiledWorkflow,
  type CompileOptions,
  compileWorkflow,
} from './compile.ts';
export {
  /** A compiled configuration: workflows, service settings, the analyzers' settings. */
  type ConfigSnapshot,
  /** What an orchestrator (or a milter analysing inline) reads its configuration from. */
  type ConfigSource,
  /** A configuration source over a loader: reload() swaps the snapshot when the load succeeds. */
  createConfigSource,
  /** Compiles a snapshot from configuration files' content. */
  snapshotFromFiles,
} from './config-snapshot.ts';
export { WORKFLOW_ERROR_CODES } from './errors.ts';
export type { EngineEvent } from './events.ts';
export {
  type AnalyzerCallAnswer,
  DEFAULT_ANALYZER_TIMEOUT_MS,
  type EngineDeps,
  type RunOptions,
  type RunOutcome,
  runWorkflow,
} from './run.ts';
