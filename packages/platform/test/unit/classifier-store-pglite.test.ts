import { createMigratedPglite } from '../../src/index.ts';
import { classifierStoreConformance } from '../../src/testing/index.ts';

classifierStoreConformance('PGlite', async () => {
  const sql = await createMigratedPglite({ migrated: false });
  return { sql, cleanup: () => sql.close() };
});
