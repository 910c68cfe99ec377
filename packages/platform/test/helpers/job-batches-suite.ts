import { describe, expect, it } from 'vitest';
import {
  type Broker,
  batchBody,
  createRequestBatcher,
  type Delivery,
  expandDeadBatches,
  expandJobBatches,
} from '../../src/index.ts';
import { waitFor } from '../../src/testing/index.ts';

export interface BatchBrokerFactory {
  /** A connected broker and a prefix for this test's names; close() removes what the test made. */
  open(): Promise<{ broker: Broker; prefix: string; close(): Promise<void> }>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const job = (n: number) => ({ job_id: `job-${n}` });
const idOf = (d: Delivery) => (d.body as { job_id: string }).job_id;

/** The batch wrappers' behaviour on one broker implementation. */
export function jobBatchesSuite(name: string, factory: BatchBrokerFactory): void {
  async function setUp() {
    const { broker: b, prefix, close } = await factory.open();
    const n = {
      ex: `${prefix}.work`,
      q: `${prefix}.work.q`,
      dlx: `${prefix}.dlx`,
      dead: `${prefix}.dead.q`,
    };
    await b.assertExchange(n.ex, 'direct');
    await b.assertExchange(n.dlx, 'direct');
    await b.assertQueue(n.dead, { type: 'quorum' });
    await b.bindQueue(n.dead, n.dlx, 'dead');
    await b.assertQueue(n.q, {
      type: 'quorum',
      deadLetterExchange: n.dlx,
      deadLetterRoutingKey: 'dead',
      deliveryLimit: 5,
    });
    await b.bindQueue(n.q, n.ex, 'go');
    const seen: Delivery[] = [];
    const consumers: { cancel(): Promise<void> }[] = [];
    return {
      b,
      n,
      seen,
      ids: () => seen.map(idOf),
      /** Consumes the work queue through the batch wrapper, recording what the handler saw. */
      async consume(handle: (d: Delivery) => Promise<void>, maxInFlight = 8) {
        const handler = expandJobBatches(
          async (d) => {
            seen.push(d);
            await handle(d);
          },
          {
            requeue: (j) => b.publish(n.ex, 'go', j),
            reject: (j) => b.publish(n.dlx, 'dead', j),
            maxInFlight,
          },
        );
        consumers.push(await b.consume(n.q, handler, { prefetch: 4 }));
      },
      async consumeDead(handle: (d: Delivery) => Promise<void>) {
        consumers.push(await b.consume(n.dead, expandDeadBatches(handle), { prefetch: 4 }));
      },
      async close() {
        for (const c of consumers) await c.cancel();
        for (const q of [n.q, n.dead]) await b.deleteQueue(q).catch(() => undefined);
        for (const e of [n.ex, n.dlx]) await b.deleteExchange(e).catch(() => undefined);
        await close();
      },
    };
  }

  describe(`analysis requests in batches (${name})`, () => {
    it('one job goes as itself, several as { jobs }', () => {
      expect(batchBody([job(1)])).toEqual(job(1));
      expect(batchBody([job(1), job(2)])).toEqual({ jobs: [job(1), job(2)] });
    });

    it('hands each job of a batch to the handler once and acknowledges the batch', async () => {
      const t = await setUp();
      try {
        await t.consume((d) => d.ack());
        await t.b.publish(t.n.ex, 'go', batchBody([job(1), job(2), job(3)]));
        await t.b.publish(t.n.ex, 'go', job(4));
        await waitFor(() => t.seen.length >= 4);
        await sleep(100);
        expect(t.ids().sort()).toEqual(['job-1', 'job-2', 'job-3', 'job-4']);
        expect(await t.b.queueDepth(t.n.q)).toBe(0);
      } finally {
        await t.close();
      }
    });

    it('a job nacked for requeue comes back alone; a rejected one goes to the dead letters', async () => {
      const t = await setUp();
      try {
        let first = true;
        await t.consume(async (d) => {
          if (idOf(d) === 'job-2' && first) {
            first = false;
            return d.nack({ requeue: true });
          }
          if (idOf(d) === 'job-3') return d.nack({ requeue: false });
          return d.ack();
        });
        const dead: unknown[] = [];
        await t.consumeDead(async (d) => {
          dead.push(d.body);
          await d.ack();
        });
        await t.b.publish(t.n.ex, 'go', batchBody([job(1), job(2), job(3)]));
        await waitFor(() => t.seen.length >= 4 && dead.length >= 1);
        await sleep(100);
        expect(t.ids().sort()).toEqual(['job-1', 'job-2', 'job-2', 'job-3']);
        expect(dead).toEqual([job(3)]);
      } finally {
        await t.close();
      }
    });

    it('a batch that comes back is split into one message per job', async () => {
      const t = await setUp();
      try {
        let thrown = false;
        await t.consume(async (d) => {
          if (idOf(d) === 'job-2' && !thrown) {
            thrown = true;
            throw new Error('handler died');
          }
          await d.ack();
        });
        await t.b.publish(t.n.ex, 'go', batchBody([job(1), job(2), job(3)]));
        await waitFor(() => t.seen.length >= 6);
        await sleep(100);
        // first delivery: all three; then the batch returns, is split, and each job comes alone
        expect(t.ids().slice(0, 3).sort()).toEqual(['job-1', 'job-2', 'job-3']);
        expect(t.ids().slice(3).sort()).toEqual(['job-1', 'job-2', 'job-3']);
        expect(t.seen).toHaveLength(6);
        expect(await t.b.queueDepth(t.n.q)).toBe(0);
      } finally {
        await t.close();
      }
    });

    it('runs at most maxInFlight jobs at once', async () => {
      const t = await setUp();
      try {
        let now = 0;
        let peak = 0;
        await t.consume(async (d) => {
          now++;
          peak = Math.max(peak, now);
          await sleep(10);
          now--;
          await d.ack();
        }, 2);
        await t.b.publish(t.n.ex, 'go', batchBody([1, 2, 3, 4, 5, 6].map(job)));
        await t.b.publish(t.n.ex, 'go', batchBody([7, 8].map(job)));
        await waitFor(() => t.seen.length >= 8);
        expect(peak).toBe(2);
      } finally {
        await t.close();
      }
    });

    it('publishes the requests of one event-loop turn as one message, each caller confirmed', async () => {
      const t = await setUp();
      try {
        const bodies: unknown[] = [];
        const batcher = createRequestBatcher(async (body) => {
          bodies.push(body);
          await t.b.publish(t.n.ex, 'go', body);
        }, 3);
        await t.consume((d) => d.ack());
        // four in one turn with at most 3 per message: two messages; then one alone
        await Promise.all([1, 2, 3, 4].map((i) => batcher.publish(job(i))));
        await batcher.publish(job(5));
        expect(bodies).toEqual([{ jobs: [job(1), job(2), job(3)] }, job(4), job(5)]);
        await waitFor(() => t.seen.length >= 5);
        expect(t.ids().sort()).toEqual(['job-1', 'job-2', 'job-3', 'job-4', 'job-5']);
        // a publish that fails fails every caller of its message
        const failing = createRequestBatcher(async () => {
          throw new Error('no confirm');
        });
        const r = await Promise.allSettled([failing.publish(job(6)), failing.publish(job(7))]);
        expect(r.map((x) => x.status)).toEqual(['rejected', 'rejected']);
      } finally {
        await t.close();
      }
    });

    it('a dead batch is handled job by job', async () => {
      const t = await setUp();
      try {
        const seen: unknown[] = [];
        await t.consumeDead(async (d) => {
          seen.push(d.body);
          await d.ack();
        });
        await t.b.publish(t.n.dlx, 'dead', batchBody([job(1), job(2)]));
        await waitFor(() => seen.length >= 2);
        await sleep(100);
        expect(seen).toEqual([job(1), job(2)]);
        expect(await t.b.queueDepth(t.n.dead)).toBe(0);
      } finally {
        await t.close();
      }
    });
  });
}
