import { type AppConfig, retrieverSettingsOrExit } from '@trawl/config';
import { createServiceLogger, type RunningService, runServiceMain } from '@trawl/platform';
import { createImapRetriever } from './create-retriever.ts';
import { imapSettingsFromEnv } from './settings.ts';

async function main(cfg: AppConfig, version: string): Promise<RunningService> {
  // TRAWL_IMAP_* belong to this service only: read here (docs/mail-ingestion.md lists them).
  const settings = retrieverSettingsOrExit(cfg, imapSettingsFromEnv);
  // TRAWL_RETRIEVER_IMAP_HOST / _PORT: read by @trawl/config (docker/healthcheck.mjs uses the port).
  const { host, port } = cfg.retrieverImap;
  const logger = createServiceLogger('retriever-imap', cfg.pinoLevel);
  if (!cfg.retrieverKey)
    logger.warn('TRAWL_RETRIEVER_KEY is not set: /internal/* is open to anyone who can reach it');
  const service = createImapRetriever(settings, {
    logger,
    internalApiKey: cfg.retrieverKey,
    version,
  });
  service.start();
  await service.app.listen({ host, port });
  logger.info({ port, imap: `${settings.host}:${settings.port}` }, 'listening');

  return { logger, stop: () => service.stop() };
}

void runServiceMain('retriever-imap', import.meta.url, [], main);
