import type { AppConfig } from '@trawl/config';
import { type Assembled, assemble } from '@trawl/platform';
import type { Logger } from 'pino';
import { Registry } from 'prom-client';
import { createSmtpFilter, type SmtpFilterService } from './create-filter-service.ts';
import {
  type InlineAnalysisPorts,
  type InlineAnalysisSettings,
  inlineAnalysisSettings,
  startInlineAnalysis,
} from './inline-analysis.ts';
import { startMilter } from './milter/start-milter.ts';
import type { SmtpSettings } from './settings.ts';

/** What the SMTP filter is given by its caller. */
export interface RetrieverSmtpPorts {
  logger: Logger;
  registry?: Registry;
  /**
   * The database and broker of Trawl's analysis in this process: a milter with
   * TRAWL_MILTER_ANALYSIS=inline (ADR 013 section 5) needs them; nothing else uses them.
   */
  analysis?: Omit<InlineAnalysisPorts, 'logger' | 'registry'> | undefined;
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
  /** The analysis of a milter that analyses inline (mode `milter`, TRAWL_MILTER_ANALYSIS=inline). */
  inline?: InlineAnalysisSettings | undefined;
}

/** Whether these settings analyse in this process (a milter, TRAWL_MILTER_ANALYSIS=inline). */
export function analysesInline(s: Pick<RetrieverSmtpSettings, 'smtp' | 'milter'>): boolean {
  return s.smtp.mode === 'milter' && s.milter.analysis === 'inline';
}

/** The running SMTP retriever: its service, its listeners' addresses and one ordered close. */
export interface RunningRetrieverSmtp {
  service: SmtpFilterService;
  /** Where Postfix hands mail over: the SMTP listener, or the milter one in mode `milter`. */
  address: { host: string; port: number };
  /** The record queue of a milter analysing inline: its size, and a wait until it is written. */
  records?: { size(): number; settled(): Promise<void> } | undefined;
  describe(): {
    service: 'retriever-smtp';
    mode: string;
    /** `inline` or `remote` in mode `milter`. */
    analysis?: string;
    stopOrder: string[];
  };
}

/** The SMTP retriever's settings, read once from the configuration. */
export function retrieverSmtpSettings(
  cfg: AppConfig,
  smtp: SmtpSettings,
  o: { credential: string; version: string },
): RetrieverSmtpSettings {
  const s: RetrieverSmtpSettings = {
    smtp,
    listen: { host: cfg.retrieverSmtp.host, port: cfg.retrieverSmtp.port },
    milter: cfg.milter,
    credential: o.credential,
    version: o.version,
  };
  return analysesInline(s) ? { ...s, inline: inlineAnalysisSettings(cfg, o) } : s;
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
    // one registry: the filter's metrics and, inline, the analysis's, on one /metrics
    const registry = ports.registry ?? new Registry();
    // registered first, closed last: the records of the messages answered are written at close
    let inline: Awaited<ReturnType<typeof startInlineAnalysis>> | undefined;
    if (analysesInline(settings)) {
      if (!ports.analysis || !settings.inline) {
        throw new Error('TRAWL_MILTER_ANALYSIS=inline needs the database and the broker');
      }
      const started = await startInlineAnalysis(
        { ...ports.analysis, logger: ports.logger, registry },
        settings.inline,
      );
      inline = started;
      shutdown.add('inline-analysis', () => started.close());
    }
    const service = createSmtpFilter(settings.smtp, {
      logger: ports.logger,
      registry,
      credential,
      version,
      ...(inline
        ? { inline: { analyse: inline.analyse, retriever: settings.milter.retriever } }
        : {}),
    });
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
      records: inline?.recorder,
      describe: () => ({
        service: 'retriever-smtp',
        mode,
        ...(mode === 'milter' ? { analysis: settings.milter.analysis } : {}),
        stopOrder: shutdown.order(),
      }),
    };
  });
}
