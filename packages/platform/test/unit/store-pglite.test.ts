import { createMigratedPglite } from '../../src/index.ts';
import { storeConformance } from '../../src/testing/index.ts';

storeConformance('PGlite', async () => {
  const sql = await createMigratedPglite({ migrated: false });
  return { sql, other: sql, cleanup: () => sql.close() };
});
