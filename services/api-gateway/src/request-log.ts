import { type FastifyReply, type FastifyRequest, LogController } from 'fastify';

/**
 * One log line per request instead of Fastify's two ("incoming request", "request completed"), and
 * without the req/res serialisers on the hot path: method, url, status and time as plain fields.
 * Errors, not-found routes and the rest keep Fastify's lines. The request id rides on every line
 * through the child logger (`request_id`).
 */
export class GatewayLogController extends LogController {
  constructor() {
    super({ requestIdLogLabel: 'request_id' });
  }

  override incomingRequest(): void {}

  override requestCompleted(
    error: Error | null | undefined,
    request: FastifyRequest,
    reply: FastifyReply,
    metadata?: Record<string, unknown>,
  ): void {
    if (this.isLogDisabled(request)) return;
    if (error) {
      super.requestCompleted(error, request, reply, metadata);
      return;
    }
    reply.log.info(
      {
        method: request.method,
        url: request.url,
        status: reply.statusCode,
        response_ms: Math.round(reply.elapsedTime * 100) / 100,
      },
      'request completed',
    );
  }
}
