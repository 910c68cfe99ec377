export { pluginTargets } from '@trawl/plugin-client';
export {
  /** The orchestrator's invoker of the built-ins: in-process (worker pool) or over HTTP (ADR 021). */
  createBuiltinInvoker,
} from './builtin-invoker.ts';
/** The label an analyst's feedback teaches the classifier (feedback learning, @trawl/investigation). */
export type { LearnLabel } from './classifier/model.ts';
export {
  /** The classifier's tokenizer id, stored beside the token counts it learnt. */
  TOKENIZER,
  /** The classifier's tokens of an Email (what learning from feedback counts). */
  tokensOf,
} from './classifier/tokenize.ts';
export { createListCache, type ListCache } from './lists/index.ts';
export { createEmbeddedInvoker, type EmbeddedInvoker } from './local-invoker.ts';
export {
  /** Every built-in analyzer and context provider by id, given the stores they read. */
  builtinPlugins,
} from './registry.ts';
export { type AuthResults, readAuthResults } from './shared/auth-results.ts';
export {
  type AnalysisPool,
  type AnalysisPoolOptions,
  type AnalysisPoolStats,
  createAnalysisPool,
} from './worker-pool/analysis-pool.ts';
export { pooledPlugins } from './worker-pool/pooled-plugins.ts';
