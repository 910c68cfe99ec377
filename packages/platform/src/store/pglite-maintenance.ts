import type { PlatformLogger } from '../logger.ts';
import type { SqlClient } from './types.ts';

/**
 * PostgreSQL's autovacuum defaults for ANALYZE (`autovacuum_analyze_threshold`,
 * `autovacuum_analyze_scale_factor`): a table is analysed again once this many of its rows changed.
 */
const ANALYZE_BASE_ROWS = 50;
const ANALYZE_SCALE = 0.1;

/**
 * Analyses the tables of the current schema whose rows changed since their last ANALYZE past
 * autovacuum's threshold (50 + 10% of the table); answers their names. The counts are the
 * statistics PostgreSQL keeps (`pg_stat_user_tables`), which it flushes at the end of a
 * transaction at most once a second.
 */
export async function analyzeDue(sql: SqlClient): Promise<string[]> {
  const r = await sql.query<{ relname: string; stmt: string }>(
    `SELECT relname, format('ANALYZE %I.%I', schemaname, relname) AS stmt
       FROM pg_stat_user_tables
      WHERE schemaname = current_schema()
        AND n_mod_since_analyze > ${ANALYZE_BASE_ROWS} + ${ANALYZE_SCALE} * n_live_tup
      ORDER BY relname`,
  );
  for (const t of r.rows) await sql.query(t.stmt);
  return r.rows.map((t) => t.relname);
}

/** The running ANALYZE checks of an embedded store (startPgliteMaintenance). */
export interface PgliteMaintenance {
  /** Stops the checks; waits for one that is running. */
  stop(): Promise<void>;
}

/**
 * Autovacuum's ANALYZE for PGlite (embedded mode), which has no autovacuum: without it the planner
 * never learns how large the tables grew, and plans made for empty tables stay (ADR 026: a
 * campaign lookup read every campaign member per lure key, 43 ms a batch at 2,000 jobs). Every
 * `intervalMs` the tables past the threshold are analysed (ANALYZE samples at most 30,000 rows a
 * table: its cost is bounded, whatever the table's size). VACUUM is not run: it is not bounded
 * (each index is read whole) and PGlite runs on the thread that answers; the tables it would help
 * most are insert-only.
 */
export function startPgliteMaintenance(
  sql: SqlClient,
  o: { intervalMs?: number; logger?: PlatformLogger } = {},
): PgliteMaintenance {
  let running: Promise<void> | undefined;
  const check = () => {
    if (running) return;
    running = analyzeDue(sql)
      .then((tables) => {
        if (tables.length > 0) o.logger?.debug({ tables }, 'tables analysed');
      })
      .catch((err: unknown) => {
        o.logger?.warn({ err: String(err) }, 'tables could not be analysed');
      })
      .finally(() => {
        running = undefined;
      });
  };
  const timer = setInterval(check, o.intervalMs ?? 10_000);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
