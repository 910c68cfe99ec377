import { createMigratedPglite } from '../../src/index.ts';
import { retentionSuite } from '../helpers/retention-suite.ts';

retentionSuite('PGlite', async () => {
  const sql = await createMigratedPglite();
  return { sql, cleanup: () => sql.close() };
});
