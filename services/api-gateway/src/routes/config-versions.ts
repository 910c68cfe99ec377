import type { FastifyPluginAsync } from 'fastify';
import type { GatewayContext } from '../context.ts';
import { databaseDown } from '../errors.ts';

/**
 * GET /api/v1/config/versions (admin): the configuration versions this installation ran, newest
 * first (at most 50): version, who made it current (null: at start), when it was first seen and when
 * it became current last. The files' text stays in the database: it may hold plugin secrets.
 */
export function configVersionRoutes(ctx: GatewayContext): FastifyPluginAsync {
  return async (app) => {
    app.get('/config/versions', { config: { access: { role: 'admin' } } }, async () => {
      try {
        const r = await ctx.store.sql.query<{
          version: string;
          actor: string | null;
          created_at: Date | string;
          recorded_at: Date | string;
        }>(
          `SELECT version, actor, created_at, recorded_at FROM config_versions
            ORDER BY seq DESC LIMIT 50`,
        );
        return {
          current: ctx.configState.current().files.version,
          items: r.rows.map((v) => ({
            version: v.version,
            actor: v.actor,
            created_at: new Date(v.created_at).toISOString(),
            recorded_at: new Date(v.recorded_at).toISOString(),
          })),
        };
      } catch (err) {
        throw databaseDown(err);
      }
    });
  };
}
