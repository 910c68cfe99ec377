import { defineAnalyzer } from '@trawl/plugin-sdk';
import { analyzeClassifier } from './analyzer.ts';
import { ClassifierSettings } from './settings.ts';
import { type CachedSource, cachedSource, type ModelSource } from './source.ts';

export { analyzeClassifier } from './analyzer.ts';
export { learn, learnMany, unlearn } from './learn.ts';
export { MemoryModel } from './model.ts';
export { ClassifierSettings } from './settings.ts';
export { cachedSource, memorySource } from './source.ts';
export {
  exportState,
  importState,
} from './state-file.ts';
export { featuresOf, tokensOf } from './tokenize.ts';

export interface ClassifierDeps {
  /** The learnt state (the store's `classifier`, or a model in memory); without one it abstains. */
  source?: ModelSource | undefined;
}

/**
 * The `classifier` analyzer: a statistical text classifier (OSB tokens, Robinson–Fisher Bayes)
 * learnt per deployment; one bounded symbol, or none while it abstains.
 */
export function createClassifierAnalyzer(deps: ClassifierDeps = {}) {
  let cached: { key: string; source: CachedSource } | undefined;
  return defineAnalyzer({
    id: 'classifier',
    version: '1.0.0',
    description:
      "A statistical text classifier learnt from this deployment's mail (OSB tokens, Bayes); abstains until it has learnt 200 messages of each class",
    settings: ClassifierSettings,
    analyze: (email, { settings }) => {
      let source: CachedSource | undefined;
      if (deps.source) {
        const key = `${settings.cache_ttl_ms}/${settings.token_cache_entries}`;
        if (cached?.key !== key)
          cached = {
            key,
            source: cachedSource(deps.source, {
              ttlMs: settings.cache_ttl_ms,
              maxEntries: settings.token_cache_entries,
            }),
          };
        source = cached.source;
      }
      return analyzeClassifier(email, settings, source);
    },
  });
}
