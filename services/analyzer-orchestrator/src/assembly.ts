import type { EmbeddedInvoker } from '@trawl/analyzers';
import { reportNotifierFromConfig, retentionOfStore } from '@trawl/investigation';
import { type Assembled, assemble, type StoreServicePorts } from '@trawl/platform';
import type { ConfigSource } from '@trawl/workflow-engine';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { startAnalysis } from './analysis-setup.ts';
import { buildOrchestrator, type Orchestrator } from './app.ts';
import type { OrchestratorSettings } from './settings.ts';

/** What an orchestrator is given: the clients it talks through, opened and closed by its caller. */
export interface OrchestratorPorts extends StoreServicePorts {
  /** Where its metrics go (embedded mode: one registry per part, all served by the gateway). */
  registry?: Registry;
}

/** The invoker the orchestrator's jobs call analyzers through, retargeted on a reload. */
type OrchestratorInvoker = EmbeddedInvoker;

/** The options an assembly compiled (Temporal's compileWorkerOptions): what the parity test reads. */
export interface OrchestratorDescription {
  service: 'analyzer-orchestrator';
  /** As set, but queuedMaxMs as used (0 with the in-process broker: see startOrchestrator). */
  consumer: OrchestratorSettings['consumer'];
  analysis: {
    inProcess: boolean;
    workers: number;
    pooledMinChars: number;
    /** The pool's hard stop of a call without its own timeout (service.yaml analyzer.timeout_ms). */
    defaultTimeoutMs: number;
  };
  retention: OrchestratorSettings['retention'];
  notifier: boolean;
  /** The steps of close(), in order. */
  stopOrder: string[];
}

/** A started orchestrator: the service, its close() and the options it compiled. */
export interface RunningOrchestrator {
  orchestrator: Orchestrator;
  invoker: OrchestratorInvoker;
  config: ConfigSource;
  /** The analyzer and provider ids built into this process (none when they are called over HTTP). */
  builtins: { analyzers: string[]; providers: string[] };
  /** Where /health and /metrics listen, when they do. */
  url?: string | undefined;
  describe(): OrchestratorDescription;
}

/**
 * The analyzer orchestrator, running (ADR 021): its configuration read from the files (again on
 * `config.reloaded`), its invoker (the built-ins in this process, the offline ones in worker
 * threads, or over HTTP), the consumer, the reaper with the retention purge, reporter
 * notifications when TRAWL_SMTP_URL is set, and /health and /metrics when `settings.listen` says
 * where. main.ts and embedded mode both call it; neither builds a part of it.
 */
export async function startOrchestrator(
  ports: OrchestratorPorts,
  settings: OrchestratorSettings,
): Promise<RunningOrchestrator & Assembled> {
  const { sql, store, broker, topology, cache, logger } = ports;
  return assemble(logger, async (shutdown) => {
    const analysis = await startAnalysis(store, logger, settings, shutdown);
    const { config, lists, invoker: inv } = analysis;

    const registry = ports.registry ?? new Registry();
    if (settings.defaultMetrics && settings.listen) collectDefaultMetrics({ register: registry });
    // The in-process broker starts empty: embedded mode queues every unfinished job again at
    // start, so no stored job is left without a message; with RabbitMQ the reaper closes that gap.
    const queuedMaxMs = broker.kind === 'memory' ? 0 : settings.consumer.queuedMaxMs;
    const orchestrator = buildOrchestrator({
      broker,
      store,
      cache,
      invoker: inv,
      config,
      topology,
      logger,
      registry,
      ...(ports.clock ? { clock: ports.clock } : {}),
      options: {
        prefetch: settings.consumer.prefetch,
        reaperIntervalMs: settings.consumer.reaperIntervalMs,
        jobGraceMs: settings.consumer.jobGraceMs,
        queuedMaxMs,
        serviceVersion: settings.serviceVersion,
        ...(settings.instanceId ? { instanceId: settings.instanceId } : {}),
      },
      retention: retentionOfStore(sql, cache, settings.retention, logger),
      lists,
    });
    let url: string | undefined;
    if (settings.listen) {
      shutdown.add('http', () => orchestrator.app.close());
    }
    await orchestrator.start();
    shutdown.add('consumer', () => orchestrator.stop(settings.consumer.shutdownGraceMs));
    // Reporter notifications (issue 17): on when TRAWL_SMTP_URL is set.
    const notifier = reportNotifierFromConfig(settings.notify, { broker, topology, sql, logger });
    if (notifier) {
      await notifier.start();
      shutdown.add('report-notifier', () => notifier.stop());
    }
    if (settings.listen) {
      url = await orchestrator.app.listen(settings.listen);
    }
    const description: Omit<OrchestratorDescription, 'stopOrder'> = {
      service: 'analyzer-orchestrator',
      consumer: { ...settings.consumer, queuedMaxMs },
      analysis: {
        inProcess: settings.analysis.inProcess,
        workers: analysis.workers,
        pooledMinChars: analysis.pooledMinChars,
        defaultTimeoutMs: analysis.defaultTimeoutMs,
      },
      retention: settings.retention,
      notifier: notifier !== undefined,
    };
    return {
      orchestrator,
      invoker: inv,
      config,
      builtins: analysis.builtins,
      url,
      describe: () => ({ ...description, stopOrder: shutdown.order() }),
    };
  });
}
