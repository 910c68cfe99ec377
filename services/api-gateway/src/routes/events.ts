import type { FastifyPluginAsync } from 'fastify';
import { createJobEventHub, type JobEvent } from '../console/job-events.ts';
import type { GatewayContext } from '../context.ts';
import { DependencyDownError, GATEWAY_ERRORS } from '../errors.ts';

const HEARTBEAT_MS = 15_000;

/**
 * GET /api/v1/events (any role): Server-Sent Events `job.created`, `job.completed`, `job.failed`.
 * Authenticated like every route, with the bearer header: the console reads the stream with
 * fetch() (EventSource cannot send headers, and a token in a URL ends up in logs). A stream lasts
 * as long as the access token that opened it would; the client then opens another with a fresh
 * token. The stream ends when the gateway stops.
 */
export function eventRoutes(ctx: GatewayContext): FastifyPluginAsync {
  return async (app) => {
    const hub = createJobEventHub({
      broker: ctx.broker,
      topology: ctx.topology,
      logger: app.log,
    });
    const open = new Set<() => void>();
    app.addHook('preClose', async () => {
      for (const end of [...open]) end();
    });
    app.addHook('onClose', async () => hub.close());
    const lifetimeMs = ctx.config.accessTokenExpireMinutes * 60_000;

    app.get('/events', { config: { access: { role: 'viewer' } } }, async (request, reply) => {
      try {
        await hub.ready();
      } catch (err) {
        throw new DependencyDownError(
          GATEWAY_ERRORS.brokerUnavailable,
          'the message broker is unavailable; retry later',
          err,
        );
      }
      reply.hijack();
      const res = reply.raw;
      res.writeHead(200, {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-store',
        'x-accel-buffering': 'no',
        'x-content-type-options': 'nosniff',
        'x-request-id': request.id,
        connection: 'keep-alive',
      });
      res.write('retry: 3000\n: connected\n\n');
      const send = (e: JobEvent) => {
        res.write(`event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`);
      };
      const unsubscribe = hub.subscribe(send);
      const beat = setInterval(() => res.write(': keep-alive\n\n'), HEARTBEAT_MS);
      const expire = setTimeout(() => end(), lifetimeMs);
      let ended = false;
      function end() {
        if (ended) return;
        ended = true;
        unsubscribe();
        clearInterval(beat);
        clearTimeout(expire);
        open.delete(end);
        if (!res.writableEnded) res.end();
      }
      open.add(end);
      request.raw.on('close', end);
      res.on('error', end);
    });
  };
}
