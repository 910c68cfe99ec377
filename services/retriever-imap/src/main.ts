import {
  exitOnSettingsProblems,
  loadConfigOrExit,
  refusePlatformKeyForRetriever,
} from '@trawl/config';
import {
  createServiceLogger,
  packageVersion,
  type RunningService,
  runService,
} from '@trawl/platform';
import { createImapRetriever } from './create-retriever.ts';
import { imapSettingsFromEnv } from './settings.ts';

const version = (): string => packageVersion(new URL('../package.json', import.meta.url));

async function main(): Promise<RunningService> {
  const cfg = loadConfigOrExit({
    needs: { postgres: false, rabbitmq: false, redis: false, secretKey: false },
  });
  // TRAWL_IMAP_* belong to this service only: read here (docs/mail-ingestion.md lists them).
  const settings = imapSettingsFromEnv(process.env);
  if (!settings.ok) exitOnSettingsProblems(settings.problems);
  // TRAWL_RETRIEVER_IMAP_HOST / _PORT: read by @trawl/config (docker/healthcheck.mjs uses the port).
  const { host, port } = cfg.retrieverImap;
  const logger = createServiceLogger('retriever-imap', cfg.pinoLevel);
  refusePlatformKeyForRetriever(cfg);
  if (!cfg.retrieverKey)
    logger.warn('TRAWL_RETRIEVER_KEY is not set: /internal/* is open to anyone who can reach it');
  const service = createImapRetriever(settings.value, {
    logger,
    internalApiKey: cfg.retrieverKey,
    version: version(),
  });
  service.start();
  await service.app.listen({ host, port });
  logger.info({ port, imap: `${settings.value.host}:${settings.value.port}` }, 'listening');

  return { logger, stop: () => service.stop() };
}

void runService('retriever-imap', main);
