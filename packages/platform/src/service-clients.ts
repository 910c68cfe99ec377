import type { AppConfig } from '@trawl/config';
import { type Topology, topology } from '@trawl/contracts';
import { declareTopology } from './broker/declare-topology.ts';
import { createRabbitBroker, type RabbitBroker } from './broker/rabbit-broker.ts';
import { createRedisCache, createRedisClient } from './cache/redis-cache.ts';
import type { Cache } from './cache/types.ts';
import type { PlatformLogger } from './logger.ts';

/** The RabbitMQ broker of a service, its connection named `trawl-<service>` in RabbitMQ. */
export function createServiceBroker(
  cfg: Pick<AppConfig, 'rabbitmq'>,
  service: string,
  logger: PlatformLogger,
): RabbitBroker {
  return createRabbitBroker({ url: cfg.rabbitmq.url, connectionName: `trawl-${service}`, logger });
}

/** The Redis cache of a service (keys under `trawl:`), its client named `trawl-<service>`. */
export function createServiceCache(
  cfg: Pick<AppConfig, 'redis'>,
  service: string,
  logger: PlatformLogger,
): Cache {
  const client = createRedisClient(cfg.redis.url, { connectionName: `trawl-${service}`, logger });
  return createRedisCache({ client, prefix: 'trawl:' });
}

/** What a scale-out service's main.ts talks to: RabbitMQ (the topology declared) and Redis. */
export interface ServiceMessaging {
  broker: RabbitBroker;
  topology: Topology;
  cache: Cache;
}

/** The broker (with the topology of `cfg.brokerPrefix` declared) and the cache of a service. */
export async function connectServiceMessaging(
  cfg: Pick<AppConfig, 'rabbitmq' | 'redis' | 'brokerPrefix'>,
  service: string,
  logger: PlatformLogger,
): Promise<ServiceMessaging> {
  const broker = createServiceBroker(cfg, service, logger);
  const topo = topology(cfg.brokerPrefix);
  await declareTopology(broker, topo);
  return { broker, topology: topo, cache: createServiceCache(cfg, service, logger) };
}
