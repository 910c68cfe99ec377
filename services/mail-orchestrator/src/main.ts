import { ConfigError, exitWithProblems, loadConfigOrExit } from '@trawl/config';
import { topology } from '@trawl/contracts';
import {
  createRabbitBroker,
  createRedisCache,
  createRedisClient,
  createServiceLogger,
  declareTopology,
  packageVersion,
  type RunningService,
  runService,
} from '@trawl/platform';
import { buildMailOrchestrator } from './app.ts';

const version = (): string => packageVersion(new URL('../package.json', import.meta.url));

async function main(): Promise<RunningService> {
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

void runService('mail-orchestrator', main);
