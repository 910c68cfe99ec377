import { type RetrieverAppBase, refuseUnknownRoute, retrieverHttp } from '@trawl/platform';
import Fastify, { type FastifyInstance } from 'fastify';
import { IMAP_ERRORS } from './errors.ts';
import type { ImapRetriever } from './imap-retriever.ts';
import type { ImapSession } from './imap-session.ts';
import type { ImapMetrics } from './metrics.ts';

/** The service's name, in logs, metrics and /health. */
export const SERVICE_NAME = 'retriever-imap';

/** What the IMAP retriever's HTTP app needs. */
export interface RetrieverAppDeps extends RetrieverAppBase {
  session: ImapSession;
  retriever: ImapRetriever;
  metrics: ImapMetrics;
}

/** The retriever protocol over HTTP (not listening; main.ts listens). */
export function buildRetrieverApp(d: RetrieverAppDeps): FastifyInstance {
  const app = Fastify({ logger: false, bodyLimit: 1024 * 1024 });
  // a request for no route: 404 before its body is read (issue 28)
  app.addHook('onRequest', refuseUnknownRoute);
  const http = retrieverHttp({ ...d, service: SERVICE_NAME, errors: IMAP_ERRORS });

  app.get('/health', async (_req, reply) => {
    const connected = d.session.isConnected();
    return http.health(reply, connected, {
      imap: { connected, reconnects: d.session.reconnects },
    });
  });

  app.get('/metrics', async (_req, reply) => {
    d.metrics.connected.set(d.session.isConnected() ? 1 : 0);
    return http.metrics(reply);
  });

  app.register(async (internal) =>
    http.internal(internal, {
      logger: d.logger,
      unavailable: IMAP_ERRORS.command,
      // failures by operation: trawl_imap_errors_total
      failed: (op) => d.metrics.errors.inc({ op }),
      routes: {
        async fetch(body) {
          const messages = await d.retriever.fetch(body.max_messages);
          d.metrics.fetched.inc(messages.length);
          const backlog = d.retriever.backlog;
          if (backlog === undefined) return { messages };
          d.metrics.backlog.set(backlog);
          return { messages, backlog };
        },
        async ack(body) {
          const r = await d.retriever.ack(body.ids);
          d.metrics.acked.inc(r.moved);
          return { acked: r.moved, missing: r.missing };
        },
        async verdict(body) {
          const r = await d.retriever.verdict(body);
          d.metrics.verdicts.inc({ action: r.verdict === 'unanalyzed' ? 'unanalyzed' : r.action });
          return { applied: true, ...r };
        },
      },
    }),
  );

  return app;
}
