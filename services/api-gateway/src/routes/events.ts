import type { FastifyPluginAsync } from 'fastify';
import { createJobEventHub, type JobEvent } from '../console/job-events.ts';
import type { GatewayContext } from '../context.ts';
import { DependencyDownError, GATEWAY_ERRORS } from '../errors.ts';

const HEARTBEAT_MS = 15_000;
/**
 * How often an open stream checks that its user still has the access its token was issued with
 * (issue 28): a change made on another replica ends the stream within this time even when no
 * event arrives; a change made on this replica ends it at once (AccessVersions.onChange).
 */
const ACCESS_RECHECK_MS = 5_000;

/**
 * GET /api/v1/events (any role): Server-Sent Events `job.created`, `job.completed`, `job.failed`.
 * Authenticated like every route, with the bearer header: the console reads the stream with
 * fetch() (EventSource cannot send headers, and a token in a URL ends up in logs). A stream lasts
 * as long as the access token that opened it would; the client then opens another with a fresh
 * token. It also ends as soon as its user's access changes (disabled, deleted, demoted, password
 * changed), on whichever replica the change was made. The stream ends when the gateway stops.
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
      // Access ends everywhere at once (issue 28): every event is delivered only after the user's
      // access version is checked again (the same check as every request: the shared cache, then
      // the database), in order; a user disabled, deleted or demoted since the token was issued
      // gets no more events and the stream ends. Services have no access version: their
      // credential is checked per request and stays valid while the platform key does.
      const user = request.principal?.kind === 'service' ? null : request.principal;
      let ended = false;
      let chain: Promise<unknown> = Promise.resolve();
      const stillAllowed = async (): Promise<boolean> => {
        if (!user || ended) return !ended;
        try {
          return (await ctx.versions.current(user.username)) === user.version;
        } catch {
          return true; // the database is down: no news of a change; the next check decides
        }
      };
      const recheck = () => {
        chain = chain.then(async () => {
          if (!(await stillAllowed())) end();
        });
      };
      const send = (e: JobEvent) => {
        const text = `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`;
        chain = chain.then(async () => {
          if (await stillAllowed()) {
            if (!ended) res.write(text);
          } else {
            end();
          }
        });
      };
      const unsubscribe = hub.subscribe(send);
      const stopWatching = user ? ctx.versions.onChange(user.username, recheck) : () => {};
      const beat = setInterval(() => res.write(': keep-alive\n\n'), HEARTBEAT_MS);
      const watch = user ? setInterval(recheck, ACCESS_RECHECK_MS) : undefined;
      const expire = setTimeout(() => end(), lifetimeMs);
      function end() {
        if (ended) return;
        ended = true;
        unsubscribe();
        stopWatching();
        clearInterval(beat);
        clearInterval(watch);
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
