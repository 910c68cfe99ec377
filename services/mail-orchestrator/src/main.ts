import { type AppConfig, ConfigError, exitWithProblems } from '@trawl/config';
import {
  connectServiceMessaging,
  createServiceLogger,
  type RunningService,
  runServiceMain,
} from '@trawl/platform';
import { buildMailOrchestrator } from './app.ts';

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
  const { broker, topology, cache } = await connectServiceMessaging(
    cfg,
    'mail-orchestrator',
    logger,
  );

  const orchestrator = buildMailOrchestrator({
    retrievers: cfg.mailRetrievers,
    gateway: { baseUrl: cfg.gateway.url },
    internalApiKey: cfg.internalApiKey,
    broker,
    topology,
    cache,
    logger,
    options: { serviceVersion: version, maxMessageBytes: cfg.limits.rawMessageBytes },
  });
  await orchestrator.start();
  await orchestrator.app.listen({
    host: cfg.mailOrchestratorHost,
    port: cfg.mailOrchestratorPort,
  });
  logger.info({ port: cfg.mailOrchestratorPort }, 'listening');

  return {
    logger,
    hardExitMs: cfg.orchestrator.shutdownGraceMs + 15_000,
    async stop() {
      await orchestrator.app.close();
      await orchestrator.stop(cfg.orchestrator.shutdownGraceMs);
      await broker.close();
      await cache.close();
    },
  };
}

void runServiceMain('mail-orchestrator', import.meta.url, ['rabbitmq', 'redis'], main);
