import { type AppConfig, ConfigError, diffFiles, exitWithProblems } from '@trawl/config';
import {
  connectServiceMessaging,
  createPgClient,
  createStore,
  migrate,
  type RunningService,
  runServiceMain,
} from '@trawl/platform';
import { createPluginClient, pluginTargets } from '@trawl/plugin-client';
import type { CompiledWorkflow } from '@trawl/workflow-engine';
import { bootstrapAdmin } from './bootstrap.ts';
import { followConfigReloads } from './config-events.ts';
import { loadSnapshot } from './config-loader.ts';
import { createConfigState } from './config-state.ts';
import { buildConfiguredGateway, startGatewayBackground } from './gateway-process.ts';
import { createGatewayLogger, gatewayLogDestination } from './logger.ts';

async function main(cfg: AppConfig, version: string): Promise<RunningService> {
  const logger = createGatewayLogger(cfg.pinoLevel, gatewayLogDestination());

  let initial: ReturnType<typeof loadSnapshot>;
  try {
    initial = loadSnapshot(cfg);
  } catch (err) {
    if (err instanceof ConfigError) exitWithProblems(err);
    const problems = (err as { problems?: { path: string; message: string }[] }).problems ?? [];
    exitWithProblems(
      new ConfigError(problems.length ? problems : [{ path: '', message: (err as Error).message }]),
    );
  }

  const sql = createPgClient({ url: cfg.database.url, applicationName: 'trawl-api-gateway' });
  await migrate(sql);
  const store = createStore(sql);
  const { broker, topology, cache } = await connectServiceMessaging(cfg, 'api-gateway', logger);

  const invoker = createPluginClient({
    ...pluginTargets(initial.files.service),
    internalApiKey: cfg.internalApiKey,
  });
  const configState = createConfigState<CompiledWorkflow>({
    initial,
    load: () => loadSnapshot(cfg),
    diff: diffFiles,
    store,
    broker,
    topology,
    onSwap: (next) => invoker.setTargets(pluginTargets(next.files.service)),
    onPublishError: (err) => logger.warn({ err }, 'config.reloaded could not be published'),
  });
  await configState.recordCurrent(null);
  await bootstrapAdmin(
    store,
    { username: cfg.auth.adminUser, password: cfg.auth.adminPassword },
    logger,
  );

  const app = await buildConfiguredGateway(cfg, sql, {
    store,
    broker,
    cache,
    topology,
    configState,
    invoker,
    logger,
    version,
  });
  const follower = await followConfigReloads({ broker, topology, configState, logger });
  await app.listen({ host: cfg.gateway.host, port: cfg.gateway.port });
  const background = startGatewayBackground({ cfg, sql, store, logger, version });

  return {
    logger,
    async stop() {
      await app.close();
      await background.stop();
      await follower.cancel();
      await invoker.close();
      await broker.close();
      await cache.close();
      await sql.close();
    },
  };
}

void runServiceMain(
  'api-gateway',
  import.meta.url,
  ['postgres', 'rabbitmq', 'redis', 'secretKey'],
  main,
);
