import { describe, expect, it } from 'vitest';
import type { Broker, RabbitBroker } from '../../src/index.ts';
import {
  brokerConformance,
  closeConnectionsByName,
  testBroker,
  waitFor,
} from '../../src/testing/index.ts';

const names = new WeakMap<Broker, string>();

brokerConformance('RabbitMQ', async () => {
  const tb = await testBroker({ declare: false });
  let n = 0;
  return {
    prefix: tb.prefix,
    async connect() {
      n++;
      const b = n === 1 ? tb.broker : tb.connect();
      names.set(b, `trawl-test-${tb.prefix}-${n === 1 ? 0 : n - 1}`);
      await (b as RabbitBroker).waitConnected(30_000);
      return b;
    },
    async dropConnection(b) {
      const name = names.get(b);
      if (!name) throw new Error('unknown broker');
      const closed = await closeConnectionsByName(name, 'conformance test');
      expect(closed).toBe(1);
    },
    cleanup: () => tb.cleanup(),
  };
});

describe('RabbitMQ broker with the Trawl topology', () => {
  it('dead-letters an analysis request after the topology delivery limit', async () => {
    const tb = await testBroker();
    try {
      const t = tb.topology;
      await tb.broker.publish(
        t.exchanges.analysis,
        t.routingKeys.analysisRequested,
        { job: 1 },
        { messageId: 'j1' },
      );
      let deliveries = 0;
      const c = await tb.broker.consume(
        t.queues.analysisRequests,
        async (d) => {
          deliveries++;
          await d.nack({ requeue: true });
        },
        { prefetch: 1 },
      );
      await waitFor(async () => (await tb.broker.queueDepth(t.queues.analysisDead)) === 1, 30_000);
      await c.cancel();
      expect(deliveries).toBe(t.deliveryLimit + 1);
      expect(await tb.broker.queueDepth(t.queues.analysisRequests)).toBe(0);
    } finally {
      await tb.cleanup();
    }
  });

  it('confirms every publish of one event-loop turn and delivers them in order (written together)', async () => {
    const tb = await testBroker();
    try {
      const t = tb.topology;
      const n = 200;
      await Promise.all(
        Array.from({ length: n }, (_, i) =>
          tb.broker.publish(t.exchanges.analysis, t.routingKeys.analysisRequested, { i }),
        ),
      );
      const got: number[] = [];
      const c = await tb.broker.consume(
        t.queues.analysisRequests,
        async (d) => {
          got.push((d.body as { i: number }).i);
          await d.ack();
        },
        { prefetch: 50 },
      );
      await waitFor(async () => got.length === n, 30_000);
      await c.cancel();
      expect(got).toEqual(Array.from({ length: n }, (_, i) => i));
      // the socket is not left corked: a later publish still goes out and is confirmed
      await tb.broker.publish(t.exchanges.analysis, t.routingKeys.analysisRequested, { i: n });
      expect(await tb.broker.queueDepth(t.queues.analysisRequests)).toBe(1);
    } finally {
      await tb.cleanup();
    }
  });

  it('rejects at once, without buffering, when the server cannot be reached', async () => {
    const { createRabbitBroker } = await import('../../src/index.ts');
    const b = createRabbitBroker({
      url: 'amqp://guest:guest@127.0.0.1:1/none',
      reconnect: { initialMs: 50, maxMs: 100 },
    });
    try {
      expect(b.isConnected()).toBe(false);
      await expect(b.publish('x', 'y', {})).rejects.toMatchObject({
        code: 'TRAWL_ERR_BROKER_UNAVAILABLE',
      });
      await expect(b.ping()).rejects.toMatchObject({ code: 'TRAWL_ERR_BROKER_UNAVAILABLE' });
    } finally {
      await b.close();
    }
  });
});
