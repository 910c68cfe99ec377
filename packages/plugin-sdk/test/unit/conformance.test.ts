import { createPluginApp } from '../../src/index.ts';
import { pluginConformance } from '../../src/testing/index.ts';
import { domainProvider, echoAnalyzer } from './fixtures.ts';

pluginConformance({
  name: 'echo analyzer (single plugin, with key)',
  app: () => createPluginApp({ plugins: [echoAnalyzer], internalApiKey: 'k-123' }),
  kind: 'analyzer',
  id: 'echo',
  internalApiKey: 'k-123',
});

pluginConformance({
  name: 'domains provider (inside a multi-plugin app)',
  app: () => createPluginApp({ plugins: [echoAnalyzer, domainProvider] }),
  basePath: '/domains',
  kind: 'context_provider',
  id: 'domains',
});
