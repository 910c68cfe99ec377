import { describe, expect, it } from 'vitest';
import { createPgClient, createStore, MIGRATION_LOCK_KEY } from '../../src/index.ts';
import { newJob, storeConformance, testSchema, testUrls } from '../../src/testing/index.ts';

storeConformance('PostgreSQL', async () => {
  const ts = await testSchema({ migrate: false });
  const other = createPgClient({ url: testUrls().databaseUrl, schema: ts.schema, max: 4 });
  return {
    sql: ts.sql,
    other,
    async cleanup() {
      await other.close();
      await ts.drop();
    },
  };
});

describe('PostgreSQL store specifics', () => {
  it('testSchema gives an isolated, migrated schema and drops it', async () => {
    const a = await testSchema();
    const b = await testSchema();
    try {
      const j = newJob();
      await a.store.jobs.create(j);
      expect(await a.store.jobs.get(j.job_id)).not.toBeNull();
      expect(await b.store.jobs.get(j.job_id)).toBeNull();
    } finally {
      await a.drop();
      await b.drop();
    }
    const admin = createPgClient({ url: testUrls().databaseUrl, max: 1 });
    try {
      const r = await admin.query(
        'SELECT 1 FROM information_schema.schemata WHERE schema_name = $1',
        [a.schema],
      );
      expect(r.rowCount).toBe(0);
    } finally {
      await admin.close();
    }
  });

  it('releases the migration lock when a session holding it dies', async () => {
    const ts = await testSchema();
    try {
      // a replica that dies mid-migration: its session lock goes with its connection
      const appName = `victim-${ts.schema}`;
      const victim = createPgClient({
        url: testUrls().databaseUrl,
        schema: ts.schema,
        max: 2,
        applicationName: appName,
      });
      const admin = createPgClient({ url: testUrls().databaseUrl, max: 1 });
      try {
        await victim
          .withAdvisoryLock(MIGRATION_LOCK_KEY, async () => {
            await admin.query(
              'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1',
              [appName],
            );
          })
          .catch(() => undefined);
      } finally {
        await victim.close().catch(() => undefined);
        await admin.close();
      }
      const store = createStore(ts.sql);
      const j = newJob();
      await store.jobs.create(j);
      expect(await ts.sql.withAdvisoryLock(MIGRATION_LOCK_KEY, async () => 'got it')).toBe(
        'got it',
      );
    } finally {
      await ts.drop();
    }
  });

  it('reports an unreachable database as a transient error', async () => {
    const sql = createPgClient({ url: 'postgres://postgres@127.0.0.1:1/none', max: 1 });
    try {
      await expect(sql.query('SELECT 1')).rejects.toMatchObject({
        code: 'TRAWL_ERR_STORE_UNAVAILABLE',
        status: 503,
      });
    } finally {
      await sql.close();
    }
  });
});
