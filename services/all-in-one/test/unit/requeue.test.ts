import { randomUUID } from 'node:crypto';
import { type Email, topology } from '@trawl/contracts';
import {
  createMemoryBroker,
  createMigratedPglite,
  createStore,
  declareTopology,
} from '@trawl/platform';
import { describe, expect, it } from 'vitest';
import { requeueUnfinished } from '../../src/requeue.ts';

const email: Email = {
  headers: {
    subject: 'hello',
    sender: 'a@example.org',
    recipients: ['b@example.org'],
    date: '2025-01-06T10:00:00.000Z',
  },
  body_text: 'hi',
  analysis_context: {},
};

describe('requeueUnfinished (the in-process broker does not survive a restart)', () => {
  it('publishes again every queued and processing job, oldest first, and nothing finished', async () => {
    const sql = await createMigratedPglite();
    const store = createStore(sql);
    const broker = createMemoryBroker();
    const t = topology('requeue');
    await declareTopology(broker, t);
    try {
      const ids = Array.from({ length: 5 }, () => randomUUID());
      for (const [i, id] of ids.entries()) {
        await store.jobs.create({ job_id: id, email_id: `e${i}`, workflow_id: 'default', email });
      }
      await store.jobs.markProcessing(ids[1] as string, new Date(Date.now() + 60_000));
      await store.jobs.markProcessing(ids[2] as string, new Date(Date.now() + 60_000));
      await store.jobs.fail(ids[2] as string, { code: 'TRAWL_ERR_X', message: 'x' });
      await store.jobs.markProcessing(ids[3] as string, new Date(Date.now() + 60_000));
      await store.jobs.complete(
        ids[3] as string,
        {
          is_phishing: false,
          threat_level: 'none',
          confidence: 0.9,
          summary: '',
          recommended_action: 'allow',
          indicators: [],
        },
        { workflow_id: 'default', duration_ms: 1, stages: [] },
      );

      // A page size of 1 walks the keyset pagination.
      const n = await requeueUnfinished({ sql, broker, topology: t, pageSize: 1 });
      expect(n).toBe(3);

      const got: { job_id: string; email?: Email; workflow_id: string }[] = [];
      const consumer = await broker.consume(
        t.queues.analysisRequests,
        async (d) => {
          got.push(d.body as (typeof got)[number]);
          await d.ack();
        },
        { prefetch: 10 },
      );
      for (let i = 0; i < 50 && got.length < 3; i++) await new Promise((r) => setTimeout(r, 20));
      await consumer.cancel();
      expect(got.map((m) => m.job_id)).toEqual([ids[0], ids[1], ids[4]]);
      // claim checks, as the gateway publishes them: the orchestrator reads the Email from the row
      expect(got[0]).toEqual({
        job_id: ids[0],
        email_id: 'e0',
        workflow_id: 'default',
        submitted_at: expect.any(String),
      });
    } finally {
      await broker.close();
      await sql.close();
    }
  });
});
