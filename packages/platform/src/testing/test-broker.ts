import { type Topology, topology } from '@trawl/contracts';
import { declareTopology, topologyNames } from '../broker/declare-topology.ts';
import { createRabbitBroker, type RabbitBroker } from '../broker/rabbit-broker.ts';
import type { PlatformLogger } from '../logger.ts';
import { testUrls, uniqueSuffix } from './infra.ts';

export interface TestBroker {
  broker: RabbitBroker;
  /** Prefix of every name (topology(prefix)). */
  prefix: string;
  topology: Topology;
  /** The connection_name RabbitMQ shows for this broker's connection. */
  connectionName: string;
  /** Another connection (another replica) on the same vhost; closed by cleanup(). */
  connect(): RabbitBroker;
  /** Deletes every queue and exchange declared through these connections, closes them. */
  cleanup(): Promise<void>;
}

/**
 * A RabbitMQ broker on the test vhost (trawl_test) with the Trawl topology declared under a unique
 * prefix.
 */
export async function testBroker(
  opts: { declare?: boolean; logger?: PlatformLogger } = {},
): Promise<TestBroker> {
  const prefix = `t${uniqueSuffix()}`;
  const url = testUrls().rabbitmqUrl;
  const t = topology(prefix);
  const opened: RabbitBroker[] = [];
  const open = (): RabbitBroker => {
    const b = createRabbitBroker({
      url,
      connectionName: `trawl-test-${prefix}-${opened.length}`,
      reconnect: { initialMs: 100, maxMs: 2000 },
      ...(opts.logger === undefined ? {} : { logger: opts.logger }),
    });
    opened.push(b);
    return b;
  };
  const broker = open();
  await broker.waitConnected(30_000);
  if (opts.declare !== false) await declareTopology(broker, t);
  return {
    broker,
    prefix,
    topology: t,
    connectionName: `trawl-test-${prefix}-0`,
    connect: open,
    async cleanup() {
      const queues = new Set<string>(topologyNames(t).queues);
      const exchanges = new Set<string>(topologyNames(t).exchanges);
      for (const b of opened) {
        for (const q of b.declared().queues) queues.add(q);
        for (const e of b.declared().exchanges) exchanges.add(e);
      }
      for (const b of opened.slice(1)) await b.close();
      try {
        await broker.waitConnected(10_000);
        for (const q of queues) await broker.deleteQueue(q).catch(() => undefined);
        for (const e of exchanges) await broker.deleteExchange(e).catch(() => undefined);
      } finally {
        await broker.close();
      }
    },
  };
}
