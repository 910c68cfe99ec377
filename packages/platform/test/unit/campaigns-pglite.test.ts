import { createMigratedPglite } from '../../src/index.ts';
import { campaignsSuite } from '../helpers/campaigns-suite.ts';

campaignsSuite('PGlite', async () => {
  const sql = await createMigratedPglite();
  return { sql, cleanup: () => sql.close() };
});
