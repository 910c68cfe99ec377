import type { ConfigVersionRepository } from './repositories.ts';
import { iso } from './rows.ts';
import type { SqlClient } from './types.ts';

export function createConfigVersionRepository(sql: SqlClient): ConfigVersionRepository {
  return {
    async record(v) {
      // Idempotent on version; recording an older version again makes it the latest (a revert).
      await sql.query(
        `INSERT INTO config_versions (version, service_yaml, workflows_yaml, actor) VALUES ($1, $2, $3, $4)
         ON CONFLICT (version) DO UPDATE SET recorded_at = now(),
           seq = nextval(pg_get_serial_sequence('config_versions', 'seq'))`,
        [v.version, v.service_yaml, v.workflows_yaml, v.actor],
      );
    },
    async latest() {
      const r = await sql.query<{ version: string; created_at: unknown }>(
        'SELECT version, created_at FROM config_versions ORDER BY seq DESC LIMIT 1',
      );
      const row = r.rows[0];
      return row ? { version: row.version, created_at: iso(row.created_at) } : null;
    },
  };
}
