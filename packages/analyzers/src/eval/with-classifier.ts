import type { PluginDefinition } from '@trawl/plugin-sdk';
import { createClassifierAnalyzer } from '../classifier/index.ts';
import { memorySource } from '../classifier/source.ts';
import { modelOfState } from '../classifier/state-file.ts';

/** The registry with a `classifier` that reads an exported state file (unchanged without one). */
export async function withClassifier(
  registry: Record<string, PluginDefinition>,
  stateFile: string | undefined,
): Promise<Record<string, PluginDefinition>> {
  if (!stateFile) return registry;
  const model = await modelOfState(stateFile);
  return { ...registry, classifier: createClassifierAnalyzer({ source: memorySource(model) }) };
}
