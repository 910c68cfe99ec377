import {
  type AppConfig,
  ConfigError,
  exitWithProblems,
  retrieverSettingsOrExit,
} from '@trawl/config';
import { createServiceLogger, type RunningService, runServiceMain } from '@trawl/platform';
import { smtpSettingsFromEnv } from './settings.ts';
import { retrieverSmtpSettings, startRetrieverSmtp } from './start.ts';

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
  // TRAWL_RETRIEVER_SMTP_HOST / _PORT and TRAWL_MILTER_*: read by @trawl/config (docker/healthcheck.mjs
  // uses the port).
  const settings = retrieverSmtpSettings(cfg, s, { credential: cfg.retrieverKey, version });
  const running = await startRetrieverSmtp({ logger }, settings);
  const at = `${running.address.host}:${running.address.port}`;
  logger.info(
    {
      http: settings.listen.port,
      ...(s.mode === 'milter'
        ? { milter: at }
        : { smtp: at, return: `${s.return_host}:${s.return_port}` }),
      assembly: running.describe(),
    },
    'listening',
  );

  return { logger, stop: () => running.close() };
}

void runServiceMain('retriever-smtp', import.meta.url, [], main);
