import type { Topology } from '@trawl/contracts';
import type { Broker, Consumer } from './types.ts';

/**
 * Declares Trawl's standard topology (idempotent; every service calls it on start):
 *  - `analysis` (direct) → `analysisRequests` (quorum, delivery limit, dead letters to `deadLetter`);
 *  - `deadLetter` (direct) → `analysisDead` (quorum), routing key `dead`;
 *  - `results` and `control` (topic): subscribers bind their own queues.
 */
export async function declareTopology(broker: Broker, t: Topology): Promise<void> {
  await broker.assertExchange(t.exchanges.analysis, 'direct');
  await broker.assertExchange(t.exchanges.results, 'topic');
  await broker.assertExchange(t.exchanges.control, 'topic');
  await broker.assertExchange(t.exchanges.deadLetter, 'direct');
  await broker.assertQueue(t.queues.analysisDead, { type: 'quorum', durable: true });
  await broker.bindQueue(t.queues.analysisDead, t.exchanges.deadLetter, t.routingKeys.deadLetter);
  await broker.assertQueue(t.queues.analysisRequests, {
    type: 'quorum',
    durable: true,
    deliveryLimit: t.deliveryLimit,
    deadLetterExchange: t.exchanges.deadLetter,
    deadLetterRoutingKey: t.routingKeys.deadLetter,
  });
  await broker.bindQueue(
    t.queues.analysisRequests,
    t.exchanges.analysis,
    t.routingKeys.analysisRequested,
  );
}

/**
 * A replica's own queue for control events (`config.reloaded`): `<control exchange>.<replica>`,
 * classic, exclusive and auto-deleted, so every replica gets every event and the queue goes with its
 * connection. Returns the queue's name.
 */
export async function declareControlQueue(
  broker: Broker,
  t: Topology,
  replica: string,
  routingKey: string = t.routingKeys.configReloaded,
): Promise<string> {
  const queue = `${t.exchanges.control}.${replica}`;
  await broker.assertQueue(queue, {
    type: 'classic',
    durable: false,
    exclusive: true,
    autoDelete: true,
  });
  await broker.bindQueue(queue, t.exchanges.control, routingKey);
  return queue;
}

/**
 * Calls `onChange` on every `lists.changed` control event (issue 32), through a queue of this
 * replica's own (`<control exchange>.<replica>.lists`); a failing `onChange` is logged by its
 * caller, the event acknowledged all the same (the next event, or the reader's own maximum age,
 * brings the lists in again).
 */
export async function watchListChanges(
  broker: Broker,
  t: Topology,
  replica: string,
  onChange: () => Promise<void>,
): Promise<Consumer> {
  const queue = await declareControlQueue(
    broker,
    t,
    `${replica}.lists`,
    t.routingKeys.listsChanged,
  );
  return broker.consume(
    queue,
    async (d) => {
      try {
        await onChange();
      } finally {
        await d.ack();
      }
    },
    { prefetch: 1 },
  );
}

/** Tells every replica that the lists changed (`lists.changed` on the control exchange). */
export async function publishListsChanged(broker: Broker, t: Topology, at: Date): Promise<void> {
  await broker.publish(t.exchanges.control, t.routingKeys.listsChanged, { at: at.toISOString() });
}

/** Every queue and exchange name of a topology (for clean-up in tests). */
export function topologyNames(t: Topology): { queues: string[]; exchanges: string[] } {
  return { queues: Object.values(t.queues), exchanges: Object.values(t.exchanges) };
}
