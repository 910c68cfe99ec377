import type { FastifyPluginAsync } from 'fastify';
import { allow } from '../auth/route-access.ts';
import type { GatewayContext } from '../context.ts';
import { databaseDown } from '../errors.ts';

/** Jobs looked at by the overview at most (the newest within the window). */
const MAX_JOBS = 10_000;
const WINDOW_HOURS = 24;

interface HourRow {
  hour: Date | string;
  status: string;
  phish: string | null;
  n: number | string;
}

/**
 * GET /api/v1/system/stats (any role): what the console's overview shows. Jobs of the last 24 hours
 * by hour and outcome (the newest 10 000 at most), the analyzers that failed or timed out in them,
 * and the depth of the analysis queue and its dead-letter queue (null when the broker cannot say).
 */
export function systemStatsRoutes(ctx: GatewayContext): FastifyPluginAsync {
  return async (app) => {
    app.get('/system/stats', allow({ role: 'viewer', service: ['config:read'] }), async () => {
      const since = new Date(ctx.now().getTime() - WINDOW_HOURS * 3600_000);
      let hours: HourRow[];
      let failing: { analyzer: string; failures: number | string }[];
      try {
        const recent = `SELECT status, result, trace, created_at FROM jobs
             WHERE created_at >= $1 ORDER BY created_at DESC LIMIT ${MAX_JOBS}`;
        hours = (
          await ctx.store.sql.query<HourRow>(
            `SELECT date_trunc('hour', created_at) AS hour, status,
                      result->>'is_phishing' AS phish, count(*) AS n
                 FROM (${recent}) j GROUP BY 1, 2, 3 ORDER BY 1`,
            [since.toISOString()],
          )
        ).rows;
        failing = (
          await ctx.store.sql.query<{ analyzer: string; failures: number | string }>(
            `SELECT a->>'id' AS analyzer, count(*) AS failures
                 FROM (${recent}) j,
                      jsonb_array_elements(COALESCE(j.trace->'stages', '[]'::jsonb)) s,
                      jsonb_array_elements(COALESCE(s->'analyzers', '[]'::jsonb)) a
                WHERE a->>'status' IN ('failed', 'timeout')
                GROUP BY 1 ORDER BY 2 DESC LIMIT 20`,
            [since.toISOString()],
          )
        ).rows;
      } catch (err) {
        throw databaseDown(err);
      }
      const depth = (q: string) => ctx.broker.queueDepth(q).catch(() => null);
      const [queued, dead] = await Promise.all([
        depth(ctx.topology.queues.analysisRequests),
        depth(ctx.topology.queues.analysisDead),
      ]);
      const byHour = new Map<
        string,
        { hour: string; phishing: number; legitimate: number; failed: number; pending: number }
      >();
      for (const r of hours) {
        const hour = new Date(r.hour).toISOString();
        let b = byHour.get(hour);
        if (!b) {
          b = { hour, phishing: 0, legitimate: 0, failed: 0, pending: 0 };
          byHour.set(hour, b);
        }
        const n = Number(r.n);
        if (r.status === 'failed') b.failed += n;
        else if (r.status !== 'completed') b.pending += n;
        else if (r.phish === 'true') b.phishing += n;
        else b.legitimate += n;
      }
      return {
        window_hours: WINDOW_HOURS,
        since: since.toISOString(),
        jobs_by_hour: [...byHour.values()],
        failing_analyzers: failing.map((f) => ({
          analyzer: f.analyzer,
          failures: Number(f.failures),
        })),
        queue: { depth: queued, dead_letters: dead },
      };
    });
  };
}
