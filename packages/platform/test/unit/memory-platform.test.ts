import { describe, expect, it } from 'vitest';
import { memoryPlatform, newJob } from '../../src/testing/index.ts';

describe('memoryPlatform', () => {
  it('gives a migrated store, a cache and a broker with the Trawl topology', async () => {
    const p = await memoryPlatform();
    try {
      const j = newJob();
      await p.store.jobs.create(j);
      expect((await p.store.jobs.get(j.job_id))?.status).toBe('queued');
      await p.cache.set('a', 'b');
      expect(await p.cache.get('a')).toBe('b');
      await p.broker.publish(
        p.topology.exchanges.analysis,
        p.topology.routingKeys.analysisRequested,
        { job_id: j.job_id },
      );
      expect(await p.broker.queueDepth(p.topology.queues.analysisRequests)).toBe(1);
    } finally {
      await p.close();
    }
  });
});
