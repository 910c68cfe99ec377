import { type RetrieverAppBase, refuseUnknownRoute, retrieverHttp } from '@trawl/platform';
import Fastify, { type FastifyInstance } from 'fastify';
import type { ApiRetriever } from './api-retriever.ts';
import type { ApiRetrieverMetrics } from './metrics.ts';

/** What the HTTP app of an API retriever needs. */
export interface ApiRetrieverAppDeps extends RetrieverAppBase {
  /** `retriever-graph`, `retriever-gmail`: named by /health. */
  service: string;
  retriever: ApiRetriever;
  metrics: ApiRetrieverMetrics;
  /** The service's codes: a missing key, a bad body, an unexpected failure. */
  errors: { unauthorized: string; badRequest: string; unavailable: string };
}

/** The retriever protocol over HTTP of an API retriever (not listening). */
export function buildApiRetrieverApp(d: ApiRetrieverAppDeps): FastifyInstance {
  const app = Fastify({ logger: false, bodyLimit: 1024 * 1024 });
  // a request for no route: 404 before its body is read (issue 28)
  app.addHook('onRequest', refuseUnknownRoute);
  const http = retrieverHttp({ ...d, errors: d.errors });

  app.get('/health', async (_req, reply) => {
    d.metrics.healthy.set(d.retriever.healthy ? 1 : 0);
    return http.health(reply, d.retriever.healthy, { mailboxes: d.retriever.health() });
  });

  app.get('/metrics', async (_req, reply) => {
    d.metrics.healthy.set(d.retriever.healthy ? 1 : 0);
    return http.metrics(reply);
  });

  app.register(async (internal) =>
    http.internal(internal, {
      logger: d.logger,
      unavailable: d.errors.unavailable,
      failed: (op) => d.metrics.errors.inc({ op }),
      routes: {
        async fetch(body) {
          const messages = await d.retriever.fetch(body.max_messages);
          d.metrics.fetched.inc(messages.length);
          const backlog = d.retriever.backlog;
          return backlog === undefined ? { messages } : { messages, backlog };
        },
        ack: (body) => d.retriever.ack(body.ids),
        async verdict(body) {
          const r = await d.retriever.verdict(body);
          d.metrics.verdicts.inc({ rule: r.rule });
          return { applied: true, ...r };
        },
      },
    }),
  );

  return app;
}
