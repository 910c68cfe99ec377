import { createHash, timingSafeEqual } from 'node:crypto';
import { AckRequest, FetchRequest, toProblems, VerdictRequest } from '@trawl/contracts';
import Fastify, { type FastifyInstance, type FastifyReply } from 'fastify';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { SMTP_ERRORS } from './errors.ts';
import type { SmtpMetrics } from './metrics.ts';
import type { VerdictBoard } from './verdict-board.ts';

export const SERVICE_NAME = 'retriever-smtp';

export interface SmtpRetrieverAppDeps {
  board: VerdictBoard;
  /** True while the SMTP listener accepts connections. */
  smtpListening: () => boolean;
  /** When set, every /internal/* call must carry it in X-Internal-API-Key. */
  internalApiKey?: string | undefined;
  logger: Logger;
  registry: Registry;
  metrics: SmtpMetrics;
  version?: string;
}

function keysEqual(a: string, b: string): boolean {
  const ha = createHash('sha256').update(a).digest();
  const hb = createHash('sha256').update(b).digest();
  return timingSafeEqual(ha, hb);
}

function sendProblem(
  reply: FastifyReply,
  status: number,
  code: string,
  detail: string,
  extra: Record<string, unknown> = {},
) {
  const titles: Record<number, string> = { 401: 'Unauthorized', 422: 'Unprocessable Content' };
  return reply
    .code(status)
    .type('application/problem+json')
    .send({
      type: 'about:blank',
      title: titles[status] ?? 'Error',
      status,
      detail,
      code,
      ...extra,
    });
}

/**
 * The retriever protocol of the SMTP filter (not listening; main.ts listens). It pushes mail, so
 * fetch always answers an empty batch and ack has nothing to do; verdicts wake the SMTP session
 * waiting for them.
 */
export function buildSmtpRetrieverApp(d: SmtpRetrieverAppDeps): FastifyInstance {
  const app = Fastify({ logger: false, bodyLimit: 1024 * 1024 });

  app.get('/health', async (_req, reply) => {
    const ok = d.smtpListening();
    reply.code(ok ? 200 : 503);
    return {
      status: ok ? 'healthy' : 'degraded',
      service: SERVICE_NAME,
      version: d.version ?? '0.0.0',
      smtp: { listening: ok, waiting: d.board.waiting },
    };
  });

  app.get('/metrics', async (_req, reply) => {
    reply.header('content-type', d.registry.contentType);
    return d.registry.metrics();
  });

  app.register(async (internal) => {
    internal.addHook('onRequest', async (request, reply) => {
      if (!d.internalApiKey) return;
      const key = request.headers['x-internal-api-key'];
      if (typeof key !== 'string' || !keysEqual(key, d.internalApiKey)) {
        return sendProblem(
          reply,
          401,
          SMTP_ERRORS.unauthorized,
          'a valid X-Internal-API-Key is required',
        );
      }
    });
    internal.setErrorHandler((err, _request, reply) => {
      const status = (err as { statusCode?: number }).statusCode;
      if (status && status < 500)
        return sendProblem(reply, status, SMTP_ERRORS.badRequest, (err as Error).message);
      d.logger.error({ err: (err as Error).message }, 'unexpected error');
      return reply.code(500).send({ status: 500, code: 'TRAWL_ERR_INTERNAL' });
    });

    function parse<T>(
      schema: {
        safeParse(v: unknown): { success: true; data: T } | { success: false; error: unknown };
      },
      body: unknown,
      reply: FastifyReply,
    ): T | undefined {
      const r = schema.safeParse(body ?? {});
      if (r.success) return r.data;
      sendProblem(reply, 422, SMTP_ERRORS.badRequest, 'the body is not valid', {
        errors: toProblems(r.error as Parameters<typeof toProblems>[0]),
      });
      return undefined;
    }

    internal.post('/internal/fetch', async (request, reply) => {
      if (!parse(FetchRequest, request.body, reply)) return reply;
      return { messages: [], backlog: 0 };
    });

    internal.post('/internal/ack', async (request, reply) => {
      if (!parse(AckRequest, request.body, reply)) return reply;
      return { acked: 0 };
    });

    internal.post('/internal/verdict', async (request, reply) => {
      const body = parse(VerdictRequest, request.body, reply);
      if (!body) return reply;
      const waited = d.board.post(body);
      d.metrics.verdicts.inc({ verdict: body.verdict ?? 'analyzed' });
      return { applied: true, waiting: waited };
    });
  });

  return app;
}
