import { STATUS_CODES } from 'node:http';
import type { ProblemDetails, ValidationProblem } from '@trawl/contracts';
import type { FastifyReply, FastifyRequest } from 'fastify';

/** Sends RFC 9457 problem details (`application/problem+json`). */
export function sendProblem(
  request: FastifyRequest,
  reply: FastifyReply,
  p: { status: number; code: string; detail: string; errors?: ValidationProblem[] },
): FastifyReply {
  const body: ProblemDetails = {
    type: 'about:blank',
    title: STATUS_CODES[p.status] ?? 'Error',
    status: p.status,
    detail: p.detail,
    instance: request.url.split('?')[0] ?? request.url,
    code: p.code,
    request_id: String(request.id),
    ...(p.errors ? { errors: p.errors } : {}),
  };
  return reply.code(p.status).type('application/problem+json').send(body);
}
