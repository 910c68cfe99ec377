import { type AppConfig, diffFiles } from '@trawl/config';
import type { ServiceConfigFile } from '@trawl/contracts';
import { type Assembled, assemble, type StoreServicePorts } from '@trawl/platform';
import { createPluginClient, pluginTargets } from '@trawl/plugin-client';
import type { CompiledWorkflow } from '@trawl/workflow-engine';
import type { FastifyInstance } from 'fastify';
import type { Registry } from 'prom-client';
import { bootstrapAdmin } from './bootstrap.ts';
import { followConfigReloads } from './config-events.ts';
import { loadSnapshot } from './config-loader.ts';
import { type ConfigState, createConfigState } from './config-state.ts';
import type { BackupResult, PluginInvoker } from './deps.ts';
import { buildConfiguredGateway, startGatewayBackground } from './gateway-process.ts';

/** What a gateway is given: clients opened (and closed) by its caller. */
export interface GatewayPorts extends StoreServicePorts {
  /**
   * The invoker of the analyzers in this process (embedded mode: the orchestrator's, which
   * retargets it on a reload); absent: the HTTP plugin client, retargeted here.
   */
  invoker?: PluginInvoker;
  /** Other registries /metrics shows (embedded mode: every part of the process). */
  metricsRegistries?: readonly Registry[];
  /** An online database backup (embedded mode, PGlite): POST /api/v1/system/backup. */
  backup?: () => Promise<BackupResult>;
}

/** Everything a gateway is assembled with, compiled once by gatewaySettings. */
export interface GatewaySettings {
  /** The configuration the app's options, the files and the background work are read from. */
  config: AppConfig;
  listen: { host: string; port: number };
  version: string;
  /** Analyzer and provider ids workflows may name besides service.yaml's (built into the process). */
  known?: { analyzers: readonly string[]; providers: readonly string[] } | undefined;
}

/** The options a gateway assembly compiled: what the parity test reads. */
export interface GatewayDescription {
  service: 'api-gateway';
  cpuWorkers: AppConfig['gateway']['cpuWorkers'];
  limits: AppConfig['limits'];
  webhookDispatcher: boolean;
  stopOrder: string[];
}

/** A started gateway: its app, close() and the options it compiled. */
export interface RunningGateway {
  app: FastifyInstance;
  configState: ConfigState<CompiledWorkflow>;
  /** Base address of the listening app, e.g. http://127.0.0.1:8001 (a wildcard host as 127.0.0.1). */
  url: string;
  port: number;
  /** The address it listens on. */
  host: string;
  /** True when this start created the first admin from TRAWL_ADMIN_USER / _PASSWORD. */
  adminCreated: boolean;
  describe(): GatewayDescription;
}

/** The gateway's settings from the configuration, the same in both shapes but for `listen`. */
export function gatewaySettings(
  cfg: AppConfig,
  o: { version: string; listen?: { host: string; port: number } },
): GatewaySettings {
  return {
    config: cfg,
    listen: o.listen ?? { host: cfg.gateway.host, port: cfg.gateway.port },
    version: o.version,
  };
}

/** The address to reach a server listening on `host` from this machine. */
export function connectHost(host: string): string {
  if (host === '0.0.0.0' || host === '' || host === '::' || host === '[::]') return '127.0.0.1';
  if (host.includes(':') && !host.startsWith('[')) return `[${host}]`;
  return host;
}

/**
 * The API gateway, running (ADR 021): its configuration state (the files, followed across
 * replicas), the first admin, the app listening, webhook deliveries and the feedback catch-up.
 * main.ts and embedded mode both call it. A configuration problem throws the ConfigError or
 * TrawlError of the loader, for main.ts to print.
 */
export async function startGateway(
  ports: GatewayPorts,
  settings: GatewaySettings,
): Promise<RunningGateway & Assembled> {
  const { sql, store, broker, topology, cache, logger } = ports;
  const cfg = settings.config;
  return assemble(logger, async (shutdown) => {
    const known = settings.known
      ? { knownAnalyzers: settings.known.analyzers, knownProviders: settings.known.providers }
      : {};
    const initial = loadSnapshot(cfg, known);
    let invoker: PluginInvoker;
    let retarget: (svc: ServiceConfigFile) => void = () => undefined;
    if (ports.invoker) {
      invoker = ports.invoker;
    } else {
      const http = createPluginClient({
        ...pluginTargets(initial.files.service),
        internalApiKey: cfg.internalApiKey,
      });
      shutdown.add('plugin-client', () => http.close());
      invoker = http;
      retarget = (svc) => http.setTargets(pluginTargets(svc));
    }
    const configState = createConfigState<CompiledWorkflow>({
      store,
      broker,
      topology,
      initial,
      diff: diffFiles,
      load: () => loadSnapshot(cfg, known),
      onSwap: (next) => retarget(next.files.service),
      onPublishError: (err) => logger.warn({ err }, 'config.reloaded could not be published'),
    });
    await configState.recordCurrent(null);
    const adminCreated = await bootstrapAdmin(
      store,
      { username: cfg.auth.adminUser, password: cfg.auth.adminPassword },
      logger,
    );
    // reloads done by another replica (in one process: its own event, a version it runs already)
    const follower = await followConfigReloads({ broker, topology, configState, logger });
    shutdown.add('config-follower', () => follower.cancel());
    const app = await buildConfiguredGateway(cfg, sql, {
      configState,
      invoker,
      version: settings.version,
      ...{ store, broker, cache, topology, logger },
      ...(ports.metricsRegistries ? { metricsRegistries: ports.metricsRegistries } : {}),
      ...(ports.backup ? { backup: ports.backup } : {}),
    });
    // Webhook deliveries (issue 17) and the feedback catch-up.
    const background = startGatewayBackground({
      cfg,
      sql,
      store,
      logger,
      version: settings.version,
    });
    shutdown.add('background', () => background.stop());
    shutdown.add('http', () => app.close());
    await app.listen(settings.listen);
    const address = app.server.address();
    const port = typeof address === 'object' && address ? address.port : settings.listen.port;
    const host = typeof address === 'object' && address ? address.address : settings.listen.host;
    return {
      app,
      configState,
      url: `http://${connectHost(settings.listen.host)}:${port}`,
      port,
      host,
      adminCreated,
      describe: () => ({
        service: 'api-gateway',
        cpuWorkers: cfg.gateway.cpuWorkers,
        limits: cfg.limits,
        webhookDispatcher: cfg.webhooks.dispatcher,
        stopOrder: shutdown.order(),
      }),
    };
  });
}
