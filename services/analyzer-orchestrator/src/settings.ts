import type { AppConfig } from '@trawl/config';

/**
 * Analysis workers when TRAWL_ANALYSIS_WORKERS is unset, in every shape (ADR 021): one worker,
 * for the large messages only.
 */
const LARGE_ONLY_WORKERS = 1;
/**
 * With that default, the messages the worker takes: bodies and attachments of 256 Ki characters
 * or more (the gateway's CPU pool draws the same line for parsing): below it an analysis costs
 * less than the copy to a worker, and the linear-time scans keep it short.
 */
const LARGE_MESSAGE_CHARS = 256 * 1024;

/** Everything an analyzer orchestrator is assembled with: compiled once, in settingsOf. */
export interface OrchestratorSettings {
  /** The configuration files (read at start, and again on `config.reloaded`). */
  files: Pick<AppConfig, 'configFile' | 'workflowsFile'>;
  consumer: {
    /** Unacked request messages at once = jobs run concurrently. */
    prefetch: number;
    reaperIntervalMs: number;
    jobGraceMs: number;
    /** A job queued this long is failed as never dispatched; 0: never (see startOrchestrator). */
    queuedMaxMs: number;
    /** How long a stop lets the jobs in flight finish. */
    shutdownGraceMs: number;
  };
  analysis: {
    /** Built-in analyzers in this process (true) or over HTTP at `builtinsUrl`. */
    inProcess: boolean;
    builtinsUrl: string;
    /** Worker threads for the offline analyzers (0: on the consuming thread). */
    workers: number;
    /** Only a message at least this large goes to a worker (0: every message). */
    pooledMinChars: number;
    internalApiKey: string | undefined;
  };
  retention: AppConfig['retention'];
  notify: AppConfig['notify'];
  /** Where /health and /metrics listen; absent: not listening (embedded: the gateway's /metrics). */
  listen?: { host: string; port: number } | undefined;
  /** Node's default metrics in this registry (TRAWL_METRICS). */
  defaultMetrics: boolean;
  serviceVersion: string;
  /** Names this replica's control queue (default: random). */
  instanceId?: string | undefined;
}

/**
 * The one place the orchestrator's defaults are decided, for main.ts and embedded mode alike: the
 * same configuration gives the same settings in both shapes (the parity test holds it). `listen`
 * is a setting of the shape, not a default: embedded mode serves one /metrics, the gateway's.
 */
export function orchestratorSettings(
  cfg: AppConfig,
  o: { version: string; listen: boolean; instanceId?: string },
): OrchestratorSettings {
  const workers = cfg.analysisWorkers ?? LARGE_ONLY_WORKERS;
  return {
    files: { configFile: cfg.configFile, workflowsFile: cfg.workflowsFile },
    consumer: {
      prefetch: cfg.orchestrator.prefetch,
      reaperIntervalMs: cfg.orchestrator.reaperIntervalMs,
      jobGraceMs: cfg.orchestrator.jobGraceMs,
      queuedMaxMs: cfg.orchestrator.queuedMaxMs,
      shutdownGraceMs: cfg.orchestrator.shutdownGraceMs,
    },
    analysis: {
      inProcess: cfg.builtinsInProcess,
      builtinsUrl: `http://${cfg.analyzersHost}:${cfg.analyzersPort}`,
      workers,
      // TRAWL_ANALYSIS_WORKERS unset: the one worker takes the large messages only; set: every one
      pooledMinChars: cfg.analysisWorkers === undefined ? LARGE_MESSAGE_CHARS : 0,
      internalApiKey: cfg.internalApiKey,
    },
    retention: cfg.retention,
    notify: cfg.notify,
    ...(o.listen ? { listen: { host: cfg.orchestratorHost, port: cfg.orchestratorPort } } : {}),
    defaultMetrics: cfg.metrics,
    serviceVersion: o.version,
    ...(o.instanceId ? { instanceId: o.instanceId } : {}),
  };
}
