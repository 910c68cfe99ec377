import type { AppConfig } from '@trawl/config';
import { type Topology, topology } from '@trawl/contracts';
import type { Logger } from 'pino';
import { declareTopology } from './broker/declare-topology.ts';
import { createRabbitBroker, type RabbitBroker } from './broker/rabbit-broker.ts';
import type { Broker } from './broker/types.ts';
import { createRedisCache, createRedisClient } from './cache/redis-cache.ts';
import type { Cache } from './cache/types.ts';
import type { PlatformLogger } from './logger.ts';
import type { Store } from './store/repositories.ts';
import type { SqlClient } from './store/types.ts';

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

/**
 * The ports of an assembly (ADR 021): the clients its caller opened and closes, the same kinds in
 * both shapes (RabbitMQ or the in-process broker, Redis or the in-process cache).
 */
export interface ServicePorts {
  broker: Broker;
  topology: Topology;
  cache: Cache;
  logger: Logger;
  /** Wall clock (deadlines, event timestamps); the system's when absent. */
  clock?: () => Date;
}

/** The ports of an assembly that also uses the database (PostgreSQL or PGlite). */
export interface StoreServicePorts extends ServicePorts {
  sql: SqlClient;
  store: Store;
}
