import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createPgClient, createStore } from '../../src/index.ts';
import { sampleResult, sampleTrace, testSchema } from '../../src/testing/index.ts';
import { jobFinishBatchingSuite, statementCounter } from '../helpers/job-finish-batching.ts';

jobFinishBatchingSuite('PostgreSQL', async () => {
  const ts = await testSchema();
  return { sql: ts.sql, cleanup: () => ts.drop() };
});

describe('job claim and finish group commit: PostgreSQL down', () => {
  it('fails every caller of a batch with TRAWL_ERR_STORE_UNAVAILABLE, without row-by-row retries', async () => {
    // nothing listens on port 1: the connection is refused, as when the server is down
    const down = createPgClient({ url: 'postgres://postgres@127.0.0.1:1/trawl_test', max: 2 });
    try {
      const c = statementCounter(down);
      const store = createStore(c.sql);
      const ids = Array.from({ length: 4 }, () => randomUUID());
      const results = await Promise.allSettled([
        ...ids.map((id) => store.jobs.claim(id, new Date())),
        ...ids.map((job_id) =>
          store.jobs.finish({
            job_id,
            outcome: { status: 'completed', result: sampleResult(0.5), trace: sampleTrace },
            sender: { address: 'a@example.com', at: new Date(), is_phishing: false },
          }),
        ),
      ]);
      for (const r of results) {
        expect(r.status).toBe('rejected');
        expect((r as PromiseRejectedResult).reason).toMatchObject({
          code: 'TRAWL_ERR_STORE_UNAVAILABLE',
        });
      }
      expect(c.claims()).toEqual([4]);
      expect(c.finishes()).toEqual([4]);
    } finally {
      await down.close();
    }
  });
});
