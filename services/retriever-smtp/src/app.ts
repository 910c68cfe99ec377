import { AckRequest, FetchRequest, ReleaseRequest, VerdictRequest } from '@trawl/contracts';
import { type RetrieverAppBase, refuseUnknownRoute, retrieverHttp } from '@trawl/platform';
import Fastify, { type FastifyInstance } from 'fastify';
import { SMTP_ERRORS } from './errors.ts';
import { editHeaders } from './headers.ts';
import type { SmtpMetrics } from './metrics.ts';
import type { Reinjector } from './reinjector.ts';
import type { VerdictBoard } from './verdict-board.ts';

/** The service's name in logs, metrics and health answers. */
export const SERVICE_NAME = 'retriever-smtp';

/** What the retriever's HTTP app is built from: the retriever base and the board verdicts arrive on. */
export interface SmtpRetrieverAppDeps extends RetrieverAppBase {
  board: VerdictBoard;
  /** Delivers released messages to Postfix's return port, past the filter. */
  reinjector?: Reinjector;
  /** True while the SMTP listener accepts connections. */
  smtpListening: () => boolean;
  metrics: SmtpMetrics;
}

/**
 * The retriever protocol of the SMTP filter (not listening; main.ts listens). It pushes mail, so
 * fetch always answers an empty batch and ack has nothing to do; verdicts wake the SMTP session
 * waiting for them.
 */
export function buildSmtpRetrieverApp(d: SmtpRetrieverAppDeps): FastifyInstance {
  // a release carries the original (base64 of up to TRAWL_SMTP_MAX_MESSAGE_BYTES)
  const app = Fastify({ logger: false, bodyLimit: 140 * 1024 * 1024 });
  // a request for no route: 404 before its body is read (issue 28)
  app.addHook('onRequest', refuseUnknownRoute);

  const http = retrieverHttp({ ...d, service: SERVICE_NAME, errors: SMTP_ERRORS });

  app.get('/health', async (_req, reply) => {
    const ok = d.smtpListening();
    return http.health(reply, ok, { smtp: { listening: ok, waiting: d.board.waiting } });
  });

  app.get('/metrics', async (_req, reply) => http.metrics(reply));

  app.register(async (internal) => {
    internal.addHook('onRequest', http.checkKey);
    internal.setErrorHandler((err, _request, reply) => {
      const answered = http.clientError(err, reply);
      if (answered) return answered;
      d.logger.error({ err: (err as Error).message }, 'unexpected error');
      return reply.code(500).send({ status: 500, code: 'TRAWL_ERR_INTERNAL' });
    });

    internal.post('/internal/fetch', async (request, reply) => {
      if (!http.parse(FetchRequest, request.body, reply)) return reply;
      return { messages: [], backlog: 0 };
    });

    internal.post('/internal/ack', async (request, reply) => {
      if (!http.parse(AckRequest, request.body, reply)) return reply;
      return { acked: 0 };
    });

    // A quarantined message an analyst released (the gateway calls with this filter's credential):
    // delivered to its recipients through the return port, which does not filter it again.
    internal.post('/internal/release', async (request, reply) => {
      const body = http.parse(ReleaseRequest, request.body, reply);
      if (!body) return reply;
      if (!d.reinjector) return reply.code(503).send({ status: 503, code: SMTP_ERRORS.release });
      const raw = editHeaders(Buffer.from(body.raw, 'base64'), {
        add: [['X-Trawl-Released-By', body.released_by]],
      });
      try {
        await d.reinjector.send({ from: body.envelope_from, to: body.recipients, raw });
      } catch (err) {
        d.logger.warn(
          { id: body.id, err: (err as Error).message, code: SMTP_ERRORS.release },
          'released message not delivered',
        );
        return reply
          .code(503)
          .send({ status: 503, code: SMTP_ERRORS.release, detail: (err as Error).message });
      }
      d.logger.info({ id: body.id, released_by: body.released_by }, 'released message delivered');
      return { delivered: true };
    });

    internal.post('/internal/verdict', async (request, reply) => {
      const body = http.parse(VerdictRequest, request.body, reply);
      if (!body) return reply;
      const waited = d.board.post(body);
      d.metrics.verdicts.inc({ verdict: body.verdict ?? 'analyzed' });
      return { applied: true, waiting: waited };
    });
  });

  return app;
}
