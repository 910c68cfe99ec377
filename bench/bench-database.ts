import { createMigratedPglite, createPgClient, migrate, type SqlClient } from '@trawl/platform';
import { testUrls } from '@trawl/platform/testing';

/**
 * A benchmark's database of its own, migrated: PGlite, or `name` on the test PostgreSQL server,
 * dropped and made again (kept when `reuse` and it exists).
 */
export async function openBenchDatabase(o: {
  name: string;
  pglite: boolean;
  reuse?: boolean;
  /** Pool size. */
  max: number;
  applicationName: string;
}): Promise<SqlClient> {
  if (o.pglite) return createMigratedPglite();
  const base = testUrls().databaseUrl;
  const admin = createPgClient({ url: base, max: 1, applicationName: o.applicationName });
  const exists = o.reuse
    ? (await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [o.name])).rowCount
    : 0;
  if (!o.reuse || !exists) {
    await admin.exec(`DROP DATABASE IF EXISTS ${o.name}`);
    await admin.exec(`CREATE DATABASE ${o.name}`);
  }
  await admin.close();
  const u = new URL(base);
  u.pathname = `/${o.name}`;
  const sql = createPgClient({ url: u.toString(), max: o.max, applicationName: o.applicationName });
  await migrate(sql);
  return sql;
}
