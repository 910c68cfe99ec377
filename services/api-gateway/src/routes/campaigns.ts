import { CampaignListQuery, parseWith } from '@trawl/contracts';
import type { FastifyPluginAsync } from 'fastify';
import type { GatewayContext } from '../context.ts';
import { BadQueryError, databaseDown, NotFoundError } from '../errors.ts';

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Campaigns (issue 16): GET /campaigns (newest activity first, cursor-paginated) and
 * GET /campaigns/{id} (the campaign and a page of its members with their recipients and verdicts).
 */
export function campaignRoutes(ctx: GatewayContext): FastifyPluginAsync {
  const read = { config: { access: { role: 'viewer', service: ['jobs:read'] } } } as const;

  function query(raw: unknown) {
    const q = parseWith(CampaignListQuery, raw ?? {});
    if (!q.ok) {
      throw new BadQueryError(
        q.problems.map((p) => ({
          ...p,
          path: `/query${p.path}`,
          message: p.message,
        })),
      );
    }
    return q.value;
  }

  const isCursorError = (err: unknown) => (err as { status?: unknown }).status === 400;

  return async (app) => {
    app.get('/campaigns', read, async (request) => {
      const { limit, cursor } = query(request.query);
      try {
        return await ctx.store.campaigns.list({ limit, ...(cursor ? { cursor } : {}) });
      } catch (err) {
        if (cursor && isCursorError(err))
          throw new BadQueryError([{ path: '/query/cursor', message: 'invalid cursor' }]);
        throw databaseDown(err);
      }
    });

    app.get('/campaigns/:id', read, async (request) => {
      const { id } = request.params as { id: string };
      if (!UUID_RE.test(id)) throw new NotFoundError(`campaign ${id}`);
      const { limit, cursor } = query(request.query);
      let c: Awaited<ReturnType<typeof ctx.store.campaigns.get>>;
      try {
        c = await ctx.store.campaigns.get(id.toLowerCase(), {
          limit,
          ...(cursor ? { cursor } : {}),
        });
      } catch (err) {
        if (cursor && isCursorError(err))
          throw new BadQueryError([{ path: '/query/cursor', message: 'invalid cursor' }]);
        throw databaseDown(err);
      }
      if (!c) throw new NotFoundError(`campaign ${id}`);
      return c;
    });
  };
}
