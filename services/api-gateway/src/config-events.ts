import { randomUUID } from 'node:crypto';
import { ConfigReloadedEvent, type Topology } from '@trawl/contracts';
import { type Broker, type Consumer, declareControlQueue } from '@trawl/platform';
import type { Logger } from 'pino';
import type { ConfigState } from './config-state.ts';

/**
 * Keeps this replica in step with reloads done by another one: a per-replica exclusive queue bound to
 * `config.reloaded`; an event naming a version this replica does not run makes it reload its files
 * (under the same advisory lock, so the cluster's version is not changed twice).
 */
export async function followConfigReloads(opts: {
  broker: Broker;
  topology: Topology;
  configState: ConfigState<unknown>;
  logger: Logger;
}): Promise<Consumer> {
  const { broker, topology: t, configState, logger } = opts;
  const queue = await declareControlQueue(broker, t, `api-gateway.${randomUUID()}`);
  return broker.consume(
    queue,
    async (d) => {
      const ev = ConfigReloadedEvent.safeParse(d.body);
      if (ev.success && ev.data.new_version !== configState.current().files.version) {
        try {
          const r = await configState.reload(null);
          logger.info(
            { version: r.new_version },
            'configuration reloaded after config.reloaded event',
          );
        } catch (err) {
          logger.warn(
            { err },
            'reload after config.reloaded event failed; keeping the running configuration',
          );
        }
      }
      await d.ack();
    },
    { prefetch: 1 },
  );
}
