import { giftCards } from '../../examples/gift-card-analyzer.ts';
import { createPluginApp } from '../../src/index.ts';
import { pluginConformance } from '../../src/testing/index.ts';

// The example of docs/plugins.md passes the conformance suite.
pluginConformance({
  name: 'docs example: gift-cards',
  app: () => createPluginApp({ plugins: [giftCards], internalApiKey: 'example-key' }),
  kind: 'analyzer',
  id: 'gift-cards',
  internalApiKey: 'example-key',
});
