import {
  type ApiRetriever,
  type ApiRetrieverMetrics,
  buildApiRetrieverApp,
} from '@trawl/mailbox-sync';
import type { RetrieverAppBase } from '@trawl/platform';
import type { FastifyInstance } from 'fastify';
import { GRAPH_ERRORS } from './errors.ts';

/** The service's name, in logs, metrics and /health. */
export const SERVICE_NAME = 'retriever-graph';

/** What the Graph retriever's HTTP app needs. */
export interface GraphAppDeps extends RetrieverAppBase {
  retriever: ApiRetriever;
  metrics: ApiRetrieverMetrics;
}

/** The retriever protocol over HTTP for the Graph mailboxes (not listening). */
export function buildApp(d: GraphAppDeps): FastifyInstance {
  return buildApiRetrieverApp({
    ...d,
    service: SERVICE_NAME,
    errors: { ...GRAPH_ERRORS, unavailable: GRAPH_ERRORS.api },
  });
}
