import { testSchema } from '../../src/testing/index.ts';
import { searchColumnsUpgradeSuite } from '../helpers/search-columns-suite.ts';

searchColumnsUpgradeSuite('PostgreSQL', async () => {
  const ts = await testSchema({ migrate: false });
  return { sql: ts.sql, cleanup: () => ts.drop() };
});
