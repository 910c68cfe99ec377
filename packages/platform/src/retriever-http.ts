import { createHash, timingSafeEqual } from 'node:crypto';
import {
  AckRequest,
  FetchRequest,
  TransientError,
  TrawlError,
  toProblems,
  VerdictRequest,
} from '@trawl/contracts';
import type { Logger } from 'pino';

/**
 * The HTTP side of the retriever protocol (docs/mail-ingestion.md) shared by the retrievers (IMAP,
 * SMTP filter): /health, /metrics, the X-Internal-API-Key check of /internal/*, request bodies and
 * problem details. Typed by the slices of Fastify it uses, so this package needs no Fastify.
 */

/** The slice of a Fastify reply the retriever protocol answers with. */
export interface RetrieverReply {
  code(status: number): RetrieverReply;
  header(name: string, value: string): RetrieverReply;
  type(contentType: string): RetrieverReply;
  send(payload?: unknown): RetrieverReply;
}

/** A zod schema, as far as parsing a body goes. */
export interface BodySchema<T> {
  safeParse(v: unknown): { success: true; data: T } | { success: false; error: unknown };
}

/** What a retriever's HTTP app is given besides its own parts. */
export interface RetrieverAppBase {
  /** When set, every /internal/* call must carry it in X-Internal-API-Key. */
  internalApiKey?: string | undefined;
  logger: Logger;
  /** The prom-client registry /metrics serves. */
  registry: { contentType: string; metrics(): Promise<string> };
  /** Reported by /health (default 0.0.0). */
  version?: string | undefined;
}

/** What a retriever's HTTP app needs: its service name, state and metrics. */
export interface RetrieverHttpOptions extends Omit<RetrieverAppBase, 'logger'> {
  /** `retriever-imap`, `retriever-smtp`: named by /health. */
  service: string;
  /** The retriever's error codes of a missing key and of a bad request. */
  errors: { unauthorized: string; badRequest: string };
}

const TITLES: Record<number, string> = {
  401: 'Unauthorized',
  404: 'Not Found',
  422: 'Unprocessable Content',
  503: 'Service Unavailable',
};

/** Constant-time comparison (the hashes equalise the lengths). */
function keysEqual(a: string, b: string): boolean {
  const ha = createHash('sha256').update(a).digest();
  const hb = createHash('sha256').update(b).digest();
  return timingSafeEqual(ha, hb);
}

/** Sends RFC 9457 problem details; a 503 says `Retry-After: 5`. */
export function sendRetrieverProblem(
  reply: RetrieverReply,
  status: number,
  code: string,
  detail: string,
  extra: Record<string, unknown> = {},
): RetrieverReply {
  if (status === 503) reply.header('retry-after', '5');
  return reply
    .code(status)
    .type('application/problem+json')
    .send({
      type: 'about:blank',
      title: TITLES[status] ?? 'Error',
      status,
      detail,
      code,
      ...extra,
    });
}

/**
 * An `onRequest` hook every Trawl service's HTTP app adds first (issue 28): a request for no route
 * is answered 404 before its body is read. Fastify otherwise reads and parses the body (up to the
 * app's limit) for its not-found handler, whoever sends it.
 */
export async function refuseUnknownRoute(
  request: { is404: boolean; method: string; url: string },
  reply: RetrieverReply,
): Promise<RetrieverReply | undefined> {
  if (!request.is404) return undefined;
  return sendRetrieverProblem(
    reply,
    404,
    'TRAWL_ERR_NOT_FOUND',
    `no route ${request.method} ${request.url.split('?')[0]}`,
  );
}

/** The slice of a Fastify instance (the /internal scope) the retriever protocol registers on. */
export interface InternalScope {
  addHook(
    name: 'onRequest',
    hook: (
      request: { headers: Record<string, string | string[] | undefined> },
      reply: RetrieverReply,
    ) => Promise<unknown>,
  ): unknown;
  setErrorHandler(
    handler: (err: Error, request: unknown, reply: RetrieverReply) => unknown,
  ): unknown;
  post(
    path: string,
    handler: (request: { body: unknown }, reply: RetrieverReply) => Promise<unknown>,
  ): unknown;
}

/** What one retriever does for POST /internal/fetch, /ack and /verdict (bodies already valid). */
export interface InternalRoutes {
  fetch(body: FetchRequest): Promise<unknown>;
  ack(body: AckRequest): Promise<unknown>;
  verdict(body: VerdictRequest): Promise<unknown>;
}

/** The routes' helpers of one retriever's HTTP app. */
export function retrieverHttp(o: RetrieverHttpOptions) {
  const self = {
    /** GET /health: 200 when `ok`, else 503; `detail` says what the retriever is connected to. */
    health(reply: RetrieverReply, ok: boolean, detail: Record<string, unknown>) {
      reply.code(ok ? 200 : 503);
      return {
        status: ok ? 'healthy' : 'degraded',
        service: o.service,
        version: o.version ?? '0.0.0',
        ...detail,
      };
    },

    /** GET /metrics: the registry in the Prometheus text format. */
    metrics(reply: RetrieverReply): Promise<string> {
      reply.header('content-type', o.registry.contentType);
      return o.registry.metrics();
    },

    /** The onRequest hook of /internal/*: without the key (when one is set), 401. */
    async checkKey(
      request: { headers: Record<string, string | string[] | undefined> },
      reply: RetrieverReply,
    ) {
      if (!o.internalApiKey) return;
      const key = request.headers['x-internal-api-key'];
      if (typeof key !== 'string' || !keysEqual(key, o.internalApiKey)) {
        return sendRetrieverProblem(
          reply,
          401,
          o.errors.unauthorized,
          'a valid X-Internal-API-Key is required',
        );
      }
    },

    /** The body as `schema` reads it; undefined once a 422 naming every problem has been sent. */
    parse<T>(schema: BodySchema<T>, body: unknown, reply: RetrieverReply): T | undefined {
      const r = schema.safeParse(body ?? {});
      if (r.success) return r.data;
      sendRetrieverProblem(reply, 422, o.errors.badRequest, 'the body is not valid', {
        errors: toProblems(r.error as Parameters<typeof toProblems>[0]),
      });
      return undefined;
    },

    /**
     * For the error handler: an error of the request (a status below 500, e.g. a body that is not
     * JSON) answered as a bad request; undefined for any other, which the retriever answers itself.
     */
    clientError(err: unknown, reply: RetrieverReply): RetrieverReply | undefined {
      const status = (err as { statusCode?: number }).statusCode;
      if (status && status < 500)
        return sendRetrieverProblem(reply, status, o.errors.badRequest, (err as Error).message);
      return undefined;
    },

    /**
     * Registers the retriever protocol on the /internal scope: the key check, the bodies read by
     * their schemas (422 naming every problem), a failed operation counted by `failed(op)`, a
     * TrawlError answered as its problem (a TransientError 503 with its Retry-After, a server-side
     * one logged), a client error as a bad request, anything else 503 `unavailable` and logged.
     */
    internal(
      scope: InternalScope,
      r: { logger: Logger; unavailable: string; failed(op: string): void; routes: InternalRoutes },
    ): void {
      scope.addHook('onRequest', self.checkKey);
      scope.setErrorHandler((err, _request, reply) => {
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
        if (err instanceof TrawlError) {
          if (err.status >= 500)
            r.logger.warn({ code: err.code, err: err.message }, 'retriever request failed');
          return sendRetrieverProblem(reply, err.status, err.code, err.message);
        }
        const answered = self.clientError(err, reply);
        if (answered) return answered;
        r.logger.error({ err: err.message }, 'unexpected error');
        return sendRetrieverProblem(reply, 503, r.unavailable, 'the request failed; retry later');
      });
      const route = <T>(op: string, schema: BodySchema<T>, handle: (body: T) => Promise<unknown>) =>
        scope.post(`/internal/${op}`, async (request, reply) => {
          const body = self.parse(schema, request.body, reply);
          if (!body) return reply;
          try {
            return await handle(body);
          } catch (err) {
            r.failed(op);
            throw err;
          }
        });
      route('fetch', FetchRequest, (b) => r.routes.fetch(b));
      route('ack', AckRequest, (b) => r.routes.ack(b));
      route('verdict', VerdictRequest, (b) => r.routes.verdict(b));
    },
  };
  return self;
}

/** A retriever's HTTP app. */
export type RetrieverHttp = ReturnType<typeof retrieverHttp>;
