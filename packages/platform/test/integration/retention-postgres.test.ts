import { testSchema } from '../../src/testing/index.ts';
import { retentionSuite } from '../helpers/retention-suite.ts';

retentionSuite('PostgreSQL', async () => {
  const ts = await testSchema();
  return { sql: ts.sql, cleanup: () => ts.drop() };
});
