import {
  AckRequest,
  FetchRequest,
  TransientError,
  TrawlError,
  VerdictRequest,
} from '@trawl/contracts';
import {
  type BodySchema,
  type RetrieverAppBase,
  refuseUnknownRoute,
  retrieverHttp,
  sendRetrieverProblem,
} from '@trawl/platform';
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

  app.register(async (internal) => {
    internal.addHook('onRequest', http.checkKey);

    internal.setErrorHandler((err, _request, reply) => {
      if (err instanceof TrawlError) {
        if (err instanceof TransientError) {
          reply.header('retry-after', String(err.retryAfterSeconds));
          return reply.code(503).type('application/problem+json').send({
            type: 'about:blank',
            title: 'Service Unavailable',
            status: 503,
            detail: err.message,
            code: err.code,
          });
        }
        return sendRetrieverProblem(reply, err.status, err.code, err.message);
      }
      const answered = http.clientError(err, reply);
      if (answered) return answered;
      d.logger.error({ err: (err as Error).message }, 'unexpected error');
      return sendRetrieverProblem(
        reply,
        503,
        d.errors.unavailable,
        'the request failed; retry later',
      );
    });

    function route<T>(op: string, schema: BodySchema<T>, handle: (body: T) => Promise<unknown>) {
      internal.post(`/internal/${op}`, async (request, reply) => {
        const body = http.parse(schema, request.body, reply);
        if (!body) return reply;
        try {
          return await handle(body);
        } catch (err) {
          d.metrics.errors.inc({ op });
          throw err;
        }
      });
    }

    route('fetch', FetchRequest, async (body) => {
      const messages = await d.retriever.fetch(body.max_messages);
      d.metrics.fetched.inc(messages.length);
      const backlog = d.retriever.backlog;
      return backlog === undefined ? { messages } : { messages, backlog };
    });

    route('ack', AckRequest, async (body) => d.retriever.ack(body.ids));

    route('verdict', VerdictRequest, async (body) => {
      const r = await d.retriever.verdict(body);
      d.metrics.verdicts.inc({ rule: r.rule });
      return { applied: true, ...r };
    });
  });

  return app;
}
