import type { AppConfig } from '@trawl/config';
import { type Assembled, assemble } from '@trawl/platform';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { createImapRetriever, type ImapRetrieverService } from './create-retriever.ts';
import type { ImapSettings } from './settings.ts';

/** What the IMAP retriever is given by its caller. */
export interface RetrieverImapPorts {
  logger: Logger;
  registry?: Registry;
}

/** Everything the IMAP retriever is assembled with, compiled once by retrieverImapSettings. */
export interface RetrieverImapSettings {
  imap: ImapSettings;
  /** TRAWL_RETRIEVER_IMAP_HOST / _PORT: where the retriever protocol is served. */
  listen: { host: string; port: number };
  /** TRAWL_RETRIEVER_KEY: required on /internal/* when set. */
  internalApiKey: string | undefined;
  version: string;
}

/** A started IMAP retriever: the service and the options it compiled. */
export interface RunningRetrieverImap {
  service: ImapRetrieverService;
  describe(): { service: 'retriever-imap'; mailbox: string; stopOrder: string[] };
}

/** The IMAP retriever's settings, compiled once from the configuration. */
export function retrieverImapSettings(
  cfg: Pick<AppConfig, 'retrieverImap' | 'retrieverKey'>,
  imap: ImapSettings,
  version: string,
): RetrieverImapSettings {
  return {
    imap,
    listen: { host: cfg.retrieverImap.host, port: cfg.retrieverImap.port },
    internalApiKey: cfg.retrieverKey,
    version,
  };
}

/**
 * The IMAP retriever, running (ADR 021): connecting in the background (its endpoints answer 503
 * until connected) and serving the retriever protocol.
 */
export async function startRetrieverImap(
  ports: RetrieverImapPorts,
  settings: RetrieverImapSettings,
): Promise<RunningRetrieverImap & Assembled> {
  return assemble(ports.logger, async (shutdown) => {
    const { internalApiKey, version } = settings;
    const service = createImapRetriever(settings.imap, { ...ports, internalApiKey, version });
    service.start();
    // closes the HTTP side gracefully, then the IMAP session
    shutdown.add('retriever', () => service.stop());
    await service.app.listen(settings.listen);
    const mailbox = `${settings.imap.host}:${settings.imap.port}`;
    return {
      service,
      describe: () => ({ service: 'retriever-imap', mailbox, stopOrder: shutdown.order() }),
    };
  });
}
