import { describe, expect, it } from 'vitest';
import { createMigratedPglite, type SqlClient } from '../../src/index.ts';
import { analyzeDue, startPgliteMaintenance } from '../../src/store/pglite-maintenance.ts';

const tuples = async (sql: SqlClient, table: string) =>
  Number(
    (
      await sql.query<{ n: number }>('SELECT reltuples AS n FROM pg_class WHERE relname = $1', [
        table,
      ])
    ).rows[0]?.n,
  );

/** 600 lure keys, then the statistics flushed (at a transaction's end, a second after the last). */
async function changeRows(sql: SqlClient): Promise<void> {
  await sql.query(
    `INSERT INTO lure_keys (key, job_id)
     SELECT 'dom:d' || (g % 7) || '.example', gen_random_uuid() FROM generate_series(1, 600) g`,
  );
  await new Promise((r) => setTimeout(r, 1100));
  await sql.query('SELECT 1');
}

describe('PGlite maintenance (no autovacuum in PGlite)', () => {
  it('analyses the tables whose rows changed past autovacuum threshold, and only those', async () => {
    const sql = await createMigratedPglite();
    try {
      expect(await tuples(sql, 'lure_keys')).toBe(-1); // never analysed: the planner guesses
      await changeRows(sql);
      const first = await analyzeDue(sql);
      expect(first).toContain('lure_keys');
      expect(first).not.toContain('campaign_members'); // no row changed
      expect(await tuples(sql, 'lure_keys')).toBe(600);
      await sql.query('SELECT 1');
      expect(await analyzeDue(sql)).not.toContain('lure_keys');
    } finally {
      await sql.close();
    }
  });

  it('runs by itself every interval and stops', async () => {
    const sql = await createMigratedPglite();
    const m = startPgliteMaintenance(sql, { intervalMs: 50 });
    try {
      await changeRows(sql);
      const until = Date.now() + 5000;
      while ((await tuples(sql, 'lure_keys')) !== 600 && Date.now() < until) {
        await new Promise((r) => setTimeout(r, 50));
      }
      expect(await tuples(sql, 'lure_keys')).toBe(600);
    } finally {
      await m.stop();
      await sql.close();
    }
  });
});
