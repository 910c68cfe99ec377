import { apiRetrieverMain } from '@trawl/mailbox-sync';
import { runServiceMain } from '@trawl/platform';
import { graphSettingsFromEnv, retrieverGraphSettings } from './settings.ts';
import { startRetrieverGraph } from './start.ts';

// TRAWL_GRAPH_* (and their *_FILE secrets) belong to this service only: read here.
void runServiceMain(
  'retriever-graph',
  import.meta.url,
  ['redis'],
  apiRetrieverMain('retriever-graph', graphSettingsFromEnv, (cfg, s, ports) =>
    startRetrieverGraph(ports, retrieverGraphSettings(cfg, s)),
  ),
);
