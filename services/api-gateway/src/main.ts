import { learnFeedback, learnPendingFeedback } from '@trawl/analyzers';
import { ConfigError, diffFiles, exitWithProblems, loadConfigOrExit } from '@trawl/config';
import { topology } from '@trawl/contracts';
import {
  createPgClient,
  createRabbitBroker,
  createRedisCache,
  createRedisClient,
  createStore,
  createWebhookDispatcher,
  declareTopology,
  migrate,
  packageVersion,
  type RunningService,
  runService,
} from '@trawl/platform';
import { createPluginClient, pluginTargets } from '@trawl/plugin-client';
import type { CompiledWorkflow } from '@trawl/workflow-engine';
import { buildApp } from './app.ts';
import { bootstrapAdmin } from './bootstrap.ts';
import { followConfigReloads } from './config-events.ts';
import { loadSnapshot } from './config-loader.ts';
import { createConfigState } from './config-state.ts';
import { createGatewayLogger, gatewayLogDestination } from './logger.ts';
import { gatewayOptionsFrom } from './options.ts';

const version = (): string => packageVersion(new URL('../package.json', import.meta.url));

async function main(): Promise<RunningService> {
  const cfg = loadConfigOrExit({
    needs: { postgres: true, rabbitmq: true, redis: true, secretKey: true },
  });
  const logger = createGatewayLogger(cfg.pinoLevel, gatewayLogDestination());
  const serviceVersion = version();

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
  const broker = createRabbitBroker({
    url: cfg.rabbitmq.url,
    connectionName: 'trawl-api-gateway',
    logger,
  });
  const topo = topology(cfg.brokerPrefix);
  await declareTopology(broker, topo);
  const redis = createRedisClient(cfg.redis.url, {
    connectionName: 'trawl-api-gateway',
    logger,
  });
  const cache = createRedisCache({ client: redis, prefix: 'trawl:' });

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
    topology: topo,
    onSwap: (next) => invoker.setTargets(pluginTargets(next.files.service)),
    onPublishError: (err) => logger.warn({ err }, 'config.reloaded could not be published'),
  });
  await configState.recordCurrent(null);
  await bootstrapAdmin(
    store,
    { username: cfg.auth.adminUser, password: cfg.auth.adminPassword },
    logger,
  );

  const app = await buildApp({
    config: { ...gatewayOptionsFrom(cfg), features: { database_config: false } },
    store,
    broker,
    cache,
    topology: topo,
    configState,
    invoker,
    logger,
    version: serviceVersion,
    learnFeedback: (jobId) => learnFeedback(sql, jobId),
  });
  // Webhook deliveries (issue 17): every gateway claims due ones (FOR UPDATE SKIP LOCKED).
  const { dispatcher: runDispatcher, ...webhookSettings } = cfg.webhooks;
  const dispatcher = createWebhookDispatcher({
    webhooks: store.webhooks,
    audit: store.audit,
    settings: webhookSettings,
    logger: logger.child({ component: 'webhooks' }),
    userAgent: `Trawl-Webhooks/${serviceVersion}`,
  });
  const follower = await followConfigReloads({ broker, topology: topo, configState, logger });
  await app.listen({ host: cfg.gateway.host, port: cfg.gateway.port });
  if (runDispatcher) dispatcher.start();
  // Feedback stored but not learnt (learning failed at the time) is learnt here, once a minute.
  const feedbackCatchUp = setInterval(() => {
    learnPendingFeedback(sql).catch((err: unknown) =>
      logger.warn({ err }, 'feedback catch-up failed'),
    );
  }, 60_000);
  feedbackCatchUp.unref();

  return {
    logger,
    async stop() {
      clearInterval(feedbackCatchUp);
      await app.close();
      await dispatcher.stop();
      await follower.cancel();
      await invoker.close();
      await broker.close();
      await cache.close();
      await sql.close();
    },
  };
}

void runService('api-gateway', main);
