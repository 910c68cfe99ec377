export { pluginTargets } from '@trawl/plugin-client';
export { builtinPlugins } from './builtins.ts';
export {
  type FeedbackLearning,
  learnFeedback,
  learnPendingFeedback,
} from './classifier/feedback-learning.ts';
export { createListCache, type ListCache } from './lists/index.ts';
export { createEmbeddedInvoker, type EmbeddedInvoker } from './local-invoker.ts';
export { type AuthResults, readAuthResults } from './shared/auth-results.ts';
export {
  type AnalysisPool,
  type AnalysisPoolOptions,
  type AnalysisPoolStats,
  createAnalysisPool,
} from './worker-pool/analysis-pool.ts';
export { pooledPlugins } from './worker-pool/pooled-plugins.ts';
