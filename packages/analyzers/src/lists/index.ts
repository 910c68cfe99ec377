import { defineAnalyzer } from '@trawl/plugin-sdk';
import { analyzeLists } from './analyzer.ts';
import { ListsSettings } from './settings.ts';
import type { ListCache } from './source.ts';

export { createListCache, type ListCache } from './source.ts';

export interface ListsDeps {
  /** The lists in memory (createListCache over the store's `lists`); without one it abstains. */
  cache?: ListCache | undefined;
  now?: () => number;
}

/**
 * The `lists` analyzer: the organisation's allow and block lists (issue 32) as scored symbols.
 * Runs where the store is (the orchestrator's thread, the analyzers service), not in the worker
 * threads; a lookup is a few map reads.
 */
export function createListsAnalyzer(deps: ListsDeps = {}) {
  const now = deps.now ?? Date.now;
  return defineAnalyzer({
    id: 'lists',
    version: '1.0.0',
    description:
      "The organisation's allow and block lists (sender, sender domain, URL host, attachment SHA-256), managed by admins",
    settings: ListsSettings,
    analyze: async (email, { settings }) => {
      const tables = deps.cache
        ? await deps.cache.tables(settings.max_age_seconds * 1000)
        : { get: () => new Map(), size: 0 };
      return analyzeLists(email, settings, tables, now());
    },
  });
}
