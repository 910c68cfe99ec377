/**
 * The analyzer orchestrator process (scale-out mode): reads the configuration, connects RabbitMQ,
 * PostgreSQL and Redis, starts the orchestrator's assembly (startOrchestrator: consumer, invoker,
 * reaper, notifier, /health and /metrics; ADR 021) and stops it on SIGTERM / SIGINT (stop
 * consuming, finish in-flight jobs within the grace period, return the rest), then the clients.
 */

import { ConfigError, exitWithProblems, loadConfigOrExit } from '@trawl/config';
import { topology } from '@trawl/contracts';
import {
  createPgClient,
  createRabbitBroker,
  createRedisCache,
  createRedisClient,
  createServiceLogger,
  createShutdown,
  createStore,
  declareTopology,
  migrate,
  packageVersion,
  type RunningService,
  runService,
} from '@trawl/platform';
import { pino } from 'pino';
import { startOrchestrator } from './assembly.ts';
import { orchestratorSettings } from './settings.ts';

async function main(): Promise<RunningService> {
  const cfg = loadConfigOrExit({ needs: { postgres: true, rabbitmq: true, redis: true } });
  const version = packageVersion(new URL('../package.json', import.meta.url));
  // Buffered (4 KiB or 250 ms, as the gateway's, ADR 005): the line each job logs does not cost a
  // write of its own. pino flushes the rest when the process exits; a SIGKILL loses at most 250 ms.
  const logger = createServiceLogger(
    'analyzer-orchestrator',
    cfg.pinoLevel,
    pino.destination({ dest: 1, sync: false, minLength: 4096, periodicFlush: 250 }),
  );
  const shutdown = createShutdown(logger);
  const sql = createPgClient({
    url: cfg.database.url,
    applicationName: 'trawl-analyzer-orchestrator',
  });
  shutdown.add('postgres', () => sql.close());
  await migrate(sql);
  const broker = await createRabbitBroker({
    url: cfg.rabbitmq.url,
    connectionName: 'trawl-analyzer-orchestrator',
    logger,
  });
  shutdown.add('rabbitmq', () => broker.close());
  const t = topology(cfg.brokerPrefix);
  await declareTopology(broker, t);
  // The cache writes of the jobs finished together (one finish statement) leave in one write.
  const redis = createRedisClient(cfg.redis.url, {
    connectionName: 'trawl-analyzer-orchestrator',
    autoPipelining: true,
    logger,
  });
  const cache = createRedisCache({ client: redis, prefix: 'trawl:', ownsClient: true });
  shutdown.add('redis', () => cache.close());

  const settings = orchestratorSettings(cfg, { version, listen: true });
  let running: Awaited<ReturnType<typeof startOrchestrator>>;
  try {
    running = await startOrchestrator(
      { sql, store: createStore(sql), broker, topology: t, cache, logger },
      settings,
    );
  } catch (e) {
    await shutdown.close().catch(() => undefined);
    if (e instanceof ConfigError) exitWithProblems(e);
    throw e;
  }
  shutdown.add('orchestrator', () => running.close());
  // what the assembly compiled (the parity test with embedded mode reads this line)
  logger.info(
    {
      port: settings.listen?.port,
      config_version: running.config.getConfig().version,
      assembly: running.describe(),
    },
    'assembled',
  );

  return {
    logger,
    // a stop that hangs past the grace period plus 15 s exits with 1
    hardExitMs: settings.consumer.shutdownGraceMs + 15_000,
    async stop(signal) {
      logger.info({ signal }, 'stopping: finishing in-flight jobs');
      await shutdown.close();
    },
  };
}

void runService('analyzer orchestrator', main);
