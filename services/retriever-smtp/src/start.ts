import type { AppConfig } from '@trawl/config';
import { type Assembled, assemble } from '@trawl/platform';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { createSmtpFilter, type SmtpFilterService } from './create-filter-service.ts';
import { startMilter } from './milter/start-milter.ts';
import type { SmtpSettings } from './settings.ts';

/** What the SMTP filter is given by its caller. */
export interface RetrieverSmtpPorts {
  logger: Logger;
  registry?: Registry;
}

/** Everything the SMTP filter is assembled with, compiled once by retrieverSmtpSettings. */
export interface RetrieverSmtpSettings {
  smtp: SmtpSettings;
  /** TRAWL_RETRIEVER_SMTP_HOST / _PORT: where the retriever protocol is served. */
  listen: { host: string; port: number };
  /** TRAWL_MILTER_HOST / _PORT / _MAX_PACKET_BYTES: the milter listener (mode `milter`). */
  milter: AppConfig['milter'];
  /** TRAWL_RETRIEVER_KEY: the filter's own credential, sent and checked. */
  credential: string;
  version: string;
}

export interface RunningRetrieverSmtp {
  service: SmtpFilterService;
  /** Where Postfix hands mail over: the SMTP listener, or the milter one in mode `milter`. */
  address: { host: string; port: number };
  describe(): { service: 'retriever-smtp'; mode: string; stopOrder: string[] };
}

export function retrieverSmtpSettings(
  cfg: Pick<AppConfig, 'retrieverSmtp' | 'milter'>,
  smtp: SmtpSettings,
  o: { credential: string; version: string },
): RetrieverSmtpSettings {
  return {
    smtp,
    listen: { host: cfg.retrieverSmtp.host, port: cfg.retrieverSmtp.port },
    milter: cfg.milter,
    credential: o.credential,
    version: o.version,
  };
}

/**
 * The SMTP filter, running (ADR 021): the retriever protocol over HTTP (verdicts come in there)
 * and the listener Postfix hands mail to: an SMTP content filter, or a milter (mode `milter`).
 */
export async function startRetrieverSmtp(
  ports: RetrieverSmtpPorts,
  settings: RetrieverSmtpSettings,
): Promise<RunningRetrieverSmtp & Assembled> {
  return assemble(ports.logger, async (shutdown) => {
    const { credential, version } = settings;
    const service = createSmtpFilter(settings.smtp, { ...ports, credential, version });
    // stops the SMTP listener (mail in flight is answered) and the HTTP side
    shutdown.add('filter', () => service.stop());
    await service.app.listen(settings.listen);
    let address: { host: string; port: number };
    if (settings.smtp.mode === 'milter') {
      const milter = await startMilter(service, {
        settings: settings.smtp,
        milter: settings.milter,
        logger: ports.logger,
      });
      shutdown.add('milter', () => milter.close());
      address = milter.address;
    } else {
      address = await service.start();
    }
    const mode = settings.smtp.mode;
    return {
      service,
      address,
      describe: () => ({ service: 'retriever-smtp', mode, stopOrder: shutdown.order() }),
    };
  });
}
