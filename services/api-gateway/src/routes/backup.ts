import type { FastifyPluginAsync } from 'fastify';
import { actorOf } from '../auth/access.ts';
import type { GatewayContext } from '../context.ts';
import type { BackupResult } from '../deps.ts';

/**
 * POST /api/v1/system/backup (admin): an online backup of the embedded mode's database, taken
 * while Trawl keeps running, written under TRAWL_DATA_DIR/backups. Registered only when the process
 * can make one (PGlite); a PostgreSQL deployment uses pg_dump (docs/operations.md).
 */
export function backupRoutes(
  ctx: GatewayContext,
  backup: () => Promise<BackupResult>,
): FastifyPluginAsync {
  return async (app) => {
    app.post('/system/backup', { config: { access: { role: 'admin' } } }, async (request) => {
      try {
        const r = await backup();
        await ctx.audit.record(request, {
          actor: actorOf(request),
          action: 'system.backup',
          target: r.file,
          outcome: 'success',
          details: { bytes: r.bytes },
        });
        return r;
      } catch (err) {
        await ctx.audit.record(request, {
          actor: actorOf(request),
          action: 'system.backup',
          target: 'database',
          outcome: 'failure',
          details: { reason: (err as Error).message },
        });
        throw err;
      }
    });
  };
}
