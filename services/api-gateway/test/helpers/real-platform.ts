import { topology } from '@trawl/contracts';
import type { Broker, Cache } from '@trawl/platform';
import { createMemoryBroker, createRedisCache, declareTopology } from '@trawl/platform';
import { testRedis, testSchema, uniqueSuffix } from '@trawl/platform/testing';

// TEMP until @trawl/platform/testing exports testBroker (RabbitMQ).
async function testBroker() {
  const broker = createMemoryBroker();
  const t = topology(`gw${uniqueSuffix()}`);
  await declareTopology(broker, t);
  return { broker, topology: t, cleanup: () => broker.close() };
}

import type { RealPlatform } from './harness.ts';

/** Real PostgreSQL, Redis and RabbitMQ on 127.0.0.1, isolated by schema, key prefix and broker names. */
export async function realPlatform(): Promise<RealPlatform> {
  const db = await testSchema({ max: 6 });
  const redis = testRedis();
  const b = await testBroker();
  const extra: Cache[] = [];
  return {
    store: db.store,
    cache: redis.cache,
    broker: b.broker,
    topology: b.topology,
    sqlSchema: db.schema,
    redisPrefix: redis.prefix,
    secondCache() {
      const c = createRedisCache({
        client: redis.client.duplicate(),
        prefix: redis.prefix,
        ownsClient: true,
      });
      extra.push(c);
      return c;
    },
    async cleanup() {
      for (const c of extra) await c.close().catch(() => undefined);
      await b.cleanup();
      await redis.cleanup();
      await db.drop();
    },
  };
}

/** A broker whose connection is gone (publish rejects, ping rejects): the "broker stopped" case. */
export async function deadBroker(): Promise<Broker> {
  const broker = createMemoryBroker();
  await broker.close();
  return broker;
}
