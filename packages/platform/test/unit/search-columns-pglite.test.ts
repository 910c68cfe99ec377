import { createPgliteClient } from '../../src/index.ts';
import { searchColumnsUpgradeSuite } from '../helpers/search-columns-suite.ts';

searchColumnsUpgradeSuite('PGlite', async () => {
  const sql = await createPgliteClient();
  return { sql, cleanup: () => sql.close() };
});
