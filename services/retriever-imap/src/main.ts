import { ConfigError, exitWithProblems, loadConfigOrExit } from '@trawl/config';
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
  if (!settings.ok) {
    exitWithProblems(
      new ConfigError(
        settings.problems.map((p) => {
          const [path, ...rest] = p.split(': ');
          return { path: path ?? '', message: rest.join(': ') };
        }),
      ),
    );
  }
  // TRAWL_RETRIEVER_IMAP_HOST / _PORT: read by @trawl/config (docker/healthcheck.mjs uses the port).
  const { host, port } = cfg.retrieverImap;
  const logger = createServiceLogger('retriever-imap', cfg.pinoLevel);
  // Its own credential (`trawl credentials retriever <name>`), never the platform key: with that
  // one a retriever could speak for every other retriever and read every plugin's settings.
  if (cfg.internalApiKey) {
    exitWithProblems(
      new ConfigError([
        {
          path: 'INTERNAL_API_KEY',
          message:
            'the platform key must not be given to a retriever: set TRAWL_RETRIEVER_KEY to its own credential (trawl credentials retriever <name>) instead',
        },
      ]),
    );
  }
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
