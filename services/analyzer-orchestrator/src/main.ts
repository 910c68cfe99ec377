/**
 * The analyzer orchestrator process (scale-out mode): reads the configuration, connects RabbitMQ,
 * PostgreSQL and Redis, consumes analysis requests, serves /health and /metrics, and stops cleanly on
 * SIGTERM / SIGINT (stop consuming, finish in-flight jobs within the grace period, return the rest).
 *
 * Built-in analyzers and providers run in this process (TRAWL_BUILTINS_IN_PROCESS, the default; ADR
 * 002) or are called over HTTP at TRAWL_ANALYZERS_HOST:TRAWL_ANALYZERS_PORT; plugins registered with a
 * url always go over HTTP. In this process the offline analyzers run in a pool of worker threads
 * (TRAWL_ANALYSIS_WORKERS, one per core by default; ADR 010), so that the thread consuming the queue
 * never runs analysis and a call past its deadline is stopped.
 */

import {
  type AnalysisPool,
  builtinPlugins,
  createAnalysisPool,
  createEmbeddedInvoker,
  createListCache,
} from '@trawl/analyzers';
import { ConfigError, exitWithProblems, loadConfigOrExit, loadServiceFiles } from '@trawl/config';
import { topology } from '@trawl/contracts';
import { reportNotifierFromConfig, retentionOfStore } from '@trawl/investigation';
import {
  createPgClient,
  createRabbitBroker,
  createRedisCache,
  createRedisClient,
  createServiceLogger,
  createStore,
  declareTopology,
  migrate,
  type RunningService,
  runService,
} from '@trawl/platform';
import { createPluginClient, type PluginInvoker, pluginTargets } from '@trawl/plugin-client';
import { checkCondition, checkConditionReferences } from '@trawl/workflow-engine';
import { pino } from 'pino';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { buildOrchestrator } from './app.ts';
import { type ConfigSnapshot, createConfigSource, snapshotFromFiles } from './config-snapshot.ts';

/** Analysis workers of a scale-out orchestrator when TRAWL_ANALYSIS_WORKERS is unset. */
const LARGE_ONLY_WORKERS = 1;
/** With that default, the messages the worker takes: bodies and attachments of 256 Ki characters. */
const LARGE_MESSAGE_CHARS = 256 * 1024;

async function main(): Promise<RunningService> {
  const cfg = loadConfigOrExit({ needs: { postgres: true, rabbitmq: true, redis: true } });
  // Buffered (4 KiB or 250 ms, as the gateway's, ADR 005): the line each job logs does not cost a
  // write of its own. pino flushes the rest when the process exits; a SIGKILL loses at most 250 ms.
  const logger = createServiceLogger(
    'analyzer-orchestrator',
    cfg.pinoLevel,
    pino.destination({ dest: 1, sync: false, minLength: 4096, periodicFlush: 250 }),
  );
  const port = cfg.orchestratorPort;
  const builtinBase = `http://${cfg.analyzersHost}:${cfg.analyzersPort}`;

  const load = (): { snapshot: ConfigSnapshot; files: ReturnType<typeof loadServiceFiles> } => {
    const files = loadServiceFiles(cfg, {
      checkCondition,
      checkReferences: checkConditionReferences,
    });
    return {
      files,
      snapshot: snapshotFromFiles({
        version: files.version,
        service: files.service,
        workflows: files.workflows,
        analyzerVersions: files.analyzerVersions,
      }),
    };
  };
  let initial: ReturnType<typeof load>;
  try {
    initial = load();
  } catch (e) {
    if (e instanceof ConfigError) exitWithProblems(e);
    exitWithProblems(new ConfigError([{ path: '', message: (e as Error).message }]));
  }

  const sql = createPgClient({
    url: cfg.database.url,
    applicationName: 'trawl-analyzer-orchestrator',
  });
  await migrate(sql);
  const store = createStore(sql);

  let service = initial.files.service;
  let invoker: PluginInvoker & { close(): Promise<void> };
  let retarget: () => void;
  let pool: AnalysisPool | undefined;
  // the allow and block lists of the in-process `lists` analyzer (issue 32)
  const lists = cfg.builtinsInProcess ? createListCache(store.lists) : undefined;
  if (cfg.builtinsInProcess) {
    // TRAWL_ANALYSIS_WORKERS unset: one worker for the large messages only (a deadline that holds
    // where work could run long, at no cost for the rest); set: that many, for every message.
    const workers = cfg.analysisWorkers ?? LARGE_ONLY_WORKERS;
    if (workers > 0) {
      pool = await createAnalysisPool({
        size: workers,
        defaultTimeoutMs: service.analyzer.timeout_ms,
        onReplace: (info) => logger.warn(info, 'analysis worker replaced'),
      });
    }
    const local = createEmbeddedInvoker({
      builtins: builtinPlugins({
        senders: store.senders,
        classifier: store.classifier,
        lists,
      }),
      service: () => service,
      internalApiKey: cfg.internalApiKey,
      pool,
      ...(cfg.analysisWorkers === undefined ? { pooledMinChars: LARGE_MESSAGE_CHARS } : {}),
    });
    invoker = local;
    retarget = () => local.setService(service);
  } else {
    const http = createPluginClient({
      ...pluginTargets(service, builtinBase),
      internalApiKey: cfg.internalApiKey,
      defaultTimeoutMs: service.analyzer.timeout_ms,
    });
    invoker = http;
    retarget = () => http.setTargets(pluginTargets(service, builtinBase));
  }
  const config = createConfigSource(initial.snapshot, () => {
    const next = load();
    service = next.files.service;
    retarget();
    return next.snapshot;
  });
  const broker = await createRabbitBroker({
    url: cfg.rabbitmq.url,
    connectionName: 'trawl-analyzer-orchestrator',
    logger,
  });
  const t = topology(cfg.brokerPrefix);
  await declareTopology(broker, t);
  // The cache writes of the jobs finished together (one finish statement) leave in one write.
  const redis = createRedisClient(cfg.redis.url, {
    connectionName: 'trawl-analyzer-orchestrator',
    autoPipelining: true,
    logger,
  });
  const cache = createRedisCache({ client: redis, prefix: 'trawl:', ownsClient: true });

  const registry = new Registry();
  if (cfg.metrics) collectDefaultMetrics({ register: registry });
  const orch = buildOrchestrator({
    broker,
    store,
    cache,
    invoker,
    config,
    topology: t,
    logger,
    registry,
    options: {
      prefetch: cfg.orchestrator.prefetch,
      reaperIntervalMs: cfg.orchestrator.reaperIntervalMs,
      jobGraceMs: cfg.orchestrator.jobGraceMs,
      queuedMaxMs: cfg.orchestrator.queuedMaxMs,
    },
    retention: retentionOfStore(sql, cache, cfg.retention, logger),
    lists,
  });
  await orch.start();
  // Reporter notifications (issue 17): on when TRAWL_SMTP_URL is set.
  const notifier = reportNotifierFromConfig(cfg.notify, { broker, topology: t, sql, logger });
  await notifier?.start();
  await orch.app.listen({ host: cfg.orchestratorHost, port });
  logger.info(
    {
      port,
      config_version: initial.snapshot.version,
      analysis_workers: pool ? (cfg.analysisWorkers ?? LARGE_ONLY_WORKERS) : 0,
    },
    'analyzer orchestrator ready',
  );

  return {
    logger,
    // a stop that hangs past the grace period plus 15 s exits with 1
    hardExitMs: cfg.orchestrator.shutdownGraceMs + 15_000,
    async stop(signal) {
      logger.info({ signal }, 'stopping: finishing in-flight jobs');
      await notifier?.stop();
      await orch.stop(cfg.orchestrator.shutdownGraceMs);
      await orch.app.close();
      await broker.close();
      await invoker.close();
      await pool?.close();
      await cache.close();
      await sql.close();
    },
  };
}

void runService('analyzer orchestrator', main);
