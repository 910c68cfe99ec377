import { createPgClient } from '../../src/index.ts';
import { testSchema, testUrls, webhookConformance } from '../../src/testing/index.ts';

webhookConformance('PostgreSQL', async () => {
  const ts = await testSchema({ migrate: false });
  return {
    sql: ts.sql,
    // another process on the same schema: its own pool
    async reopen() {
      const sql = createPgClient({ url: testUrls().databaseUrl, schema: ts.schema, max: 2 });
      return { sql, close: () => sql.close() };
    },
    cleanup: () => ts.drop(),
  };
});
