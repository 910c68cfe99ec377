import {
  type ApiRetriever,
  type ApiRetrieverMetrics,
  buildApiRetrieverApp,
} from '@trawl/mailbox-sync';
import type { RetrieverAppBase } from '@trawl/platform';
import type { FastifyInstance } from 'fastify';
import { GMAIL_ERRORS } from './errors.ts';

/** The service's name, in logs, metrics and /health. */
export const SERVICE_NAME = 'retriever-gmail';

/** What the Gmail retriever's HTTP app needs. */
export interface GmailAppDeps extends RetrieverAppBase {
  retriever: ApiRetriever;
  metrics: ApiRetrieverMetrics;
}

/** The retriever protocol over HTTP for the Gmail mailboxes (not listening). */
export function buildApp(d: GmailAppDeps): FastifyInstance {
  return buildApiRetrieverApp({
    ...d,
    service: SERVICE_NAME,
    errors: { ...GMAIL_ERRORS, unavailable: GMAIL_ERRORS.api },
  });
}
