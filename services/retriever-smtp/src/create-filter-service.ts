import type { RetrieverAppBase } from '@trawl/platform';
import type { FastifyInstance } from 'fastify';
import type { DNSResolver } from 'mailauth';
import { Registry } from 'prom-client';
import { buildSmtpRetrieverApp } from './app.ts';
import { createFilter, type Filter } from './filter.ts';
import { createIngestClient, type IngestClient } from './ingest-client.ts';
import { createInlineAuth } from './inline-auth.ts';
import { type InlineAnalyse, inlineVerdicts } from './inline-verdicts.ts';
import { createSmtpMetrics, type SmtpMetrics } from './metrics.ts';
import { createQuarantineRecorder } from './quarantine-recorder.ts';
import { createReinjector, type Reinjector } from './reinjector.ts';
import type { SmtpSettings } from './settings.ts';
import { createSmtpListener, type SmtpListener } from './smtp-listener.ts';
import { VerdictBoard } from './verdict-board.ts';

/** The SMTP filter as one running service: its retriever HTTP app, listeners and ordered close. */
export interface SmtpFilterService {
  /** The retriever protocol over HTTP (verdicts come in here). */
  app: FastifyInstance;
  smtp: SmtpListener;
  filter: Filter;
  board: VerdictBoard;
  metrics: SmtpMetrics;
  registry: Registry;
  /** Counts `listener` in /health (the milter listener: milter/start-milter.ts). */
  watch(listener: { readonly listening: boolean }): void;
  /** Starts the SMTP listener; resolves with its address. */
  start(): Promise<{ host: string; port: number }>;
  stop(): Promise<void>;
}

/** Everything the SMTP filter is, from its settings; clients may be passed in (tests). */
export function createSmtpFilter(
  settings: SmtpSettings,
  deps: Pick<RetrieverAppBase, 'logger' | 'version'> & {
    /** The filter's own credential (`trawl credentials retriever <name>`): sent and checked. */
    credential?: string | undefined;
    registry?: Registry;
    ingest?: IngestClient;
    reinjector?: Reinjector;
    /** SMTP port override (tests: 0). */
    smtpPort?: number;
    /** The DNS resolver of the authentication check (default: TRAWL_SMTP_DNS_* settings). */
    resolver?: DNSResolver;
    /** Trawl's analysis in this process (TRAWL_MILTER_ANALYSIS=inline): no push, no wait. */
    inline?: { analyse: InlineAnalyse; retriever: string };
  },
): SmtpFilterService {
  const registry = deps.registry ?? new Registry();
  const metrics = createSmtpMetrics(registry);
  const logger = deps.logger.child({ service: 'retriever-smtp' });
  const board = new VerdictBoard();
  const ingest =
    deps.ingest ??
    createIngestClient({ url: settings.mail_orchestrator_url, credential: deps.credential });
  const reinjector =
    deps.reinjector ??
    createReinjector({
      host: settings.return_host,
      port: settings.return_port,
      connections: settings.reinject_connections,
    });
  const inlineAuth = settings.verify_auth
    ? createInlineAuth(settings, { logger, registry, resolver: deps.resolver })
    : undefined;
  const quarantine = settings.gateway_url
    ? createQuarantineRecorder({
        gatewayUrl: settings.gateway_url,
        credential: deps.credential,
        timeoutMs: 60_000,
      })
    : undefined;
  const filter = createFilter({
    settings,
    board,
    ingest,
    reinjector,
    metrics,
    logger,
    inlineAuth,
    quarantine,
    analyse: deps.inline ? inlineVerdicts({ ...deps.inline, board, metrics }) : undefined,
  });
  const smtp = createSmtpListener({
    filter,
    settings,
    logger,
    ...(deps.smtpPort !== undefined ? { port: deps.smtpPort } : {}),
  });
  const watched: { readonly listening: boolean }[] = [];
  const app = buildSmtpRetrieverApp({
    board,
    reinjector,
    smtpListening: () => smtp.listening || watched.some((l) => l.listening),
    internalApiKey: deps.credential,
    logger,
    registry,
    metrics,
    version: deps.version,
  });
  return {
    app,
    smtp,
    filter,
    board,
    metrics,
    registry,
    watch: (l) => {
      watched.push(l);
    },
    start: () => smtp.listen(),
    async stop() {
      await smtp.close();
      reinjector.close();
      await app.close();
    },
  };
}
