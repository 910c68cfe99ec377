import { type AppConfig, retrieverSettingsOrExit } from '@trawl/config';
import { createServiceLogger, type RunningService, runServiceMain } from '@trawl/platform';
import { imapSettingsFromEnv } from './settings.ts';
import { retrieverImapSettings, startRetrieverImap } from './start.ts';

async function main(cfg: AppConfig, version: string): Promise<RunningService> {
  // TRAWL_IMAP_* belong to this service only: read here (docs/mail-ingestion.md lists them).
  const imap = retrieverSettingsOrExit(cfg, imapSettingsFromEnv);
  const logger = createServiceLogger('retriever-imap', cfg.pinoLevel);
  if (!cfg.retrieverKey)
    logger.warn('TRAWL_RETRIEVER_KEY is not set: /internal/* is open to anyone who can reach it');
  const settings = retrieverImapSettings(cfg, imap, version);
  const running = await startRetrieverImap({ logger }, settings);
  logger.info({ port: settings.listen.port, assembly: running.describe() }, 'assembled');
  return { logger, stop: () => running.close() };
}

void runServiceMain('retriever-imap', import.meta.url, [], main);
