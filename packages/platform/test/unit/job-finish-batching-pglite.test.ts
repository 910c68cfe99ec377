import { createMigratedPglite } from '../../src/index.ts';
import { jobFinishBatchingSuite } from '../helpers/job-finish-batching.ts';

jobFinishBatchingSuite('PGlite', async () => {
  const sql = await createMigratedPglite();
  return { sql, cleanup: () => sql.close() };
});
