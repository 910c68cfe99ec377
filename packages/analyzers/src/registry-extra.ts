import type { ClassifierRepository, SenderHistoryRepository } from '@trawl/platform';
import type { PluginDefinition } from '@trawl/plugin-sdk';
import { createClassifierAnalyzer } from './classifier/index.ts';
import { contextAnalyzer } from './context/index.ts';
import { createDirectoryProvider } from './directory/index.ts';
import { createListsAnalyzer, type ListCache } from './lists/index.ts';
import { llmAnalyzer } from './llm/index.ts';
import { createSenderHistoryProvider } from './sender-history/index.ts';
import { createThreatIntelProvider, intelAnalyzer } from './threat-intel/index.ts';

export interface ExtraPluginDeps {
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
 * The llm, context, intel and lists analyzers and the directory / sender-history / threat-intel context
 * providers, by id.
 */
export function extraPlugins(deps: ExtraPluginDeps = {}): Record<string, PluginDefinition> {
  return {
    llm: llmAnalyzer,
    context: contextAnalyzer,
    directory: createDirectoryProvider(),
    'sender-history': createSenderHistoryProvider({ senders: deps.senders }),
    'threat-intel': createThreatIntelProvider(),
    intel: intelAnalyzer,
    lists: createListsAnalyzer({ cache: deps.lists }),
    ...(deps.classifier
      ? { classifier: createClassifierAnalyzer({ source: deps.classifier }) }
      : {}),
  };
}
