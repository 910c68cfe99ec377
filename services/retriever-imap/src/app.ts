import { AckRequest, FetchRequest, TrawlError, VerdictRequest } from '@trawl/contracts';
import {
  type BodySchema,
  type RetrieverAppBase,
  refuseUnknownRoute,
  retrieverHttp,
  sendRetrieverProblem,
} from '@trawl/platform';
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

  app.register(async (internal) => {
    internal.addHook('onRequest', http.checkKey);

    internal.setErrorHandler((err, _request, reply) => {
      if (err instanceof TrawlError) {
        if (err.status >= 500)
          d.logger.warn({ code: err.code, err: err.message }, 'IMAP request failed');
        return sendRetrieverProblem(reply, err.status, err.code, err.message);
      }
      const answered = http.clientError(err, reply);
      if (answered) return answered;
      d.logger.error({ err: (err as Error).message }, 'unexpected error');
      return sendRetrieverProblem(
        reply,
        503,
        IMAP_ERRORS.command,
        'the request failed; retry later',
      );
    });

    /** A POST route whose failures are counted by operation (trawl_imap_errors_total). */
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
      if (backlog === undefined) return { messages };
      d.metrics.backlog.set(backlog);
      return { messages, backlog };
    });

    route('ack', AckRequest, async (body) => {
      const r = await d.retriever.ack(body.ids);
      d.metrics.acked.inc(r.moved);
      return { acked: r.moved, missing: r.missing };
    });

    route('verdict', VerdictRequest, async (body) => {
      const r = await d.retriever.verdict(body);
      d.metrics.verdicts.inc({ action: r.verdict === 'unanalyzed' ? 'unanalyzed' : r.action });
      return { applied: true, ...r };
    });
  });

  return app;
}
