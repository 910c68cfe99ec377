import { type Topology, topology } from '@trawl/contracts';
import type { Broker, Cache } from '@trawl/platform';
import * as platform from '@trawl/platform';
import { createRedisCache } from '@trawl/platform';
import { testRedis, testSchema, testUrls, uniqueSuffix } from '@trawl/platform/testing';
import type { RealPlatform } from './harness.ts';

type RabbitFactory = (o: { url: string; connectionName?: string }) => Broker & {
  waitConnected?(timeoutMs?: number): Promise<void>;
};

/** The RabbitMQ adapter when @trawl/platform exports it (it is landing); else null. */
function rabbitFactory(): RabbitFactory | null {
  const f = (platform as unknown as Record<string, unknown>).createRabbitBroker;
  return typeof f === 'function' ? (f as RabbitFactory) : null;
}

/** RabbitMQ on vhost trawl_test with unique names (falls back to the in-process broker, said in `kind`). */
async function testBroker(): Promise<{
  broker: Broker;
  topology: Topology;
  cleanup(): Promise<void>;
}> {
  const t = topology(`gw${uniqueSuffix()}`);
  const rabbit = rabbitFactory();
  const broker: Broker = rabbit
    ? rabbit({ url: testUrls().rabbitmqUrl, connectionName: `trawl-gw-test-${uniqueSuffix()}` })
    : platform.createMemoryBroker();
  await (broker as { waitConnected?(ms?: number): Promise<void> }).waitConnected?.(10_000);
  await platform.declareTopology(broker, t);
  return {
    broker,
    topology: t,
    async cleanup() {
      const names = platform.topologyNames(t);
      for (const q of names.queues) await broker.deleteQueue(q).catch(() => undefined);
      for (const e of names.exchanges) await broker.deleteExchange(e).catch(() => undefined);
      await broker.close();
    },
  };
}

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
    sql: db.sql,
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

/** A broker whose connection was closed (publish and ping reject): the "broker stopped" case. */
export async function deadBroker(): Promise<Broker> {
  const rabbit = rabbitFactory();
  const broker: Broker = rabbit
    ? rabbit({
        url: testUrls().rabbitmqUrl,
        connectionName: `trawl-gw-test-dead-${uniqueSuffix()}`,
      })
    : platform.createMemoryBroker();
  await (broker as { waitConnected?(ms?: number): Promise<void> }).waitConnected?.(10_000);
  await broker.close();
  return broker;
}
