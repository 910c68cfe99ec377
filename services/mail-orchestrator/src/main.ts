import { readFileSync } from 'node:fs';
import { ConfigError, exitWithProblems, loadConfigOrExit } from '@trawl/config';
import { topology } from '@trawl/contracts';
import {
  createRabbitBroker,
  createRedisCache,
  createRedisClient,
  declareTopology,
} from '@trawl/platform';
import { pino } from 'pino';
import { buildMailOrchestrator } from './app.ts';

function packageVersion(): string {
  try {
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
      version?: string;
    };
    return pkg.version ?? '0.0.0';
  } catch {
    return '0.0.0';
  }
}

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
  const logger = pino({
    level: cfg.pinoLevel,
    base: { service: 'mail-orchestrator' },
    redact: ['*.internalApiKey', '*.password', 'headers["x-internal-api-key"]'],
  });
  const broker = await createRabbitBroker({
    url: cfg.rabbitmq.url,
    connectionName: 'trawl-mail-orchestrator',
    logger,
  });
  const topo = topology(cfg.brokerPrefix);
  await declareTopology(broker, topo);
  const redis = createRedisClient(cfg.redis.url, { connectionName: 'trawl-mail-orchestrator' });
  const cache = createRedisCache({ client: redis, prefix: 'trawl:' });

  const orchestrator = buildMailOrchestrator({
    retrievers: cfg.mailRetrievers,
    gateway: { baseUrl: cfg.gateway.url },
    internalApiKey: cfg.internalApiKey,
    broker,
    topology: topo,
    cache,
    logger,
    options: { serviceVersion: packageVersion() },
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
