import { type AppConfig, ConfigError, exitWithProblems } from '@trawl/config';
import {
  connectServiceMessaging,
  createServiceLogger,
  createShutdown,
  type RunningService,
  runServiceMain,
} from '@trawl/platform';
import { mailOrchestratorSettings, startMailOrchestrator } from './assembly.ts';

// A bad TRAWL_MAIL_RETRIEVERS stops start-up in runServiceMain, naming the variable and the problem.
async function main(cfg: AppConfig, version: string): Promise<RunningService> {
  if (!cfg.internalApiKey) {
    exitWithProblems(
      new ConfigError([
        { path: 'INTERNAL_API_KEY', message: 'the mail orchestrator needs the internal API key' },
      ]),
    );
  }
  const logger = createServiceLogger('mail-orchestrator', cfg.pinoLevel);
  const shutdown = createShutdown(logger);
  const { broker, topology, cache } = await connectServiceMessaging(
    cfg,
    'mail-orchestrator',
    logger,
  );
  shutdown.add('rabbitmq', () => broker.close());
  shutdown.add('redis', () => cache.close());
  const settings = mailOrchestratorSettings(cfg, {
    version,
    internalApiKey: cfg.internalApiKey,
  });
  try {
    const running = await startMailOrchestrator(
      { broker, topology, cache, logger, gateway: { url: cfg.gateway.url } },
      settings,
    );
    shutdown.add('mail-orchestrator', () => running.close());
    // what the assembly compiled (the parity test with embedded mode reads this line)
    logger.info({ port: settings.listen.port, assembly: running.describe() }, 'assembled');
  } catch (err) {
    await shutdown.close().catch(() => undefined);
    throw err;
  }

  return {
    logger,
    hardExitMs: settings.shutdownGraceMs + 15_000,
    stop: () => shutdown.close(),
  };
}

void runServiceMain('mail-orchestrator', import.meta.url, ['rabbitmq', 'redis'], main);
