import { createStore } from '../store/create-store.ts';
import { migrate } from '../store/migrate.ts';
import { createPgClient, quoteIdent } from '../store/pg-client.ts';
import type { StoreOnSql } from '../store/repositories.ts';
import { testUrls, uniqueSuffix } from './infra.ts';

export interface TestSchema extends StoreOnSql {
  schema: string;
  /** Closes the pool and drops the schema. */
  drop(): Promise<void>;
}

/** A fresh, migrated schema in the trawl_test database (PostgreSQL on 127.0.0.1). */
export async function testSchema(
  opts: { migrate?: boolean; max?: number } = {},
): Promise<TestSchema> {
  const url = testUrls().databaseUrl;
  const schema = `t_${uniqueSuffix()}`;
  const admin = createPgClient({ url, max: 1 });
  try {
    await admin.query(`CREATE SCHEMA ${quoteIdent(schema)}`);
  } finally {
    await admin.close();
  }
  const sql = createPgClient({
    url,
    schema,
    max: opts.max ?? 4,
    applicationName: `trawl-test-${schema}`,
  });
  if (opts.migrate !== false) await migrate(sql);
  let dropped = false;
  return {
    sql,
    store: createStore(sql),
    schema,
    async drop() {
      if (dropped) return;
      dropped = true;
      await sql.close();
      const a = createPgClient({ url, max: 1 });
      try {
        await a.query(`DROP SCHEMA IF EXISTS ${quoteIdent(schema)} CASCADE`);
      } finally {
        await a.close();
      }
    },
  };
}
