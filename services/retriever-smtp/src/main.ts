import { ConfigError, exitWithProblems, loadConfigOrExit } from '@trawl/config';
import { createServiceLogger, packageVersion } from '@trawl/platform';
import { createSmtpFilter } from './create-filter-service.ts';
import { smtpSettingsFromEnv } from './settings.ts';

const version = (): string => packageVersion(new URL('../package.json', import.meta.url));

async function main(): Promise<void> {
  const cfg = loadConfigOrExit({
    needs: { postgres: false, rabbitmq: false, redis: false, secretKey: false },
  });
  // TRAWL_SMTP_* belong to this service only: read here (docs/smtp-filter.md lists them).
  const settings = smtpSettingsFromEnv(process.env);
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
  const logger = createServiceLogger('retriever-smtp', cfg.pinoLevel);
  // Its own credential, never the platform key (docs/security.md).
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

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    await service
      .stop()
      .catch((err: unknown) => logger.error({ err: String(err) }, 'shutdown error'));
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}

main().catch((err: unknown) => {
  process.stderr.write(
    `retriever-smtp failed to start: ${err instanceof Error ? err.message : String(err)}\n`,
  );
  process.exit(1);
});
