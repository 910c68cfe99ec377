import { describe, expect, it } from 'vitest';
import { builtinAnalyzers, builtinPlugins, offlineAnalyzers } from '../../src/registry.ts';

// Issue 30: three files registered the built-ins, the classifier twice (an abstaining one, replaced
// by a second registry when a store was given). One registry now names each plugin once.
describe('the analyzer registry', () => {
  it('names every built-in once, each under its own id', () => {
    const all = builtinPlugins();
    expect(Object.keys(all).sort()).toEqual(
      [
        ...Object.keys(offlineAnalyzers),
        'classifier',
        'context',
        'directory',
        'intel',
        'lists',
        'llm',
        'sender-history',
        'threat-intel',
      ].sort(),
    );
    for (const [id, def] of Object.entries(all)) expect(def.id).toBe(id);
  });

  it('gives the eval the offline analyzers and the same classifier', () => {
    expect(Object.keys(builtinAnalyzers).sort()).toEqual(
      [...Object.keys(offlineAnalyzers), 'classifier'].sort(),
    );
    expect(builtinAnalyzers.classifier?.id).toBe('classifier');
  });
});
