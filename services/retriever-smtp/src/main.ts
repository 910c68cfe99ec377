import {
  type AppConfig,
  ConfigError,
  exitWithProblems,
  retrieverSettingsOrExit,
} from '@trawl/config';
import { topology } from '@trawl/contracts';
import {
  createPgClient,
  createServiceBroker,
  createServiceLogger,
  createShutdown,
  createStore,
  declareTopology,
  type RunningService,
  runServiceMain,
} from '@trawl/platform';
import { smtpSettingsFromEnv } from './settings.ts';
import {
  analysesInline,
  type RetrieverSmtpPorts,
  retrieverSmtpSettings,
  startRetrieverSmtp,
} from './start.ts';

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
  const shutdown = createShutdown(logger);
  const ports: RetrieverSmtpPorts = { logger };
  if (analysesInline(settings)) {
    // A milter that analyses inline (ADR 013 section 5) writes its jobs and publishes their events:
    // PostgreSQL (DATABASE_URL) and RabbitMQ (RABBITMQ_URL); no Redis.
    const sql = createPgClient({ url: cfg.database.url, applicationName: 'trawl-retriever-smtp' });
    shutdown.add('postgres', () => sql.close());
    const broker = createServiceBroker(cfg, 'retriever-smtp', logger);
    shutdown.add('rabbitmq', () => broker.close());
    const t = topology(cfg.brokerPrefix);
    await declareTopology(broker, t);
    ports.analysis = { sql, store: createStore(sql), broker, topology: t };
  }
  let running: Awaited<ReturnType<typeof startRetrieverSmtp>>;
  try {
    running = await startRetrieverSmtp(ports, settings);
  } catch (e) {
    await shutdown.close().catch(() => undefined);
    if (e instanceof ConfigError) exitWithProblems(e);
    throw e;
  }
  shutdown.add('retriever-smtp', () => running.close());
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

  return { logger, stop: () => shutdown.close() };
}

void runServiceMain('retriever-smtp', import.meta.url, [], main);
