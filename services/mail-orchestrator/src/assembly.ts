import type { AppConfig } from '@trawl/config';
import type { MailRetrievers } from '@trawl/contracts';
import { type Assembled, assemble, type ServicePorts } from '@trawl/platform';
import type { Registry } from 'prom-client';
import { buildMailOrchestrator, type MailOrchestrator } from './app.ts';
import { type InProcessGateway, inProcessTransport } from './in-process-gateway.ts';

/** What a mail orchestrator is given: clients opened (and closed) by its caller. */
export interface MailOrchestratorPorts extends ServicePorts {
  registry?: Registry;
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

/** A started mail orchestrator: the service, its close() and the options it compiled. */
export interface RunningMailOrchestrator {
  mail: MailOrchestrator;
  describe(): MailOrchestratorDescription;
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
): Promise<RunningMailOrchestrator & Assembled> {
  const { gateway, ...clients } = ports;
  const host = new URL(gateway.url).host;
  const mail = buildMailOrchestrator({
    ...clients,
    retrievers: settings.retrievers,
    gateway: {
      baseUrl: gateway.url,
      ...(gateway.app ? { transport: inProcessTransport(gateway.app, host) } : {}),
    },
    internalApiKey: settings.internalApiKey,
    options: { serviceVersion: settings.serviceVersion, maxMessageBytes: settings.maxMessageBytes },
  });
  return assemble(ports.logger, async (shutdown) => {
    await mail.start();
    shutdown.add('poller', () => mail.stop(settings.shutdownGraceMs));
    await mail.app.listen(settings.listen);
    shutdown.add('http', () => mail.app.close());
    return {
      mail,
      describe: () => ({
        service: 'mail-orchestrator' as const,
        retrievers: Object.keys(settings.retrievers).sort(),
        maxMessageBytes: settings.maxMessageBytes,
        shutdownGraceMs: settings.shutdownGraceMs,
        submit: gateway.app ? ('in-process' as const) : ('http' as const),
        stopOrder: shutdown.order(),
      }),
    };
  });
}
