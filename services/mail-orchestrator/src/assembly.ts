import type { AppConfig } from '@trawl/config';
import type { MailRetrievers, Topology } from '@trawl/contracts';
import { type Broker, type Cache, createShutdown } from '@trawl/platform';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { buildMailOrchestrator, type MailOrchestrator } from './app.ts';
import { type InProcessGateway, inProcessTransport } from './in-process-gateway.ts';

/** What a mail orchestrator is given: clients opened (and closed) by its caller. */
export interface MailOrchestratorPorts {
  broker: Broker;
  topology: Topology;
  cache: Cache;
  logger: Logger;
  registry?: Registry;
  clock?: () => Date;
  /**
   * The gateway it submits to. `url` alone: over HTTP (scale-out). With `app`, a gateway in this
   * process: called directly (embedded mode; ADR 021), `url` only names its Host.
   */
  gateway: { url: string; app?: InProcessGateway | undefined };
}

/** Everything a mail orchestrator is assembled with, compiled once by mailOrchestratorSettings. */
export interface MailOrchestratorSettings {
  retrievers: MailRetrievers;
  internalApiKey: string;
  maxMessageBytes: number;
  shutdownGraceMs: number;
  listen: { host: string; port: number };
  serviceVersion: string;
}

/** The options a mail orchestrator assembly compiled: what the parity test reads. */
export interface MailOrchestratorDescription {
  service: 'mail-orchestrator';
  retrievers: string[];
  maxMessageBytes: number;
  shutdownGraceMs: number;
  /** How messages reach the gateway. */
  submit: 'http' | 'in-process';
  stopOrder: string[];
}

export interface RunningMailOrchestrator {
  mail: MailOrchestrator;
  describe(): MailOrchestratorDescription;
  close(): Promise<void>;
}

/** The mail orchestrator's settings from the configuration (`retrievers`: the entries to poll). */
export function mailOrchestratorSettings(
  cfg: AppConfig,
  o: { version: string; internalApiKey: string; retrievers?: MailRetrievers },
): MailOrchestratorSettings {
  return {
    retrievers: o.retrievers ?? cfg.mailRetrievers,
    internalApiKey: o.internalApiKey,
    maxMessageBytes: cfg.limits.rawMessageBytes,
    shutdownGraceMs: cfg.orchestrator.shutdownGraceMs,
    listen: { host: cfg.mailOrchestratorHost, port: cfg.mailOrchestratorPort },
    serviceVersion: o.version,
  };
}

/**
 * The mail orchestrator, running (ADR 021): polling the retrievers, taking pushed mail on
 * /internal/ingest, relaying verdicts. main.ts and embedded mode both call it.
 */
export async function startMailOrchestrator(
  ports: MailOrchestratorPorts,
  settings: MailOrchestratorSettings,
): Promise<RunningMailOrchestrator> {
  const shutdown = createShutdown(ports.logger);
  const host = new URL(ports.gateway.url).host;
  const mail = buildMailOrchestrator({
    retrievers: settings.retrievers,
    gateway: {
      baseUrl: ports.gateway.url,
      ...(ports.gateway.app ? { transport: inProcessTransport(ports.gateway.app, host) } : {}),
    },
    internalApiKey: settings.internalApiKey,
    broker: ports.broker,
    topology: ports.topology,
    cache: ports.cache,
    logger: ports.logger,
    ...(ports.registry ? { registry: ports.registry } : {}),
    ...(ports.clock ? { clock: ports.clock } : {}),
    options: { serviceVersion: settings.serviceVersion, maxMessageBytes: settings.maxMessageBytes },
  });
  try {
    await mail.start();
    shutdown.add('poller', () => mail.stop(settings.shutdownGraceMs));
    await mail.app.listen(settings.listen);
    shutdown.add('http', () => mail.app.close());
  } catch (err) {
    await shutdown.close().catch(() => undefined);
    throw err;
  }
  return {
    mail,
    describe: () => ({
      service: 'mail-orchestrator',
      retrievers: Object.keys(settings.retrievers).sort(),
      maxMessageBytes: settings.maxMessageBytes,
      shutdownGraceMs: settings.shutdownGraceMs,
      submit: ports.gateway.app ? 'in-process' : 'http',
      stopOrder: shutdown.order(),
    }),
    close: () => shutdown.close(),
  };
}
