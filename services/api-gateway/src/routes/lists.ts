import { randomUUID } from 'node:crypto';
import {
  BadInputError,
  CreateListEntry,
  type ListEntry,
  ListQuery,
  MAX_LIST_ENTRIES,
  parseWith,
} from '@trawl/contracts';
import { publishListsChanged } from '@trawl/platform';
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { actorOf } from '../auth/access.ts';
import type { GatewayContext } from '../context.ts';
import {
  BadQueryError,
  databaseDown,
  GATEWAY_ERRORS,
  NotFoundError,
  ValidationError,
} from '../errors.ts';

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * /api/v1/lists (issue 32): the organisation's allow and block lists. Admins add and remove
 * entries (each change audited); analysts and admins read them. After a change every replica of
 * the analyzers is told (`lists.changed` on the control exchange) to read the lists again; when the
 * broker cannot take the event the change is stored all the same and the analyzers read it within
 * their `max_age_seconds`.
 */
export function listRoutes(ctx: GatewayContext): FastifyPluginAsync {
  const admin = { config: { access: { role: 'admin' } } } as const;
  const reader = { config: { access: { role: 'analyst' } } } as const;

  async function changed(request: FastifyRequest): Promise<void> {
    try {
      await publishListsChanged(ctx.broker, ctx.topology, ctx.now());
    } catch (err) {
      request.log.warn({ err }, 'lists.changed not published: analyzers see it within max_age');
    }
  }

  function audit(request: FastifyRequest, action: string, e: ListEntry) {
    return ctx.audit.record(request, {
      actor: actorOf(request),
      action,
      target: e.id,
      outcome: 'success',
      details: {
        list: e.list,
        kind: e.kind,
        value: e.value,
        note: e.note,
        expires_at: e.expires_at,
      },
    });
  }

  function idOf(request: FastifyRequest): string {
    const { id } = request.params as { id: string };
    if (!UUID_RE.test(id)) throw new NotFoundError(`list entry ${id}`);
    return id.toLowerCase();
  }

  return async (app) => {
    app.get('/lists', reader, async (request) => {
      const q = ListQuery.safeParse(request.query ?? {});
      if (!q.success) {
        throw new BadQueryError(
          q.error.issues.map((i) => ({
            path: `/query/${i.path.map(String).join('/') || ('keys' in i ? String(i.keys) : '')}`,
            message: i.message,
          })),
        );
      }
      try {
        return { items: await ctx.store.lists.list(q.data, ctx.now()) };
      } catch (err) {
        throw databaseDown(err);
      }
    });

    app.post('/lists', admin, async (request, reply) => {
      const parsed = parseWith(CreateListEntry, request.body ?? {});
      if (!parsed.ok) throw new ValidationError(parsed.problems, 'the list entry is not valid');
      const e = parsed.value;
      if (e.expires_at && Date.parse(e.expires_at) <= ctx.now().getTime()) {
        throw new ValidationError([{ path: '/expires_at', message: 'must be in the future' }]);
      }
      if ((await ctx.store.lists.list({ list: e.list })).length >= MAX_LIST_ENTRIES) {
        throw new BadInputError(
          GATEWAY_ERRORS.listFull,
          `the ${e.list} list holds ${MAX_LIST_ENTRIES} entries: remove some first`,
          { status: 409 },
        );
      }
      const created = await ctx.store.lists.add({
        ...e,
        id: randomUUID(),
        created_by: actorOf(request),
      });
      await audit(request, 'list.add', created);
      await changed(request);
      reply.code(201);
      return created;
    });

    app.get('/lists/:id', reader, async (request) => {
      const id = idOf(request);
      const e = await ctx.store.lists.get(id);
      if (!e) throw new NotFoundError(`list entry ${id}`);
      return e;
    });

    app.delete('/lists/:id', admin, async (request, reply) => {
      const id = idOf(request);
      const removed = await ctx.store.lists.remove(id);
      if (!removed) throw new NotFoundError(`list entry ${id}`);
      await audit(request, 'list.remove', removed);
      await changed(request);
      reply.code(204);
    });
  };
}
