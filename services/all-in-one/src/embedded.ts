import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import {
  type Orchestrator,
  type OrchestratorDescription,
  orchestratorSettings,
  startOrchestrator,
} from '@trawl/analyzer-orchestrator';
import {
  createGatewayLogger,
  type GatewayDescription,
  gatewaySettings,
  startGateway,
} from '@trawl/api-gateway';
import type { AppConfig } from '@trawl/config';
import { type Topology, topology } from '@trawl/contracts';
import {
  type MailOrchestratorDescription,
  mailOrchestratorSettings,
  startMailOrchestrator,
} from '@trawl/mail-orchestrator';
import {
  type Broker,
  type Cache,
  createMemoryBroker,
  createMemoryCache,
  createPgClient,
  createPgliteClient,
  createServiceBroker,
  createServiceCache,
  createShutdown,
  createStore,
  declareTopology,
  migrate,
  type SqlClient,
  type Store,
  startPgliteMaintenance,
} from '@trawl/platform';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { writeBackup } from './backup.ts';
import { type EmbeddedRetrievers, startEmbeddedRetrievers } from './embedded-retrievers.ts';
import { requeueUnfinished } from './requeue.ts';

export { connectHost } from '@trawl/api-gateway';

/** Options of startEmbedded: logger, version, where to listen, the API retrievers to run. */
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

/** The options each assembly of the process compiled, and the process's stop order. */
interface EmbeddedDescription {
  orchestrator: OrchestratorDescription;
  gateway: GatewayDescription;
  mail?: MailOrchestratorDescription | undefined;
  stopOrder: string[];
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
  /**
   * The database and broker of this process: what a milter analysing inline in the same process
   * is given (TRAWL_MILTER_ANALYSIS=inline; the SMTP benchmark's embedded shape).
   */
  ports: { sql: SqlClient; store: Store; broker: Broker; topology: Topology };
  describe(): EmbeddedDescription;
  /** Stops accepting requests, finishes in-flight jobs within the grace period, closes clients. */
  close(): Promise<void>;
}

/** The clients of embedded mode: the servers whose URL is given explicitly, else in-process ones. */
async function openPorts(
  cfg: AppConfig,
  logger: Logger,
  shutdown: ReturnType<typeof createShutdown>,
): Promise<{ sql: SqlClient; broker: Broker; cache: Cache }> {
  let sql: SqlClient;
  if (cfg.database.explicit) {
    sql = createPgClient({ url: cfg.database.url, applicationName: 'trawl-all-in-one' });
  } else {
    const dir = join(cfg.dataDir, 'pglite');
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    sql = await createPgliteClient({ dataDir: dir });
  }
  shutdown.add('database', () => sql.close());
  await migrate(sql);
  if (sql.kind === 'pglite') {
    // PGlite has no autovacuum: without ANALYZE the plans made for empty tables stay (ADR 026)
    const maintenance = startPgliteMaintenance(sql, { logger });
    shutdown.add('database-maintenance', () => maintenance.stop());
  }
  const broker: Broker = cfg.rabbitmq.explicit
    ? createServiceBroker(cfg, 'all-in-one', logger)
    : createMemoryBroker({ logger });
  shutdown.add('broker', () => broker.close());
  const cache: Cache = cfg.redis.explicit
    ? createServiceCache(cfg, 'all-in-one', logger)
    : createMemoryCache({ maxEntries: 50_000, prefix: 'trawl:' });
  shutdown.add('cache', () => cache.close());
  return { sql, broker, cache };
}

/**
 * Every service in this process (ADR 021): the list of the services' own assemblies over
 * in-process ports, nothing more. The analyzer orchestrator (the built-in analyzers in-process),
 * the gateway (calling the same invoker for dry runs), the Graph and Gmail retrievers when their
 * mailboxes are named, and the mail orchestrator when retrievers are configured, submitting to
 * the gateway directly. PostgreSQL, RabbitMQ and Redis are used only when their URL is given
 * explicitly (DATABASE_URL, RABBITMQ_URL, REDIS_URL); otherwise PGlite with its data in
 * TRAWL_DATA_DIR, the in-process broker and cache.
 */
export async function startEmbedded(cfg: AppConfig, opts: EmbeddedOptions = {}): Promise<Embedded> {
  const logger = opts.logger ?? createGatewayLogger(cfg.pinoLevel);
  const version = opts.version ?? '0.0.0';
  const shutdown = createShutdown(logger);
  try {
    const { sql, broker, cache } = await openPorts(cfg, logger, shutdown);
    const store = createStore(sql);
    const topo = topology(cfg.brokerPrefix);
    await declareTopology(broker, topo);
    const ports = { sql, store, broker, topology: topo, cache, logger };

    // With the in-process broker every unfinished job is queued again (a fresh broker is empty).
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

    // One /metrics (the gateway's) shows every component of the process.
    const registries: Registry[] = [];
    const orchestrator = await startOrchestrator(
      ports,
      orchestratorSettings(cfg, { version, listen: false, instanceId: 'embedded' }),
    );
    shutdown.add('analyzer-orchestrator', () => orchestrator.close());
    registries.push(orchestrator.orchestrator.registry);

    const gateway = await startGateway(
      {
        ...ports,
        invoker: orchestrator.invoker,
        metricsRegistries: registries,
        ...(sql.dumpDataDir
          ? { backup: () => writeBackup(sql, join(cfg.dataDir, 'backups')) }
          : {}),
      },
      {
        ...gatewaySettings(cfg, {
          version,
          // 127.0.0.1 unless TRAWL_HOST says otherwise: a laptop's Trawl is not served to its network.
          listen: {
            host: opts.host ?? cfg.gateway.embeddedHost,
            port: opts.port ?? cfg.gateway.port,
          },
        }),
        known: orchestrator.builtins,
      },
    );
    shutdown.add('api-gateway', () => gateway.close());

    // Mail orchestrator, when retrievers are configured (or run here: Graph, Gmail).
    let mail: Awaited<ReturnType<typeof startMailOrchestrator>> | undefined;
    let mailRetrievers = cfg.mailRetrievers;
    const own = opts.retrievers?.graph || opts.retrievers?.gmail;
    if (own && cfg.internalApiKey && opts.retrievers) {
      const started = await startEmbeddedRetrievers(cfg, opts.retrievers, {
        logger,
        cache,
        version,
        registries,
      });
      shutdown.add('retrievers', () => started.close());
      mailRetrievers = { ...cfg.mailRetrievers, ...started.entries };
    }
    const enabled = Object.values(mailRetrievers).filter((r) => r.enabled !== false);
    if (enabled.length > 0 || own) {
      if (!cfg.internalApiKey) {
        logger.warn(
          'TRAWL_MAIL_RETRIEVERS is set but INTERNAL_API_KEY is not: mail ingestion is off',
        );
      } else {
        const m = await startMailOrchestrator(
          {
            broker,
            topology: topo,
            cache,
            logger,
            gateway: { url: gateway.url, app: gateway.app },
          },
          mailOrchestratorSettings(cfg, {
            version,
            internalApiKey: cfg.internalApiKey,
            retrievers: mailRetrievers,
          }),
        );
        mail = m;
        shutdown.add('mail-orchestrator', () => m.close());
        registries.push(m.mail.registry);
      }
    }

    return {
      url: gateway.url,
      port: gateway.port,
      host: gateway.host,
      backends: {
        store: cfg.database.explicit ? 'postgres' : 'pglite',
        broker: broker.kind,
        cache: cfg.redis.explicit ? 'redis' : 'memory',
      },
      requeued,
      adminCreated: gateway.adminCreated,
      mail: mail !== undefined,
      app: gateway.app,
      orchestrator: orchestrator.orchestrator,
      ports: { sql, store, broker, topology: topo },
      describe: () => ({
        orchestrator: orchestrator.describe(),
        gateway: gateway.describe(),
        ...(mail ? { mail: mail.describe() } : {}),
        stopOrder: shutdown.order(),
      }),
      // errors are logged by the shutdown; a stop goes on to the end
      close: () => shutdown.close().catch(() => undefined),
    };
  } catch (err) {
    await shutdown.close().catch(() => undefined);
    throw err;
  }
}
