/**
 * The analyzers service: every built-in analyzer and context provider at
 * `http://<host>:<TRAWL_ANALYZERS_PORT, default 8100>/<id>`. Each fetches its settings from the
 * gateway (`GET /api/v1/config/analyzers/<id>`); when the gateway is unreachable it falls back to
 * config/service.yaml read locally, then to its defaults.
 *
 * With TRAWL_ANALYSIS_WORKERS (`auto` or a count) the offline analyzers run in a pool of worker
 * threads, so that the thread answering HTTP never runs analysis and a call still running at the
 * service's `analyzer.timeout_ms` is stopped and answers a timeout (issue 15). The assembly
 * (startAnalyzers, ADR 021) decides the defaults; this file connects and calls it.
 */
import { loadConfigOrExit } from '@trawl/config';
import { topology } from '@trawl/contracts';
import {
  createPgClient,
  createServiceBroker,
  createServiceLogger,
  createShutdown,
  createStore,
  declareTopology,
  type RunningService,
  runService,
} from '@trawl/platform';
import { analyzersSettings, startAnalyzers } from './assembly.ts';

async function main(): Promise<RunningService> {
  const cfg = loadConfigOrExit({
    // RabbitMQ: the `lists.changed` events that make the `lists` analyzer read the lists again
    needs: { postgres: true, rabbitmq: true, redis: false, secretKey: false },
  });
  const logger = createServiceLogger('analyzers', cfg.pinoLevel);
  const shutdown = createShutdown(logger);
  try {
    const sql = createPgClient({
      url: cfg.database.url,
      max: 4,
      applicationName: 'trawl-analyzers',
    });
    shutdown.add('postgres', () => sql.close());
    const broker = createServiceBroker(cfg, 'analyzers', logger);
    shutdown.add('rabbitmq', () => broker.close());
    const t = topology(cfg.brokerPrefix);
    await declareTopology(broker, t);
    const running = await startAnalyzers(
      { store: createStore(sql), broker, topology: t },
      analyzersSettings(cfg),
    );
    shutdown.add('analyzers', () => running.close());
    running.logger.info({ assembly: running.describe() }, 'assembled');
    return { logger: running.logger, stop: () => shutdown.close() };
  } catch (err) {
    await shutdown.close().catch(() => undefined);
    throw err;
  }
}

void runService('analyzers', main);
