import { type AppConfig, retrieverSettingsOrExit } from '@trawl/config';
import {
  createServiceCache,
  createServiceLogger,
  type RunningService,
  runServiceMain,
} from '@trawl/platform';
import { gmailSettingsFromEnv, retrieverGmailSettings } from './settings.ts';
import { startRetrieverGmail } from './start.ts';

async function main(cfg: AppConfig, version: string): Promise<RunningService> {
  // TRAWL_GMAIL_* (and their *_FILE secrets) belong to this service only: read here.
  const gmail = retrieverSettingsOrExit(cfg, gmailSettingsFromEnv);
  const logger = createServiceLogger('retriever-gmail', cfg.pinoLevel);
  if (!cfg.retrieverKey)
    logger.warn('TRAWL_RETRIEVER_KEY is not set: /internal/* is open to anyone who can reach it');
  // The history ids live in the shared cache (Redis), as the mail orchestrator's delivery state.
  const cache = createServiceCache(cfg, 'retriever-gmail', logger);
  const service = await startRetrieverGmail(
    { logger, cache, version },
    retrieverGmailSettings(cfg, gmail),
  );
  return {
    logger,
    async stop() {
      await service.close();
      await cache.close();
    },
  };
}

void runServiceMain('retriever-gmail', import.meta.url, ['redis'], main);
