import { createMigratedPglite } from '../../src/index.ts';
import { webhookConformance } from '../../src/testing/index.ts';

webhookConformance('PGlite', async () => {
  const sql = await createMigratedPglite({ migrated: false });
  return {
    sql,
    // embedded mode is one process: a restarted dispatcher uses the same database client
    reopen: async () => ({ sql, close: async () => undefined }),
    cleanup: () => sql.close(),
  };
});
