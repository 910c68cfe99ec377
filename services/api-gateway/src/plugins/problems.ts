import { type ProblemDetails, TransientError, TrawlError } from '@trawl/contracts';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { GATEWAY_ERRORS, RateLimitedError } from '../errors.ts';

const TITLES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  406: 'Not Acceptable',
  409: 'Conflict',
  413: 'Content Too Large',
  415: 'Unsupported Media Type',
  422: 'Unprocessable Content',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

function problemType(code: string): string {
  return `urn:trawl:error:${code}`;
}

export function sendProblem(
  request: FastifyRequest,
  reply: FastifyReply,
  status: number,
  code: string,
  detail: string,
  errors?: { path: string; message: string }[],
): FastifyReply {
  const body: ProblemDetails = {
    type: problemType(code),
    title: TITLES[status] ?? 'Error',
    status,
    detail,
    instance: request.url.split('?')[0] ?? request.url,
    code,
    request_id: String(request.id),
    ...(errors ? { errors } : {}),
  };
  if (status === 401) reply.header('WWW-Authenticate', wwwAuthenticate(code));
  return reply.code(status).type('application/problem+json').send(body);
}

function wwwAuthenticate(code: string): string {
  if (code === GATEWAY_ERRORS.tokenExpired) {
    return 'Bearer realm="trawl", error="invalid_token", error_description="the access token expired"';
  }
  if (code === GATEWAY_ERRORS.invalidToken) return 'Bearer realm="trawl", error="invalid_token"';
  return 'Bearer realm="trawl"';
}

/** Maps Fastify's own errors (body parsing, limits, media types) to our codes. */
function fastifyErrorToProblem(
  err: FastifyError,
): { status: number; code: string; detail: string } | null {
  switch (err.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return {
        status: 413,
        code: GATEWAY_ERRORS.payloadTooLarge,
        detail: 'the request body is larger than allowed',
      };
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return { status: 415, code: GATEWAY_ERRORS.unsupportedMediaType, detail: err.message };
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return { status: 400, code: GATEWAY_ERRORS.badRequest, detail: 'the body is not valid JSON' };
    default:
      break;
  }
  if (err.validation) return { status: 400, code: GATEWAY_ERRORS.badRequest, detail: err.message };
  const sc = err.statusCode;
  if (typeof sc === 'number' && sc >= 400 && sc < 500) {
    return {
      status: sc,
      code: sc === 413 ? GATEWAY_ERRORS.payloadTooLarge : GATEWAY_ERRORS.badRequest,
      detail: err.message,
    };
  }
  return null;
}

export function registerProblemHandlers(app: FastifyInstance): void {
  app.setErrorHandler((err: FastifyError | TrawlError | Error, request, reply) => {
    if (err instanceof TrawlError) {
      if (err instanceof TransientError) reply.header('Retry-After', String(err.retryAfterSeconds));
      if (err instanceof RateLimitedError)
        reply.header('Retry-After', String(err.retryAfterSeconds));
      if (err.status >= 500)
        request.log.warn({ err: { code: err.code, message: err.message } }, 'request failed');
      const errors = err.problems?.map((p) => ({ path: p.path, message: p.message }));
      const detail =
        err.status >= 500 && !(err instanceof TransientError) ? 'internal error' : err.message;
      return sendProblem(request, reply, err.status, err.code, detail, errors);
    }
    const mapped = fastifyErrorToProblem(err as FastifyError);
    if (mapped) return sendProblem(request, reply, mapped.status, mapped.code, mapped.detail);
    request.log.error({ err }, 'unhandled error');
    return sendProblem(
      request,
      reply,
      500,
      GATEWAY_ERRORS.internal,
      `an internal error occurred; quote request id ${request.id} when reporting it`,
    );
  });
  app.setNotFoundHandler((request, reply) => sendNoRoute(request, reply));
}

/** 404 for a request no route matches (also sent from onRequest, before any body is read). */
export function sendNoRoute(request: FastifyRequest, reply: FastifyReply): FastifyReply {
  return sendProblem(
    request,
    reply,
    404,
    GATEWAY_ERRORS.notFound,
    `no route ${request.method} ${request.url.split('?')[0]}`,
  );
}
