import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Broker, Delivery, QueueOptions } from '../broker/types.ts';

export interface BrokerTarget {
  /** Names are prefixed with this (unique per run). */
  prefix: string;
  /** Opens a new connection to the same broker server. */
  connect(): Promise<Broker>;
  /**
   * Closes a connection from the server side while it is in use; the adapter must notice and
   * reconnect by itself.
   */
  dropConnection(broker: Broker): Promise<void>;
  /** Deletes what the tests declared and closes every connection. */
  cleanup(): Promise<void>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `cond` every 20 ms for at most `ms` (bounded wait, not a timing assertion). */
export async function waitFor(cond: () => boolean | Promise<boolean>, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await sleep(20);
  }
}

/** Collects deliveries; `auto` decides whether the handler acks at once. */
function collector(auto: 'ack' | 'hold' = 'ack') {
  const got: Delivery[] = [];
  const handler = async (d: Delivery) => {
    got.push(d);
    if (auto === 'ack') await d.ack();
  };
  return { got, handler };
}

/**
 * The broker conformance suite: the RabbitMQ adapter and the in-process broker must both pass it.
 * `makeTarget` is called once for the suite.
 */
export function brokerConformance(name: string, makeTarget: () => Promise<BrokerTarget>): void {
  describe(`broker conformance: ${name}`, () => {
    let t: BrokerTarget;
    let b: Broker;
    let n = 0;
    const nm = (what: string) => `${t.prefix}.${what}.${++n}`;

    beforeAll(async () => {
      t = await makeTarget();
      b = await t.connect();
    }, 60_000);
    afterAll(async () => {
      await t?.cleanup();
    }, 60_000);

    /** A work queue (with `opts`) whose dead letters go to a queue of their own: their names. */
    async function withDeadLetters(opts: QueueOptions): Promise<{ q: string; dead: string }> {
      const [dlx, dead, q] = ['dlx', 'dead', 'work'].map(nm) as [string, string, string];
      await b.assertExchange(dlx, 'direct');
      await b.assertQueue(dead);
      await b.bindQueue(dead, dlx, 'dead');
      await b.assertQueue(q, { ...opts, deadLetterExchange: dlx, deadLetterRoutingKey: 'dead' });
      return { q, dead };
    }

    /** Consumes the one message `queue` holds, and answers it. */
    async function takeOne(queue: string): Promise<Delivery> {
      const c = collector();
      const consumer = await b.consume(queue, c.handler, { prefetch: 1 });
      await waitFor(() => c.got.length === 1);
      await consumer.cancel();
      return c.got[0] as Delivery;
    }

    it('confirms a publish once the message is queued, and delivers its JSON body and properties', async () => {
      const ex = nm('ex');
      const q = nm('q');
      await b.assertExchange(ex, 'direct');
      await b.assertQueue(q);
      await b.bindQueue(q, ex, 'k');
      await b.publish(
        ex,
        'k',
        { hello: 'wörld', n: 1, list: [1, null] },
        { messageId: 'm-1', headers: { h: 'v' } },
      );
      expect(await b.queueDepth(q)).toBe(1);
      const c = collector();
      const consumer = await b.consume(q, c.handler, { prefetch: 5 });
      await waitFor(() => c.got.length === 1);
      const d = c.got[0] as Delivery;
      expect(d.body).toEqual({ hello: 'wörld', n: 1, list: [1, null] });
      expect(d.messageId).toBe('m-1');
      expect(d.headers.h).toBe('v');
      expect(d.routingKey).toBe('k');
      expect(d.exchange).toBe(ex);
      expect(d.redelivered).toBe(false);
      expect(d.deliveryCount).toBe(1);
      await consumer.cancel();
      expect(await b.queueDepth(q)).toBe(0);
    });

    it('routes direct, topic (* and #) and fanout exchanges', async () => {
      const direct = nm('direct');
      const topic = nm('topic');
      const fan = nm('fan');
      await b.assertExchange(direct, 'direct');
      await b.assertExchange(topic, 'topic');
      await b.assertExchange(fan, 'fanout');
      const [qa, qb, qStar, qHash, qF1, qF2] = ['a', 'b', 'star', 'hash', 'f1', 'f2'].map(
        nm,
      ) as string[];
      for (const q of [qa, qb, qStar, qHash, qF1, qF2] as string[])
        await b.assertQueue(q, { type: 'classic' });
      await b.bindQueue(qa as string, direct, 'a');
      await b.bindQueue(qb as string, direct, 'b');
      await b.bindQueue(qStar as string, topic, 'analysis.*');
      await b.bindQueue(qHash as string, topic, 'analysis.#');
      await b.bindQueue(qF1 as string, fan, 'ignored');
      await b.bindQueue(qF2 as string, fan, '');
      await b.publish(direct, 'a', 1);
      await b.publish(direct, 'b', 2);
      await b.publish(direct, 'c', 3); // unroutable: dropped, still confirmed
      await b.publish(topic, 'analysis.completed', 4);
      await b.publish(topic, 'analysis.completed.late', 5);
      await b.publish(topic, 'analysis', 6);
      await b.publish(topic, 'other.completed', 7);
      await b.publish(fan, 'anything', 8);
      await waitFor(async () => (await b.queueDepth(qF2 as string)) === 1);
      expect(await b.queueDepth(qa as string)).toBe(1);
      expect(await b.queueDepth(qb as string)).toBe(1);
      expect(await b.queueDepth(qStar as string)).toBe(1);
      expect(await b.queueDepth(qHash as string)).toBe(3);
      expect(await b.queueDepth(qF1 as string)).toBe(1);
    });

    it('sends to a queue by name through the default exchange', async () => {
      const q = nm('q');
      await b.assertQueue(q);
      await b.publish('', q, { direct: true });
      expect(await b.queueDepth(q)).toBe(1);
    });

    it('rejects a publish to an exchange that does not exist, and keeps working', async () => {
      await expect(b.publish(nm('missing'), 'k', {})).rejects.toMatchObject({
        code: 'TRAWL_ERR_BROKER_NOT_FOUND',
      });
      const q = nm('q');
      await b.assertQueue(q);
      await b.publish('', q, 1);
      expect(await b.queueDepth(q)).toBe(1);
      await expect(b.queueDepth(nm('nope'))).rejects.toMatchObject({
        code: 'TRAWL_ERR_BROKER_NOT_FOUND',
      });
      await expect(b.consume(nm('nope'), async () => {}, { prefetch: 1 })).rejects.toMatchObject({
        code: 'TRAWL_ERR_BROKER_NOT_FOUND',
      });
    });

    it('honours prefetch: no more unacked deliveries than allowed', async () => {
      const q = nm('q');
      await b.assertQueue(q);
      for (let i = 0; i < 10; i++) await b.publish('', q, { i });
      const c = collector('hold');
      const consumer = await b.consume(q, c.handler, { prefetch: 3 });
      await waitFor(() => c.got.length === 3);
      await sleep(300);
      expect(c.got).toHaveLength(3);
      expect(await b.queueDepth(q)).toBe(7);
      await (c.got[0] as Delivery).ack();
      await waitFor(() => c.got.length === 4);
      await sleep(200);
      expect(c.got).toHaveLength(4);
      for (const d of c.got.slice(1)) await d.ack();
      await waitFor(() => c.got.length === 7);
      for (const d of c.got.slice(4)) await d.ack();
      await waitFor(() => c.got.length === 10);
      for (const d of c.got.slice(7)) await d.ack();
      expect(c.got.map((d) => (d.body as { i: number }).i).sort((x, y) => x - y)).toEqual([
        0, 1, 2, 3, 4, 5, 6, 7, 8, 9,
      ]);
      await consumer.cancel();
    });

    it('redelivers a message nacked with requeue, marked redelivered and counted', async () => {
      const q = nm('q');
      await b.assertQueue(q);
      await b.publish('', q, { x: 1 }, { messageId: 'again' });
      const seen: Delivery[] = [];
      const consumer = await b.consume(
        q,
        async (d) => {
          seen.push(d);
          if (seen.length === 1) await d.nack({ requeue: true });
          else await d.ack();
        },
        { prefetch: 1 },
      );
      await waitFor(() => seen.length === 2);
      expect(seen[0]?.redelivered).toBe(false);
      expect(seen[0]?.deliveryCount).toBe(1);
      expect(seen[1]?.redelivered).toBe(true);
      expect(seen[1]?.deliveryCount).toBe(2);
      expect(seen[1]?.messageId).toBe('again');
      await consumer.cancel();
    });

    it('redelivers when the handler throws', async () => {
      const q = nm('q');
      await b.assertQueue(q);
      await b.publish('', q, { x: 1 });
      let calls = 0;
      const consumer = await b.consume(
        q,
        async (d) => {
          calls++;
          if (calls === 1) throw new Error('handler bug');
          await d.ack();
        },
        { prefetch: 1 },
      );
      await waitFor(() => calls === 2);
      await consumer.cancel();
      expect(await b.queueDepth(q)).toBe(0);
    });

    it('dead-letters a message past the delivery limit of a quorum queue', async () => {
      const { q, dead } = await withDeadLetters({ type: 'quorum', deliveryLimit: 2 });
      await b.publish('', q, { poison: true }, { messageId: 'poison' });
      const counts: number[] = [];
      const consumer = await b.consume(
        q,
        async (d) => {
          counts.push(d.deliveryCount);
          await d.nack({ requeue: true });
        },
        { prefetch: 1 },
      );
      await waitFor(async () => (await b.queueDepth(dead)) === 1);
      await consumer.cancel();
      // delivered once, then redelivered until it had been returned more than `deliveryLimit` times
      expect(counts).toEqual([1, 2, 3]);
      const dl = await takeOne(dead);
      expect(dl.body).toEqual({ poison: true });
      expect(dl.messageId).toBe('poison');
      expect(dl.headers['x-first-death-reason']).toBe('delivery_limit');
    });

    it('dead-letters a message nacked without requeue', async () => {
      const { q, dead } = await withDeadLetters({ deliveryLimit: 5 });
      await b.publish('', q, { bad: true });
      const consumer = await b.consume(q, (d) => d.nack({ requeue: false }), { prefetch: 1 });
      await waitFor(async () => (await b.queueDepth(dead)) === 1);
      await consumer.cancel();
      expect(await b.queueDepth(q)).toBe(0);
      expect((await takeOne(dead)).headers['x-first-death-reason']).toBe('rejected');
    });

    it('returns unacked messages of a cancelled consumer to another consumer, redelivered', async () => {
      const q = nm('q');
      await b.assertQueue(q);
      for (let i = 0; i < 4; i++) await b.publish('', q, { i });
      const held: Delivery[] = [];
      const c1 = await b.consume(
        q,
        async (d) => {
          held.push(d); // never acked
        },
        { prefetch: 2 },
      );
      await waitFor(() => held.length === 2);
      const c = collector();
      const c2 = await b.consume(q, c.handler, { prefetch: 10 });
      await waitFor(() => c.got.length === 2);
      await c1.cancel();
      await waitFor(() => c.got.length === 4);
      expect(c.got.filter((d) => d.redelivered)).toHaveLength(2);
      expect(new Set(c.got.map((d) => (d.body as { i: number }).i))).toEqual(new Set([0, 1, 2, 3]));
      await c2.cancel();
    });

    it('shares a queue between competing consumers on two connections; each message once', async () => {
      const other = await t.connect();
      const q = nm('q');
      await b.assertQueue(q);
      const seen = new Map<number, number>();
      const h = async (d: Delivery) => {
        const i = (d.body as { i: number }).i;
        seen.set(i, (seen.get(i) ?? 0) + 1);
        await sleep(2);
        await d.ack();
      };
      const c1 = await b.consume(q, h, { prefetch: 2 });
      const c2 = await other.consume(q, h, { prefetch: 2 });
      await Promise.all(Array.from({ length: 40 }, (_, i) => other.publish('', q, { i })));
      await waitFor(() => seen.size === 40);
      await sleep(100);
      expect([...seen.values()].every((x) => x === 1)).toBe(true);
      await c1.cancel();
      await c2.cancel();
      await other.close();
    });

    it('deletes an exclusive queue with its connection', async () => {
      const other = await t.connect();
      const q = nm('excl');
      await other.assertQueue(q, { exclusive: true });
      await other.publish('', q, 1);
      expect(await other.queueDepth(q)).toBe(1);
      await other.close();
      await expect(b.queueDepth(q)).rejects.toMatchObject({ code: 'TRAWL_ERR_BROKER_NOT_FOUND' });
    });

    it('answers ping and reports the connection', async () => {
      expect(b.isConnected()).toBe(true);
      expect(await b.ping()).toBeGreaterThanOrEqual(0);
    });

    it('rejects publishes while disconnected, then recovers its topology and consumers', async () => {
      const own = await t.connect();
      const ex = nm('ex');
      const q = nm('q');
      const excl = nm('excl');
      await own.assertExchange(ex, 'topic');
      await own.assertQueue(q);
      await own.bindQueue(q, ex, 'a.#');
      await own.assertQueue(excl, { exclusive: true });
      await own.bindQueue(excl, ex, 'a.#');
      const c = collector();
      await own.consume(excl, c.handler, { prefetch: 1 });
      await t.dropConnection(own);
      await expect(own.publish(ex, 'a.b', 1)).rejects.toMatchObject({
        code: 'TRAWL_ERR_BROKER_UNAVAILABLE',
      });
      await waitFor(() => own.isConnected(), 30_000);
      await waitFor(async () => {
        try {
          await own.publish(ex, 'a.b', { after: true });
          return true;
        } catch {
          return false;
        }
      }, 30_000);
      // the exclusive queue was re-declared and bound, and its consumer re-attached
      await waitFor(() => c.got.length >= 1);
      expect(c.got[0]?.body).toEqual({ after: true });
      await own.close();
    });

    it('loses no confirmed message when the connection is closed while messages are in flight', async () => {
      const MIN = 300;
      const own = await t.connect();
      const q = nm('inflight');
      await own.assertQueue(q, { type: 'quorum' });
      const confirmed = new Set<string>();
      const retried = new Set<string>();
      const processed = new Set<string>();
      const duplicates: { id: string; redelivered: boolean }[] = [];
      const acked = new Map<string, number>();
      let inFlightAtDrop = -1;
      let unconfirmedAtDrop = -1;
      let running = 0;
      let publishing = 0;
      let failedAcks = 0;
      let dropWanted = false;
      let dropDone = false;
      let drop: Promise<void> | null = null;
      const startDrop = () => {
        // closed from the server side while this delivery is unacked and publishes are unconfirmed
        inFlightAtDrop = running;
        unconfirmedAtDrop = publishing;
        drop = t.dropConnection(own).then(() => {
          dropDone = true;
        });
      };
      await own.consume(
        q,
        async (d) => {
          running++;
          if (dropWanted && drop === null) startDrop();
          try {
            const id = d.messageId as string;
            if (processed.has(id)) duplicates.push({ id, redelivered: d.redelivered });
            else processed.add(id);
            await sleep(3 + Math.floor(Math.random() * 8));
            try {
              await d.ack();
              acked.set(id, (acked.get(id) ?? 0) + 1);
            } catch (err) {
              failedAcks++;
              expect(err).toMatchObject({ code: 'TRAWL_ERR_BROKER_UNAVAILABLE' });
            }
          } finally {
            running--;
          }
        },
        { prefetch: 10 },
      );
      const publishOne = async (i: number): Promise<void> => {
        const id = `m-${i}`;
        publishing++;
        try {
          for (let tries = 0; tries < 1000; tries++) {
            try {
              await own.publish('', q, { i }, { messageId: id });
              confirmed.add(id);
              return;
            } catch (err) {
              expect(err).toMatchObject({ code: 'TRAWL_ERR_BROKER_UNAVAILABLE' });
              retried.add(id);
              await sleep(50);
            }
          }
          throw new Error(`could not publish ${id}`);
        } finally {
          publishing--;
        }
      };
      let i = 0;
      while (i < MIN || !dropDone) {
        const batch = Array.from({ length: 5 }, (_, k) => publishOne(i + k));
        i += 5;
        if (i >= MIN / 3) dropWanted = true;
        await Promise.all(batch);
        await sleep(10);
        if (i > 20_000) throw new Error('the connection was never dropped');
      }
      await drop;
      const total = i;
      await waitFor(() => acked.size === total, 60_000);
      await sleep(300);
      expect(confirmed.size).toBe(total);
      // every confirmed message was consumed (processed once, deduplicated by messageId) and acked
      expect(processed).toEqual(confirmed);
      expect(new Set(acked.keys())).toEqual(confirmed);
      // a message comes back only as a redelivery (unacked, or its ack lost with the connection)
      // or because its publish was retried (unconfirmed when the connection closed)
      for (const dup of duplicates) expect(dup.redelivered || retried.has(dup.id)).toBe(true);
      const ackedTwice = [...acked].filter(([, k]) => k > 1).map(([id]) => id);
      for (const id of ackedTwice) expect(duplicates.some((d) => d.id === id)).toBe(true);
      await own.close();
      // nothing is left unacked on the server: no message returns once the consumer is gone
      expect(await b.queueDepth(q)).toBe(0);
      console.info(
        `[broker ${name}] connection closed with ${inFlightAtDrop} deliveries in handlers and ${unconfirmedAtDrop} publishes unconfirmed: ${total} confirmed, all acked; ${duplicates.length} seen twice, ${failedAcks} acks refused after the loss, ${ackedTwice.length} acks lost with the connection, ${retried.size} publishes retried`,
      );
    }, 120_000);
  });
}
