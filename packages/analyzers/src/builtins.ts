import type { PluginDefinition } from '@trawl/plugin-sdk';
import { builtinAnalyzers } from './registry.ts';
import { type ExtraPluginDeps, extraPlugins } from './registry-extra.ts';

/** Every built-in analyzer and context provider, by id. */
export function builtinPlugins(deps: ExtraPluginDeps = {}): Record<string, PluginDefinition> {
  return {
    ...builtinAnalyzers,
    ...extraPlugins(deps),
  };
}
