import { mkdirSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { buildOrchestrator, type Orchestrator } from '@trawl/analyzer-orchestrator';
import {
  builtinPlugins,
  createAnalysisPool,
  createEmbeddedInvoker,
  createListCache,
} from '@trawl/analyzers';
import {
  bootstrapAdmin,
  buildConfiguredGateway,
  createConfigState,
  createGatewayLogger,
  loadSnapshot,
  startGatewayBackground,
} from '@trawl/api-gateway';
import { type AppConfig, diffFiles } from '@trawl/config';
import { topology } from '@trawl/contracts';
import { reportNotifierFromConfig, retentionOfStore } from '@trawl/investigation';
import { buildMailOrchestrator, type MailOrchestrator } from '@trawl/mail-orchestrator';
import {
  type Broker,
  type Cache,
  createMemoryBroker,
  createMemoryCache,
  createPgClient,
  createPgliteClient,
  createServiceBroker,
  createServiceCache,
  createStore,
  declareTopology,
  migrate,
  type SqlClient,
} from '@trawl/platform';
import type { CompiledWorkflow } from '@trawl/workflow-engine';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { writeBackup } from './backup.ts';
import { configSourceFrom } from './config-source.ts';
import { type EmbeddedRetrievers, startEmbeddedRetrievers } from './embedded-retrievers.ts';
import { requeueUnfinished } from './requeue.ts';

export interface EmbeddedOptions {
  logger?: Logger;
  /** Reported by /health. */
  version?: string;
  /** Port to listen on (default cfg.gateway.port; 0 = any free port). */
  port?: number;
  /** Address to listen on (default cfg.gateway.embeddedHost: TRAWL_HOST, else 127.0.0.1). */
  host?: string;
  /** The Graph and Gmail retrievers to run in this process (main.ts reads their settings). */
  retrievers?: EmbeddedRetrievers;
}

/** The address to reach a server listening on `host` from this machine. */
export function connectHost(host: string): string {
  if (host === '0.0.0.0' || host === '' || host === '::' || host === '[::]') return '127.0.0.1';
  if (host.includes(':') && !host.startsWith('[')) return `[${host}]`;
  return host;
}

/** What runs, and how to stop it. */
export interface Embedded {
  /** Base address of the gateway, e.g. http://127.0.0.1:8001. */
  url: string;
  port: number;
  /** The address it listens on (127.0.0.1 unless TRAWL_HOST says otherwise). */
  host: string;
  /** Which adapter backs each dependency. */
  backends: {
    store: 'pglite' | 'postgres';
    broker: 'memory' | 'rabbitmq';
    cache: 'memory' | 'redis';
  };
  /** Jobs found queued/processing at start and published again (in-process broker only). */
  requeued: number;
  /** True when this start created the first admin from TRAWL_ADMIN_USER / _PASSWORD. */
  adminCreated: boolean;
  /** True when retrievers are configured and the mail orchestrator runs. */
  mail: boolean;
  app: FastifyInstance;
  orchestrator: Orchestrator;
  /** Stops accepting requests, finishes in-flight jobs within the grace period, closes clients. */
  close(): Promise<void>;
}

/**
 * Every service in this process: the gateway, one analyzer orchestrator, the built-in analyzers
 * called in-process (the offline ones in worker threads), and the mail orchestrator when retrievers are configured. PostgreSQL, RabbitMQ
 * and Redis are used only when their URL is given explicitly (DATABASE_URL, RABBITMQ_URL,
 * REDIS_URL); otherwise PGlite with its data in TRAWL_DATA_DIR, the in-process broker and cache.
 */
export async function startEmbedded(cfg: AppConfig, opts: EmbeddedOptions = {}): Promise<Embedded> {
  const logger = opts.logger ?? createGatewayLogger(cfg.pinoLevel);
  const version = opts.version ?? '0.0.0';
  const closers: (() => Promise<void>)[] = [];
  const closeAll = async () => {
    for (const c of closers.reverse()) {
      try {
        await c();
      } catch (err) {
        logger.warn({ err }, 'error while closing');
      }
    }
    closers.length = 0;
  };

  try {
    // Store.
    let sql: SqlClient;
    if (cfg.database.explicit) {
      sql = createPgClient({ url: cfg.database.url, applicationName: 'trawl-all-in-one' });
    } else {
      const dir = join(cfg.dataDir, 'pglite');
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      sql = await createPgliteClient({ dataDir: dir });
    }
    closers.push(() => sql.close());
    await migrate(sql);
    const store = createStore(sql);

    // Broker.
    const broker: Broker = cfg.rabbitmq.explicit
      ? createServiceBroker(cfg, 'all-in-one', logger)
      : createMemoryBroker({ logger });
    closers.push(() => broker.close());
    const topo = topology(cfg.brokerPrefix);
    await declareTopology(broker, topo);

    // Cache.
    const cache: Cache = cfg.redis.explicit
      ? createServiceCache(cfg, 'all-in-one', logger)
      : createMemoryCache({ maxEntries: 50_000, prefix: 'trawl:' });
    closers.push(() => cache.close());

    // Configuration and plugins.
    // the allow and block lists (issue 32): read again on every `lists.changed` event
    const lists = createListCache(store.lists);
    const builtins = builtinPlugins({
      senders: store.senders,
      classifier: store.classifier,
      lists,
    });
    const known = {
      analyzers: Object.values(builtins)
        .filter((p) => p.kind === 'analyzer')
        .map((p) => p.id),
      providers: Object.values(builtins)
        .filter((p) => p.kind === 'context_provider')
        .map((p) => p.id),
    };
    const loadOpts = { knownAnalyzers: known.analyzers, knownProviders: known.providers };
    const initial = loadSnapshot(cfg, loadOpts);
    let current = initial;
    // The offline analyzers run in worker threads (TRAWL_ANALYSIS_WORKERS, one per core by
    // default; ADR 010): the one thread that answers HTTP and consumes the queue never runs them,
    // and a call past its deadline is stopped.
    const workers = cfg.analysisWorkers ?? availableParallelism();
    const pool =
      workers > 0
        ? await createAnalysisPool({
            size: workers,
            defaultTimeoutMs: initial.files.service.analyzer.timeout_ms,
            onReplace: (info) => logger.warn(info, 'analysis worker replaced'),
          })
        : undefined;
    if (pool) closers.push(() => pool.close());
    const invoker = createEmbeddedInvoker({
      builtins,
      service: () => current.files.service,
      internalApiKey: cfg.internalApiKey,
      pool,
    });
    closers.push(() => invoker.close());
    const configState = createConfigState<CompiledWorkflow>({
      initial,
      load: () => loadSnapshot(cfg, loadOpts),
      diff: diffFiles,
      store,
      broker,
      topology: topo,
      onSwap: (next) => {
        current = next;
        invoker.setService(next.files.service);
      },
      onPublishError: (err) => logger.warn({ err }, 'config.reloaded could not be published'),
    });
    await configState.recordCurrent(null);
    const adminCreated = await bootstrapAdmin(
      store,
      { username: cfg.auth.adminUser, password: cfg.auth.adminPassword },
      logger,
    );

    // One /metrics (the gateway's) shows every component of the process.
    const metricsRegistries: Orchestrator['registry'][] = [];

    // Orchestrator.
    const orchestrator = buildOrchestrator({
      broker,
      store,
      cache,
      invoker,
      config: configSourceFrom(() => configState.current().files),
      topology: topo,
      logger,
      lists,
      options: {
        prefetch: cfg.orchestrator.prefetch,
        reaperIntervalMs: cfg.orchestrator.reaperIntervalMs,
        jobGraceMs: cfg.orchestrator.jobGraceMs,
        // With the in-memory broker every unfinished job is queued again at start (below), so no
        // stored job is left without a message; with RabbitMQ the reaper closes that gap.
        ...(broker.kind === 'memory' ? {} : { queuedMaxMs: cfg.orchestrator.queuedMaxMs }),
        serviceVersion: version,
        instanceId: 'embedded',
      },
      retention: retentionOfStore(sql, cache, cfg.retention, logger),
    });
    let requeued = 0;
    if (broker.kind === 'memory') {
      requeued = await requeueUnfinished({
        sql,
        broker,
        topology: topo,
        onSkip: (jobId, reason) =>
          logger.warn({ job_id: jobId, reason }, 'unfinished job could not be re-queued'),
      });
      if (requeued > 0) logger.info({ requeued }, 'unfinished jobs re-queued');
    }
    metricsRegistries.push(orchestrator.registry);
    await orchestrator.start();
    closers.push(() => orchestrator.stop(cfg.orchestrator.shutdownGraceMs));
    // Reporter notifications (issue 17): on when TRAWL_SMTP_URL is set.
    const notifier = reportNotifierFromConfig(cfg.notify, { broker, topology: topo, sql, logger });
    if (notifier) {
      await notifier.start();
      closers.push(() => notifier.stop());
    }

    // Gateway.
    const app = await buildConfiguredGateway(cfg, sql, {
      store,
      broker,
      cache,
      topology: topo,
      configState,
      invoker,
      logger,
      version,
      metricsRegistries,
      ...(sql.dumpDataDir ? { backup: () => writeBackup(sql, join(cfg.dataDir, 'backups')) } : {}),
    });
    closers.push(() => app.close());
    // Webhook deliveries (issue 17): the outbox in the same database, claimed by this process.
    const background = startGatewayBackground({ cfg, sql, store, logger, version });
    closers.push(() => background.stop());
    const port = opts.port ?? cfg.gateway.port;
    // 127.0.0.1 unless TRAWL_HOST says otherwise: a laptop's Trawl is not served to its network.
    const host = opts.host ?? cfg.gateway.embeddedHost;
    await app.listen({ host, port });
    const address = app.server.address();
    const boundPort = typeof address === 'object' && address ? address.port : port;
    const url = `http://${connectHost(host)}:${boundPort}`;

    // Mail orchestrator, when retrievers are configured (or run here: Graph, Gmail).
    let mail: MailOrchestrator | undefined;
    let mailRetrievers = cfg.mailRetrievers;
    if (opts.retrievers && (opts.retrievers.graph || opts.retrievers.gmail) && cfg.internalApiKey) {
      const own = await startEmbeddedRetrievers(cfg, opts.retrievers, {
        logger,
        cache,
        version,
        registries: metricsRegistries,
      });
      closers.push(() => own.close());
      mailRetrievers = { ...cfg.mailRetrievers, ...own.entries };
    }
    const retrievers = Object.values(mailRetrievers).filter((r) => r.enabled !== false);
    if (retrievers.length > 0 || opts.retrievers?.graph || opts.retrievers?.gmail) {
      if (!cfg.internalApiKey) {
        logger.warn(
          'TRAWL_MAIL_RETRIEVERS is set but INTERNAL_API_KEY is not: mail ingestion is off',
        );
      } else {
        mail = buildMailOrchestrator({
          retrievers: mailRetrievers,
          gateway: { baseUrl: url },
          internalApiKey: cfg.internalApiKey,
          broker,
          topology: topo,
          cache,
          logger,
          options: { serviceVersion: version, maxMessageBytes: cfg.limits.rawMessageBytes },
        });
        metricsRegistries.push(mail.registry);
        await mail.start();
        const m = mail;
        closers.push(() => m.stop(cfg.orchestrator.shutdownGraceMs));
        await mail.app.listen({
          host: cfg.mailOrchestratorHost,
          port: cfg.mailOrchestratorPort,
        });
        closers.push(() => m.app.close());
      }
    }

    return {
      url,
      port: boundPort,
      host: typeof address === 'object' && address ? address.address : host,
      backends: {
        store: cfg.database.explicit ? 'postgres' : 'pglite',
        broker: broker.kind,
        cache: cfg.redis.explicit ? 'redis' : 'memory',
      },
      requeued,
      adminCreated,
      mail: mail !== undefined,
      app,
      orchestrator,
      close: closeAll,
    };
  } catch (err) {
    await closeAll();
    throw err;
  }
}
