import {
  type AppConfig,
  ConfigError,
  exitWithProblems,
  retrieverSettingsOrExit,
} from '@trawl/config';
import { createServiceLogger, type RunningService, runServiceMain } from '@trawl/platform';
import { createSmtpFilter } from './create-filter-service.ts';
import { startMilter } from './milter/start-milter.ts';
import { smtpSettingsFromEnv } from './settings.ts';

async function main(cfg: AppConfig, version: string): Promise<RunningService> {
  // TRAWL_SMTP_* belong to this service only: read here (docs/smtp-filter.md lists them).
  const s = retrieverSettingsOrExit(cfg, smtpSettingsFromEnv);
  const logger = createServiceLogger('retriever-smtp', cfg.pinoLevel);
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
  const service = createSmtpFilter(s, { logger, credential: cfg.retrieverKey, version });
  // TRAWL_RETRIEVER_SMTP_HOST / _PORT: read by @trawl/config (docker/healthcheck.mjs uses the port).
  const { host, port } = cfg.retrieverSmtp;
  await service.app.listen({ host, port });
  if (s.mode === 'milter') {
    // TRAWL_MILTER_HOST / _PORT / _MAX_PACKET_BYTES: read by @trawl/config
    const milter = await startMilter(service, { settings: s, milter: cfg.milter, logger });
    logger.info(
      { mode: s.mode, http: port, milter: `${milter.address.host}:${milter.address.port}` },
      'listening',
    );
    return {
      logger,
      stop: async () => {
        await milter.close();
        await service.stop();
      },
    };
  }
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

void runServiceMain('retriever-smtp', import.meta.url, [], main);
