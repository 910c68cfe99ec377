import { ConfigReloadedEvent, errorText, type Topology } from '@trawl/contracts';
import { type Broker, type Consumer, type Delivery, declareControlQueue } from '@trawl/platform';
import type { ConfigSource } from '@trawl/workflow-engine';
import type { Logger } from 'pino';

export interface ControlEventsDeps {
  broker: Broker;
  topology: Topology;
  config: ConfigSource;
  log: Logger;
  /** Names this replica's control queue. */
  instanceId: string;
}

/**
 * Control events (`config.reloaded`): each replica binds its own exclusive queue to the control
 * exchange and reloads its configuration when the event names another version than the one it
 * runs. Jobs already running keep the configuration they started with.
 */
export async function consumeControlEvents(deps: ControlEventsDeps): Promise<Consumer> {
  const { broker, topology: t, config, log } = deps;

  async function handleControl(d: Delivery): Promise<void> {
    const ev = ConfigReloadedEvent.safeParse(d.body);
    if (!ev.success) {
      log.warn({}, 'invalid control event ignored');
      await d.ack();
      return;
    }
    const current = config.getConfig().version;
    if (ev.data.new_version !== current && config.reload) {
      try {
        await config.reload();
        log.info(
          { old_version: current, new_version: config.getConfig().version },
          'configuration reloaded: jobs starting now use it',
        );
      } catch (e) {
        log.error(
          { err: errorText(e) },
          'configuration reload failed: previous configuration kept',
        );
      }
    }
    await d.ack();
  }

  const controlQueue = await declareControlQueue(broker, t, `orchestrator.${deps.instanceId}`);
  return broker.consume(controlQueue, handleControl, { prefetch: 1 });
}
