import { classifierStoreConformance, testSchema } from '../../src/testing/index.ts';

classifierStoreConformance('PostgreSQL', async () => {
  const ts = await testSchema({ migrate: false });
  return { sql: ts.sql, cleanup: () => ts.drop() };
});
