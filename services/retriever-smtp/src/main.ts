import {
  ConfigError,
  exitOnSettingsProblems,
  exitWithProblems,
  loadConfigOrExit,
  refusePlatformKeyForRetriever,
} from '@trawl/config';
import {
  createServiceLogger,
  packageVersion,
  type RunningService,
  runService,
} from '@trawl/platform';
import { createSmtpFilter } from './create-filter-service.ts';
import { smtpSettingsFromEnv } from './settings.ts';

const version = (): string => packageVersion(new URL('../package.json', import.meta.url));

async function main(): Promise<RunningService> {
  const cfg = loadConfigOrExit({
    needs: { postgres: false, rabbitmq: false, redis: false, secretKey: false },
  });
  // TRAWL_SMTP_* belong to this service only: read here (docs/smtp-filter.md lists them).
  const settings = smtpSettingsFromEnv(process.env);
  if (!settings.ok) exitOnSettingsProblems(settings.problems);
  const logger = createServiceLogger('retriever-smtp', cfg.pinoLevel);
  refusePlatformKeyForRetriever(cfg);
  if (!cfg.retrieverKey) {
    exitWithProblems(
      new ConfigError([
        {
          path: 'TRAWL_RETRIEVER_KEY',
          message:
            'required: the filter pushes mail as itself (trawl credentials retriever <its name in TRAWL_MAIL_RETRIEVERS>)',
        },
      ]),
    );
  }
  const s = settings.value;
  const service = createSmtpFilter(s, {
    logger,
    credential: cfg.retrieverKey,
    version: version(),
  });
  // TRAWL_RETRIEVER_SMTP_HOST / _PORT: read by @trawl/config (docker/healthcheck.mjs uses the port).
  const { host, port } = cfg.retrieverSmtp;
  await service.app.listen({ host, port });
  const smtp = await service.start();
  logger.info(
    {
      mode: s.mode,
      http: port,
      smtp: `${smtp.host}:${smtp.port}`,
      return: `${s.return_host}:${s.return_port}`,
    },
    'listening',
  );

  return { logger, stop: () => service.stop() };
}

void runService('retriever-smtp', main);
