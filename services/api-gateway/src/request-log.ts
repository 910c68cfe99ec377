import {
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  LogController,
} from 'fastify';

declare module 'fastify' {
  interface FastifyRequest {
    /** Fields a route adds to its request-completed line (e.g. the job a submission queued). */
    logFields: Record<string, unknown> | null;
  }
}

/** Lets routes set `request.logFields` (null until they do). */
export function registerRequestLogFields(app: FastifyInstance): void {
  app.decorateRequest('logFields', null);
}

/**
 * One log line per request instead of Fastify's two ("incoming request", "request completed"), and
 * without the req/res serialisers on the hot path: method, url, status and time as plain fields.
 * Errors, not-found routes and the rest keep Fastify's lines. The request id rides on every line
 * through the child logger (`request_id`). A route may add fields to that line
 * (`request.logFields`): a submission's line carries its job_id, so it needs no second line.
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
    const line = {
      method: request.method,
      url: request.url,
      status: reply.statusCode,
      response_ms: Math.round(reply.elapsedTime * 100) / 100,
    };
    reply.log.info(
      request.logFields === null ? line : Object.assign(line, request.logFields),
      'request completed',
    );
  }
}
