import { BadInputError, type Email, safeParseEmail, TrawlError } from '@trawl/contracts';
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { GatewayContext } from '../context.ts';
import { databaseDown, GATEWAY_ERRORS, NotFoundError } from '../errors.ts';
import { rebuildRfc822 } from '../message-view.ts';

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** 410: the retention purge removed the body; the verdict and the evidence stay readable. */
class MessagePurgedError extends BadInputError {
  constructor(jobId: string, at: string) {
    super(
      GATEWAY_ERRORS.messagePurged,
      `the message of job ${jobId} was removed by the retention purge at ${at}; its verdict and evidence stay at /api/v1/analyze/${jobId}`,
      { status: 410 },
    );
  }
}

/**
 * The message view (issue 16): GET /analyze/{id}/message (any role: headers, text, inert HTML,
 * attachments' names and hashes) and GET /analyze/{id}/message/raw (analysts and admins: the message
 * as message/rfc822, rebuilt from what is stored; a viewer gets 403).
 */
export function messageRoutes(ctx: GatewayContext): FastifyPluginAsync {
  /** The job row's stored Email as read (JSON text), after the not-found and purged checks. */
  async function storedRow(request: FastifyRequest): Promise<{ id: string; stored: unknown }> {
    const { job_id: jobId } = request.params as { job_id: string };
    if (!UUID_RE.test(jobId)) throw new NotFoundError(`job ${jobId}`);
    const id = jobId.toLowerCase();
    let stored: Awaited<ReturnType<GatewayContext['store']['messages']['get']>>;
    try {
      stored = await ctx.store.messages.get(id);
    } catch (err) {
      throw databaseDown(err);
    }
    if (!stored) throw new NotFoundError(`job ${jobId}`);
    if (stored.body_purged_at !== null) throw new MessagePurgedError(id, stored.body_purged_at);
    return { id, stored: stored.email };
  }

  const unreadable = (id: string) =>
    new TrawlError(GATEWAY_ERRORS.internal, `the stored message of job ${id} is unreadable`, {
      status: 500,
    });

  async function storedEmail(request: FastifyRequest): Promise<{ id: string; email: Email }> {
    const { id, stored } = await storedRow(request);
    let value: unknown = stored;
    try {
      if (typeof value === 'string') value = JSON.parse(value);
    } catch {
      value = undefined;
    }
    const r = safeParseEmail(value);
    if (!r.success) throw unreadable(id);
    return { id, email: r.data };
  }

  return async (app) => {
    app.get(
      '/analyze/:job_id/message',
      { config: { access: { role: 'viewer', service: ['jobs:read'] } } },
      async (request, reply) => {
        const { id, stored } = await storedRow(request);
        // a large message is read, sanitized and serialized in a worker thread (issue 15)
        const json = await ctx.cpu.messageView(id, stored);
        if (json === null) throw unreadable(id);
        // the HTML is data for a sandboxed frame, never a page of this origin
        return reply
          .header('cache-control', 'private, no-store')
          .type('application/json; charset=utf-8')
          .send(json);
      },
    );

    app.get(
      '/analyze/:job_id/message/raw',
      { config: { access: { role: 'analyst' } } },
      async (request, reply) => {
        const { id, email } = await storedEmail(request);
        return reply
          .header('content-type', 'message/rfc822')
          .header('content-disposition', `attachment; filename="${id}.eml"`)
          .header('x-content-type-options', 'nosniff')
          .header('cache-control', 'private, no-store')
          .send(rebuildRfc822(id, email));
      },
    );
  };
}
