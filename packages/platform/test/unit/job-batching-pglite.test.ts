import { createMigratedPglite } from '../../src/index.ts';
import { jobBatchingSuite } from '../helpers/job-batching.ts';

jobBatchingSuite('PGlite', async () => {
  const sql = await createMigratedPglite();
  return { sql, cleanup: () => sql.close() };
});
