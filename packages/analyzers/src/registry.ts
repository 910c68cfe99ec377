import type { AnalyzerDefinition, PluginDefinition } from '@trawl/plugin-sdk';
import { analyzer as attachments } from './attachments/index.ts';
import { analyzer as classifier } from './classifier/index.ts';
import { analyzer as content } from './content/index.ts';
import { analyzer as headers } from './headers/index.ts';
import { analyzer as rules } from './rules/index.ts';
import { analyzer as scorer } from './scorer/index.ts';
import { analyzer as urls } from './urls/index.ts';

/** The offline detection analyzers (no network, no state); `scorer` combines the others' symbols. */
// biome-ignore lint/suspicious/noExplicitAny: each analyzer has its own settings type
export const offlineAnalyzers: Record<string, AnalyzerDefinition<any>> = {
  headers,
  urls,
  content,
  attachments,
  rules,
  scorer,
};

/**
 * Every built-in plugin by id. The offline analyzers above; the llm and context analyzers and the
 * directory / sender-history context providers are added here by their owners:
 *   ...extraPlugins()  (llm, context, directory, sender-history; registry-extra.ts)
 */
export const builtinAnalyzers: Record<string, PluginDefinition> = {
  ...offlineAnalyzers,
  // without a store it abstains; registry-extra.ts gives the one that reads the learnt state (it
  // is not among the offline analyzers: the analysis worker threads have no store)
  classifier,
};
