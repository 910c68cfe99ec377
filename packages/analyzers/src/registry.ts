import type { ClassifierRepository, SenderHistoryRepository } from '@trawl/platform';
import type { AnalyzerDefinition, PluginDefinition } from '@trawl/plugin-sdk';
import { analyzer as attachments } from './attachments/index.ts';
import { createClassifierAnalyzer } from './classifier/index.ts';
import { analyzer as content } from './content/index.ts';
import { contextAnalyzer } from './context/index.ts';
import { createDirectoryProvider } from './directory/index.ts';
import { analyzer as headers } from './headers/index.ts';
import { createListsAnalyzer, type ListCache } from './lists/index.ts';
import { llmAnalyzer } from './llm/index.ts';
import { analyzer as rules } from './rules/index.ts';
import { analyzer as scorer } from './scorer/index.ts';
import { createSenderHistoryProvider } from './sender-history/index.ts';
import { createThreatIntelProvider, intelAnalyzer } from './threat-intel/index.ts';
import { analyzer as urls } from './urls/index.ts';

/**
 * The one registry of the built-in analyzers and context providers (issue 30: it was three files,
 * with the classifier registered twice). Each plugin is named here once.
 */

/**
 * The offline detection analyzers (CPU only: no network, no database, no state), the ones the
 * analysis pool's worker threads run; `scorer` combines the others' symbols.
 */
// biome-ignore lint/suspicious/noExplicitAny: each analyzer has its own settings type
export const offlineAnalyzers: Record<string, AnalyzerDefinition<any>> = {
  headers,
  urls,
  content,
  attachments,
  rules,
  scorer,
};

/** What the built-in plugins read; each one without its dependency abstains or finds nothing. */
export interface BuiltinPluginDeps {
  /** The sender history store; without one `sender-history` answers `available: false`. */
  senders?: SenderHistoryRepository | undefined;
  /** The learnt classifier's state; without one `classifier` abstains. */
  classifier?: Pick<ClassifierRepository, 'totals' | 'counts'> | undefined;
  /**
   * The allow and block lists in memory (createListCache over the store's `lists`, reloaded on
   * `lists.changed`); without them `lists` finds nothing.
   */
  lists?: ListCache | undefined;
}

/**
 * Every built-in analyzer and context provider, by id: the offline analyzers, the classifier (not
 * offline: it reads the learnt state), the llm, context, intel and lists analyzers and the
 * directory, sender-history and threat-intel context providers.
 */
export function builtinPlugins(deps: BuiltinPluginDeps = {}): Record<string, PluginDefinition> {
  return {
    ...offlineAnalyzers,
    classifier: createClassifierAnalyzer({ source: deps.classifier }),
    llm: llmAnalyzer,
    context: contextAnalyzer,
    directory: createDirectoryProvider(),
    'sender-history': createSenderHistoryProvider({ senders: deps.senders }),
    'threat-intel': createThreatIntelProvider(),
    intel: intelAnalyzer,
    lists: createListsAnalyzer({ cache: deps.lists }),
  };
}

/**
 * The analyzers `pnpm eval` runs (no network, no store): the offline ones and the classifier of
 * builtinPlugins, abstaining unless the eval gives it a learnt state (eval/with-classifier.ts).
 */
export const builtinAnalyzers: Record<string, PluginDefinition> = (() => {
  const { classifier } = builtinPlugins();
  return { ...offlineAnalyzers, classifier: classifier! };
})();
