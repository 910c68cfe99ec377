import { parseWith } from '@trawl/contracts';
import type { FastifyPluginAsync } from 'fastify';
import { z } from 'zod';
import type { GatewayContext } from '../context.ts';
import { databaseDown, ValidationError } from '../errors.ts';

const AuditQuery = z.object({
  limit: z.coerce.number().int().min(1).max(200).default(50),
  cursor: z.string().min(1).max(512).optional(),
  action: z.string().min(1).max(128).optional(),
  actor: z.string().min(1).max(256).optional(),
});

export function auditRoutes(ctx: GatewayContext): FastifyPluginAsync {
  return async (app) => {
    const admin = { config: { access: { role: 'admin' } } } as const;

    /**
     * Walks the hash chain from its anchor to its head: `ok` false names the first row where it
     * breaks (edited, removed, or inserted around the chain). The head's hash may be recorded
     * elsewhere (a ticket, another system's log) to detect a rewrite of the whole chain later.
     */
    app.get('/audit/verify', admin, async () => {
      try {
        return await ctx.store.audit.verify();
      } catch (err) {
        throw databaseDown(err);
      }
    });

    app.get('/audit', admin, async (request) => {
      const q = parseWith(AuditQuery, request.query ?? {});
      if (!q.ok)
        throw new ValidationError(q.problems.map((p) => ({ ...p, path: `/query${p.path}` })));
      const { limit, cursor, action, actor } = q.value;
      try {
        return await ctx.store.audit.list({
          limit,
          ...(cursor ? { cursor } : {}),
          ...(action ? { action } : {}),
          ...(actor ? { actor } : {}),
        });
      } catch (err) {
        if (cursor)
          throw new ValidationError([{ path: '/query/cursor', message: 'invalid cursor' }]);
        throw err;
      }
    });
  };
}
