import { describe, expect, it } from 'vitest';
import { createPgClient, createStore } from '../../src/index.ts';
import { newJob, testSchema } from '../../src/testing/index.ts';
import { countingClient, jobBatchingSuite } from '../helpers/job-batching.ts';

jobBatchingSuite('PostgreSQL', async () => {
  const ts = await testSchema();
  return { sql: ts.sql, cleanup: () => ts.drop() };
});

describe('job insert group commit: PostgreSQL down', () => {
  it('fails every caller of the batch with TRAWL_ERR_STORE_UNAVAILABLE, without row-by-row retries', async () => {
    // nothing listens on port 1: the connection is refused, as when the server is down
    const down = createPgClient({ url: 'postgres://postgres@127.0.0.1:1/trawl_test', max: 2 });
    try {
      const c = countingClient(down);
      const store = createStore(c.sql);
      const results = await Promise.allSettled(
        Array.from({ length: 6 }, () => store.jobs.create(newJob())),
      );
      for (const r of results) {
        expect(r.status).toBe('rejected');
        expect((r as PromiseRejectedResult).reason).toMatchObject({
          code: 'TRAWL_ERR_STORE_UNAVAILABLE',
        });
      }
      expect(c.inserts()).toEqual([6]);
    } finally {
      await down.close();
    }
  });
});
