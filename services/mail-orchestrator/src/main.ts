import { ConfigError, exitWithProblems, loadConfigOrExit } from '@trawl/config';
import { topology } from '@trawl/contracts';
import {
  createRabbitBroker,
  createRedisCache,
  createRedisClient,
  createServiceLogger,
  declareTopology,
  packageVersion,
} from '@trawl/platform';
import { buildMailOrchestrator } from './app.ts';

const version = (): string => packageVersion(new URL('../package.json', import.meta.url));

async function main(): Promise<void> {
  // A bad TRAWL_MAIL_RETRIEVERS stops start-up here, naming the variable and the problem.
  const cfg = loadConfigOrExit({
    needs: { postgres: false, rabbitmq: true, redis: true, secretKey: false },
  });
  if (!cfg.internalApiKey) {
    exitWithProblems(
      new ConfigError([
        { path: 'INTERNAL_API_KEY', message: 'the mail orchestrator needs the internal API key' },
      ]),
    );
  }
  const logger = createServiceLogger('mail-orchestrator', cfg.pinoLevel);
  const broker = await createRabbitBroker({
    url: cfg.rabbitmq.url,
    connectionName: 'trawl-mail-orchestrator',
    logger,
  });
  const topo = topology(cfg.brokerPrefix);
  await declareTopology(broker, topo);
  const redis = createRedisClient(cfg.redis.url, {
    connectionName: 'trawl-mail-orchestrator',
    logger,
  });
  const cache = createRedisCache({ client: redis, prefix: 'trawl:' });

  const orchestrator = buildMailOrchestrator({
    retrievers: cfg.mailRetrievers,
    gateway: { baseUrl: cfg.gateway.url },
    internalApiKey: cfg.internalApiKey,
    broker,
    topology: topo,
    cache,
    logger,
    options: { serviceVersion: version() },
  });
  await orchestrator.start();
  await orchestrator.app.listen({ host: '0.0.0.0', port: cfg.mailOrchestratorPort });
  logger.info({ port: cfg.mailOrchestratorPort }, 'listening');

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    try {
      await orchestrator.app.close();
      await orchestrator.stop(cfg.orchestrator.shutdownGraceMs);
      await broker.close();
      await cache.close();
    } catch (err) {
      logger.error({ err: String(err) }, 'error while shutting down');
    }
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}

main().catch((err: unknown) => {
  process.stderr.write(
    `mail-orchestrator failed to start: ${err instanceof Error ? err.message : String(err)}\n`,
  );
  process.exit(1);
});
