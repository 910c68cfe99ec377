import { createHash, timingSafeEqual } from 'node:crypto';
import { AckRequest, FetchRequest, TrawlError, toProblems, VerdictRequest } from '@trawl/contracts';
import Fastify, { type FastifyInstance, type FastifyReply } from 'fastify';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { IMAP_ERRORS } from './errors.ts';
import type { ImapRetriever } from './imap-retriever.ts';
import type { ImapSession } from './imap-session.ts';
import type { ImapMetrics } from './metrics.ts';

export const SERVICE_NAME = 'retriever-imap';

export interface RetrieverAppDeps {
  session: ImapSession;
  retriever: ImapRetriever;
  /** When set, every /internal/* call must carry it in X-Internal-API-Key. */
  internalApiKey?: string | undefined;
  logger: Logger;
  registry: Registry;
  metrics: ImapMetrics;
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
  const titles: Record<number, string> = {
    401: 'Unauthorized',
    404: 'Not Found',
    422: 'Unprocessable Content',
    503: 'Service Unavailable',
  };
  if (status === 503) reply.header('retry-after', '5');
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

/** The retriever protocol over HTTP (not listening; main.ts listens). */
export function buildRetrieverApp(d: RetrieverAppDeps): FastifyInstance {
  const app = Fastify({ logger: false, bodyLimit: 1024 * 1024 });

  app.get('/health', async (_req, reply) => {
    const connected = d.session.isConnected();
    reply.code(connected ? 200 : 503);
    return {
      status: connected ? 'healthy' : 'degraded',
      service: SERVICE_NAME,
      version: d.version ?? '0.0.0',
      imap: { connected, reconnects: d.session.reconnects },
    };
  });

  app.get('/metrics', async (_req, reply) => {
    d.metrics.connected.set(d.session.isConnected() ? 1 : 0);
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
          IMAP_ERRORS.unauthorized,
          'a valid X-Internal-API-Key is required',
        );
      }
    });

    internal.setErrorHandler((err, _request, reply) => {
      if (err instanceof TrawlError) {
        if (err.status >= 500)
          d.logger.warn({ code: err.code, err: err.message }, 'IMAP request failed');
        return sendProblem(reply, err.status, err.code, err.message);
      }
      const status = (err as { statusCode?: number }).statusCode;
      if (status && status < 500)
        return sendProblem(reply, status, IMAP_ERRORS.badRequest, (err as Error).message);
      d.logger.error({ err: (err as Error).message }, 'unexpected error');
      return sendProblem(reply, 503, IMAP_ERRORS.command, 'the request failed; retry later');
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
      sendProblem(reply, 422, IMAP_ERRORS.badRequest, 'the body is not valid', {
        errors: toProblems(r.error as Parameters<typeof toProblems>[0]),
      });
      return undefined;
    }

    internal.post('/internal/fetch', async (request, reply) => {
      const body = parse(FetchRequest, request.body, reply);
      if (!body) return reply;
      try {
        const messages = await d.retriever.fetch(body.max_messages);
        d.metrics.fetched.inc(messages.length);
        const backlog = d.retriever.backlog;
        if (backlog === undefined) return { messages };
        d.metrics.backlog.set(backlog);
        return { messages, backlog };
      } catch (err) {
        d.metrics.errors.inc({ op: 'fetch' });
        throw err;
      }
    });

    internal.post('/internal/ack', async (request, reply) => {
      const body = parse(AckRequest, request.body, reply);
      if (!body) return reply;
      try {
        const r = await d.retriever.ack(body.ids);
        d.metrics.acked.inc(r.moved);
        return { acked: r.moved, missing: r.missing };
      } catch (err) {
        d.metrics.errors.inc({ op: 'ack' });
        throw err;
      }
    });

    internal.post('/internal/verdict', async (request, reply) => {
      const body = parse(VerdictRequest, request.body, reply);
      if (!body) return reply;
      try {
        const r = await d.retriever.verdict(body);
        d.metrics.verdicts.inc({ action: r.verdict === 'unanalyzed' ? 'unanalyzed' : r.action });
        return { applied: true, ...r };
      } catch (err) {
        d.metrics.errors.inc({ op: 'verdict' });
        throw err;
      }
    });
  });

  return app;
}
