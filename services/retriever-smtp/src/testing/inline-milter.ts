import { findRepoRoot, loadConfig } from '@trawl/config';
import { deriveCredential } from '@trawl/contracts';
import type { Assembled } from '@trawl/platform';
import type { InlineAnalysisPorts } from '../inline-analysis.ts';
import { SmtpSettings, type SmtpSettingsInput } from '../settings.ts';
import { type RunningRetrieverSmtp, retrieverSmtpSettings, startRetrieverSmtp } from '../start.ts';
import { silentLogger } from './client.ts';
import { PLATFORM_KEY } from './stack.ts';

export interface InlineMilterOptions {
  /** The filter's settings (TRAWL_SMTP_*); mode `milter` is set here. */
  smtp: Omit<SmtpSettingsInput, 'mode'>;
  milterPort: number;
  httpPort: number;
  /** The database and broker of the analysis (a TrawlStack's `analysisPorts`). */
  analysis: Omit<InlineAnalysisPorts, 'logger' | 'registry'>;
  /** TRAWL_MILTER_RECORD_QUEUE (default: the configuration's). */
  recordQueue?: number;
  /** TRAWL_MILTER_RETRIEVER (default `smtp`). */
  retriever?: string;
  /** Further configuration (TRAWL_ANALYSIS_WORKERS, …). */
  env?: Record<string, string>;
}

/**
 * The SMTP filter in milter mode analysing inline (TRAWL_MILTER_ANALYSIS=inline, ADR 013 section
 * 5), started by its own assembly (startRetrieverSmtp) with the shipped configuration files, as
 * main.ts starts it: the milter on `milterPort`, its HTTP side on `httpPort`.
 */
export async function startInlineMilter(
  o: InlineMilterOptions,
): Promise<RunningRetrieverSmtp & Assembled> {
  const retriever = o.retriever ?? 'smtp';
  const cfg = loadConfig({
    env: {
      APP_ENV: 'dev',
      TRAWL_MILTER_HOST: '127.0.0.1',
      TRAWL_MILTER_PORT: String(o.milterPort),
      TRAWL_RETRIEVER_SMTP_HOST: '127.0.0.1',
      TRAWL_RETRIEVER_SMTP_PORT: String(o.httpPort),
      TRAWL_MILTER_ANALYSIS: 'inline',
      TRAWL_MILTER_RETRIEVER: retriever,
      ...(o.recordQueue !== undefined ? { TRAWL_MILTER_RECORD_QUEUE: String(o.recordQueue) } : {}),
      ...o.env,
    },
    envFile: false,
    rootDir: findRepoRoot(),
    needs: { postgres: false, rabbitmq: false, redis: false, secretKey: false },
  });
  const smtp = SmtpSettings.parse({ verify_auth: false, ...o.smtp, mode: 'milter' });
  const credential = deriveCredential(PLATFORM_KEY, { kind: 'retriever', id: retriever });
  const settings = retrieverSmtpSettings(cfg, smtp, { credential, version: '0.0.0-test' });
  return startRetrieverSmtp({ logger: silentLogger, analysis: o.analysis }, settings);
}
