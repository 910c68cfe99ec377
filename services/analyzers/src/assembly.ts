import {
  type AnalysisPool,
  builtinPlugins,
  createAnalysisPool,
  createListCache,
  pooledPlugins,
} from '@trawl/analyzers';
import { type AppConfig, loadServiceFiles } from '@trawl/config';
import { credentialDeriver, type Topology } from '@trawl/contracts';
import {
  type Assembled,
  assemble,
  type Broker,
  type Store,
  watchListChanges,
} from '@trawl/platform';
import { startPlugin } from '@trawl/plugin-sdk';

/** What the analyzers service is given: clients opened (and closed) by its caller. */
export interface AnalyzersPorts {
  store: Pick<Store, 'senders' | 'classifier' | 'lists'>;
  /** The `lists.changed` events that make the `lists` analyzer read the lists again. */
  broker: Broker;
  topology: Topology;
}

/** Everything the analyzers service is assembled with, compiled once by analyzersSettings. */
export interface AnalyzersSettings {
  /** The configuration files: service.yaml is the settings' fallback when the gateway is away. */
  files: Pick<AppConfig, 'configFile' | 'workflowsFile'>;
  listen: { host: string; port: number };
  gatewayUrl: string;
  internalApiKey: string | undefined;
  /** Worker threads for the offline analyzers (TRAWL_ANALYSIS_WORKERS; unset: 0, main thread). */
  workers: number;
  logLevel: string;
  /** How often each built-in fetches its settings again from the gateway. */
  refreshSeconds: number;
}

/** The options the assembly compiled: what a test reads. */
interface AnalyzersDescription {
  service: 'analyzers';
  workers: number;
  timeoutMs: number;
  refreshSeconds: number;
  stopOrder: string[];
}

export interface RunningAnalyzers {
  url: string;
  logger: { info(o: object, m?: string): void; error(o: object, m?: string): void };
  describe(): AnalyzersDescription;
}

/**
 * The analyzers service's defaults. Unset TRAWL_ANALYSIS_WORKERS: 0, on the main thread, as in
 * a scale-out orchestrator before issue 30 (measured 27% fewer msgs/s with the pool on a shared
 * 2-core machine, docs/benchmarks.md).
 */
export function analyzersSettings(cfg: AppConfig): AnalyzersSettings {
  return {
    files: { configFile: cfg.configFile, workflowsFile: cfg.workflowsFile },
    listen: { host: cfg.analyzersListenHost, port: cfg.analyzersPort },
    gatewayUrl: cfg.gateway.url,
    internalApiKey: cfg.internalApiKey,
    workers: cfg.analysisWorkers ?? 0,
    logLevel: cfg.pinoLevel,
    refreshSeconds: 30,
  };
}

/** Settings per id from the local service.yaml (form A, then form B entries), and its timeout. */
function localSettings(
  files: AnalyzersSettings['files'],
  ids: string[],
): { settings: Record<string, unknown>; timeoutMs: number } {
  try {
    const { service } = loadServiceFiles(files, { knownAnalyzers: ids, knownProviders: ids });
    const out: Record<string, unknown> = {};
    for (const id of ids) {
      const merged = {
        ...(service.analyzers[id]?.settings ?? {}),
        ...(service.plugins.analyzers[id]?.settings ?? {}),
        ...(service.plugins.context_providers[id]?.settings ?? {}),
      };
      if (Object.keys(merged).length > 0) out[id] = merged;
    }
    return { settings: out, timeoutMs: service.analyzer.timeout_ms };
  } catch (e) {
    process.stderr.write(
      `analyzers: config/service.yaml not usable as a local fallback (${(e as Error).message.split('\n')[0]})\n`,
    );
    return { settings: {}, timeoutMs: 30_000 };
  }
}

/**
 * The analyzers service, running (ADR 021): every built-in analyzer and context provider served
 * at `http://<host>:<port>/<id>`, the offline ones in worker threads when `workers` > 0, the
 * `lists` analyzer reading the lists again on `lists.changed`.
 */
export async function startAnalyzers(
  ports: AnalyzersPorts,
  settings: AnalyzersSettings,
): Promise<RunningAnalyzers & Assembled> {
  return assemble(undefined, async (shutdown) => {
    const lists = createListCache(ports.store.lists);
    const builtins = Object.values(
      builtinPlugins({ senders: ports.store.senders, classifier: ports.store.classifier, lists }),
    );
    const local = localSettings(
      settings.files,
      builtins.map((p) => p.id),
    );
    /** Where the pool reports a replaced worker: the server's logger once it is up. */
    let onReplace = (info: object): void => {
      process.stderr.write(`analyzers: analysis worker replaced ${JSON.stringify(info)}\n`);
    };
    let pool: AnalysisPool | undefined;
    if (settings.workers > 0) {
      const p = await createAnalysisPool({
        size: settings.workers,
        defaultTimeoutMs: local.timeoutMs,
        onReplace: (info) => onReplace(info),
      });
      pool = p;
      shutdown.add('analysis-pool', () => p.close());
    }
    const plugins = pool ? pooledPlugins(builtins, pool, { timeoutMs: local.timeoutMs }) : builtins;
    const platformKey = settings.internalApiKey;
    const derive = platformKey ? credentialDeriver(platformKey) : () => '';
    const running = await startPlugin(plugins, {
      host: settings.listen.host,
      port: settings.listen.port,
      gatewayUrl: settings.gatewayUrl,
      // The platform's own service: it holds the platform key and checks (and fetches settings
      // with) each built-in's own credential, the one the orchestrator sends that built-in.
      internalApiKey: platformKey ? (id) => derive({ kind: 'plugin', id }) : undefined,
      localSettings: local.settings,
      logLevel: settings.logLevel,
      serviceName: 'analyzers',
      refreshSeconds: settings.refreshSeconds,
      handleSignals: false,
    });
    shutdown.add('http', () => running.close());
    const log = running.app.log;
    onReplace = (info) => log.warn(info, 'analysis worker replaced');
    const watcher = await watchListChanges(
      ports.broker,
      ports.topology,
      `analyzers.${process.pid}`,
      () => lists.reload().catch((err: unknown) => log.warn({ err }, 'lists not read again')),
    );
    shutdown.add('lists-watch', () => watcher.cancel());
    return {
      url: running.address,
      logger: log,
      describe: () => ({
        service: 'analyzers',
        workers: pool ? settings.workers : 0,
        timeoutMs: local.timeoutMs,
        refreshSeconds: settings.refreshSeconds,
        stopOrder: shutdown.order(),
      }),
    };
  });
}
