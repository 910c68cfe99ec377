import { testSchema } from '../../src/testing/index.ts';
import { campaignsSuite } from '../helpers/campaigns-suite.ts';

campaignsSuite('PostgreSQL', async () => {
  const ts = await testSchema();
  return { sql: ts.sql, cleanup: () => ts.drop() };
});
