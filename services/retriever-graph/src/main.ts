import { type AppConfig, retrieverSettingsOrExit } from '@trawl/config';
import {
  createServiceCache,
  createServiceLogger,
  type RunningService,
  runServiceMain,
} from '@trawl/platform';
import { graphSettingsFromEnv, retrieverGraphSettings } from './settings.ts';
import { startRetrieverGraph } from './start.ts';

async function main(cfg: AppConfig, version: string): Promise<RunningService> {
  // TRAWL_GRAPH_* (and their *_FILE secrets) belong to this service only: read here.
  const graph = retrieverSettingsOrExit(cfg, graphSettingsFromEnv);
  const logger = createServiceLogger('retriever-graph', cfg.pinoLevel);
  if (!cfg.retrieverKey)
    logger.warn('TRAWL_RETRIEVER_KEY is not set: /internal/* is open to anyone who can reach it');
  // The sync tokens live in the shared cache (Redis), as the mail orchestrator's delivery state.
  const cache = createServiceCache(cfg, 'retriever-graph', logger);
  const service = await startRetrieverGraph(
    { logger, cache, version },
    retrieverGraphSettings(cfg, graph),
  );
  return {
    logger,
    async stop() {
      await service.close();
      await cache.close();
    },
  };
}

void runServiceMain('retriever-graph', import.meta.url, ['redis'], main);
