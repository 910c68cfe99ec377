import { randomUUID } from 'node:crypto';
import { CreateWebhook, parseWith, UpdateWebhook } from '@trawl/contracts';
import { generateWebhookSecret } from '@trawl/platform';
import type { FastifyPluginAsync, FastifyRequest, RouteShorthandOptions } from 'fastify';
import { z } from 'zod';
import { actorOf } from '../auth/access.ts';
import type { GatewayContext } from '../context.ts';
import { BadQueryError, NotFoundError, ValidationError } from '../errors.ts';

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const DeliveriesQuery = z.strictObject({
  limit: z.coerce.number().int().min(1).max(200).default(50),
  cursor: z.string().min(1).max(128).optional(),
});

/**
 * /api/v1/webhooks (admin, issue 17): endpoints that receive signed events
 * (docs/feedback-and-webhooks.md). The secret is generated here and shown once, in the answer to
 * the POST that created it; it never appears in a list, a log line or the audit log.
 */
export function webhookRoutes(ctx: GatewayContext): FastifyPluginAsync {
  const admin: RouteShorthandOptions = { config: { access: { role: 'admin' } } };

  function audit(request: FastifyRequest, action: string, target: string, details: object) {
    return ctx.audit.record(request, {
      actor: actorOf(request),
      action,
      target,
      outcome: 'success',
      details: details as Record<string, unknown>,
    });
  }

  function idOf(request: FastifyRequest): string {
    const { id } = request.params as { id: string };
    if (!UUID_RE.test(id)) throw new NotFoundError(`webhook ${id}`);
    return id.toLowerCase();
  }

  return async (app) => {
    app.get('/webhooks', admin, async () => ({ items: await ctx.store.webhooks.list() }));

    app.post('/webhooks', admin, async (request, reply) => {
      const parsed = parseWith(CreateWebhook, request.body ?? {});
      if (!parsed.ok) throw new ValidationError(parsed.problems, 'the webhook is not valid');
      const w = parsed.value;
      const secret = generateWebhookSecret();
      const created = await ctx.store.webhooks.create({
        id: randomUUID(),
        url: w.url,
        events: w.events,
        secret,
        description: w.description ?? null,
        enabled: w.enabled,
        created_by: actorOf(request),
      });
      await audit(request, 'webhook.create', created.id, { url: w.url, events: w.events });
      reply.code(201);
      return { ...created, secret };
    });

    app.get('/webhooks/:id', admin, async (request) => {
      const id = idOf(request);
      const w = await ctx.store.webhooks.get(id);
      if (!w) throw new NotFoundError(`webhook ${id}`);
      return w;
    });

    app.patch('/webhooks/:id', admin, async (request) => {
      const id = idOf(request);
      const parsed = parseWith(UpdateWebhook, request.body ?? {});
      if (!parsed.ok) throw new ValidationError(parsed.problems, 'the change is not valid');
      const before = await ctx.store.webhooks.get(id);
      if (!before) throw new NotFoundError(`webhook ${id}`);
      const p = parsed.value;
      const w = await ctx.store.webhooks.update(id, {
        ...(p.url !== undefined ? { url: p.url } : {}),
        ...(p.events !== undefined ? { events: p.events } : {}),
        ...(p.description !== undefined ? { description: p.description } : {}),
        ...(p.enabled !== undefined ? { enabled: p.enabled } : {}),
      });
      if (!w) throw new NotFoundError(`webhook ${id}`);
      await audit(request, 'webhook.update', id, {
        old: { url: before.url, events: before.events, enabled: before.enabled },
        new: { url: w.url, events: w.events, enabled: w.enabled },
      });
      return w;
    });

    app.delete('/webhooks/:id', admin, async (request, reply) => {
      const id = idOf(request);
      const before = await ctx.store.webhooks.get(id);
      if (!before || !(await ctx.store.webhooks.remove(id))) {
        throw new NotFoundError(`webhook ${id}`);
      }
      await audit(request, 'webhook.delete', id, { url: before.url });
      reply.code(204);
    });

    app.get('/webhooks/:id/deliveries', admin, async (request) => {
      const id = idOf(request);
      const q = DeliveriesQuery.safeParse(request.query ?? {});
      if (!q.success) {
        throw new BadQueryError(
          q.error.issues.map((i) => ({
            path: `/query/${i.path.map(String).join('/') || ('keys' in i ? String(i.keys) : '')}`,
            message: i.message,
          })),
        );
      }
      if (!(await ctx.store.webhooks.get(id))) throw new NotFoundError(`webhook ${id}`);
      try {
        return await ctx.store.webhooks.attempts(id, {
          limit: q.data.limit,
          ...(q.data.cursor ? { cursor: q.data.cursor } : {}),
        });
      } catch (err) {
        if ((err as { status?: unknown }).status === 400)
          throw new BadQueryError([{ path: '/query/cursor', message: 'invalid cursor' }]);
        throw err;
      }
    });
  };
}
