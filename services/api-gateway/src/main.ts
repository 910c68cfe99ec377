import { type AppConfig, ConfigError, exitWithProblems } from '@trawl/config';
import {
  connectServiceMessaging,
  createPgClient,
  createShutdown,
  createStore,
  migrate,
  type RunningService,
  runServiceMain,
} from '@trawl/platform';
import { gatewaySettings, startGateway } from './assembly.ts';
import { createGatewayLogger, gatewayLogDestination } from './logger.ts';

/** A configuration problem of the files: printed with every problem listed, exit 1. */
function exitOnConfigProblem(err: unknown): void {
  if (err instanceof ConfigError) exitWithProblems(err);
  const problems = (err as { problems?: { path: string; message: string }[] }).problems;
  if (problems?.length) exitWithProblems(new ConfigError(problems));
}

async function main(cfg: AppConfig, version: string): Promise<RunningService> {
  const logger = createGatewayLogger(cfg.pinoLevel, gatewayLogDestination());
  const shutdown = createShutdown(logger);
  try {
    const sql = createPgClient({ url: cfg.database.url, applicationName: 'trawl-api-gateway' });
    shutdown.add('postgres', () => sql.close());
    await migrate(sql);
    const { broker, topology, cache } = await connectServiceMessaging(cfg, 'api-gateway', logger);
    shutdown.add('rabbitmq', () => broker.close());
    shutdown.add('redis', () => cache.close());
    const gateway = await startGateway(
      { sql, store: createStore(sql), broker, topology, cache, logger },
      gatewaySettings(cfg, { version }),
    );
    shutdown.add('gateway', () => gateway.close());
    // what the assembly compiled (the parity test with embedded mode reads this line)
    logger.info({ port: gateway.port, assembly: gateway.describe() }, 'assembled');
  } catch (err) {
    await shutdown.close().catch(() => undefined);
    exitOnConfigProblem(err);
    throw err;
  }
  return { logger, stop: () => shutdown.close() };
}

void runServiceMain(
  'api-gateway',
  import.meta.url,
  ['postgres', 'rabbitmq', 'redis', 'secretKey'],
  main,
);
