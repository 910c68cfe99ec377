/**
 * The analyzers service: every built-in analyzer and context provider at
 * `http://<host>:<TRAWL_ANALYZERS_PORT, default 8100>/<id>`. Each fetches its settings from the
 * gateway (`GET /api/v1/config/analyzers/<id>`); when the gateway is unreachable it falls back to
 * config/service.yaml read locally, then to its defaults.
 *
 * With TRAWL_ANALYSIS_WORKERS (`auto` or a count) the offline analyzers run in a pool of worker
 * threads, so that the thread answering HTTP never runs analysis and a call still running at the
 * service's `analyzer.timeout_ms` is stopped and answers a timeout (issue 15). Unset: 0, on the main
 * thread, as in a scale-out orchestrator: measured 27% fewer msgs/s with the pool on a shared 2-core
 * machine (docs/benchmarks.md).
 */
import {
  type AnalysisPool,
  builtinPlugins,
  createAnalysisPool,
  createListCache,
  pooledPlugins,
} from '@trawl/analyzers';
import { loadConfigOrExit, loadServiceFiles } from '@trawl/config';
import { credentialDeriver, topology } from '@trawl/contracts';
import {
  createPgClient,
  createServiceBroker,
  createStore,
  declareTopology,
  type RunningService,
  runService,
  watchListChanges,
} from '@trawl/platform';
import { startPlugin } from '@trawl/plugin-sdk';

const config = loadConfigOrExit({
  // RabbitMQ: the `lists.changed` events that make the `lists` analyzer read the lists again
  needs: { postgres: true, rabbitmq: true, redis: false, secretKey: false },
});

/** The analyzer timeout of service.yaml when it can be read (the pool's hard stop). */
let serviceTimeoutMs = 30_000;

/** Settings per id from the local service.yaml (form A, then form B entries). */
function localSettings(ids: string[]): Record<string, unknown> {
  try {
    const { service } = loadServiceFiles(config, { knownAnalyzers: ids, knownProviders: ids });
    serviceTimeoutMs = service.analyzer.timeout_ms;
    const out: Record<string, unknown> = {};
    for (const id of ids) {
      const merged = {
        ...(service.analyzers[id]?.settings ?? {}),
        ...(service.plugins.analyzers[id]?.settings ?? {}),
        ...(service.plugins.context_providers[id]?.settings ?? {}),
      };
      if (Object.keys(merged).length > 0) out[id] = merged;
    }
    return out;
  } catch (e) {
    process.stderr.write(
      `analyzers: config/service.yaml not usable as a local fallback (${(e as Error).message.split('\n')[0]})\n`,
    );
    return {};
  }
}

async function main(): Promise<RunningService> {
  const sql = createPgClient({
    url: config.database.url,
    max: 4,
    applicationName: 'trawl-analyzers',
  });
  const store = createStore(sql);
  const lists = createListCache(store.lists);
  const builtins = Object.values(
    builtinPlugins({ senders: store.senders, classifier: store.classifier, lists }),
  );
  const local = localSettings(builtins.map((p) => p.id));
  const workers = config.analysisWorkers ?? 0;
  /** Where the pool reports a replaced worker: the server's logger once it is up. */
  let onReplace = (info: object): void => {
    process.stderr.write(`analyzers: analysis worker replaced ${JSON.stringify(info)}\n`);
  };
  let pool: AnalysisPool | undefined;
  if (workers > 0) {
    pool = await createAnalysisPool({
      size: workers,
      defaultTimeoutMs: serviceTimeoutMs,
      onReplace: (info) => onReplace(info),
    });
  }
  const plugins = pool ? pooledPlugins(builtins, pool, { timeoutMs: serviceTimeoutMs }) : builtins;
  const platformKey = config.internalApiKey;
  const derive = platformKey ? credentialDeriver(platformKey) : () => '';
  const host = config.analyzersListenHost;

  const running = await startPlugin(plugins, {
    host,
    port: config.analyzersPort,
    gatewayUrl: config.gateway.url,
    // The platform's own service: it holds the platform key and checks (and fetches settings with)
    // each built-in's own credential, the one the orchestrator sends that built-in.
    internalApiKey: platformKey ? (id) => derive({ kind: 'plugin', id }) : undefined,
    localSettings: local,
    logLevel: config.pinoLevel,
    serviceName: 'analyzers',
    refreshSeconds: 30,
    handleSignals: false,
  });

  onReplace = (info) => running.app.log.warn(info, 'analysis worker replaced');
  const broker = createServiceBroker(config, 'analyzers', running.app.log);
  const t = topology(config.brokerPrefix);
  await declareTopology(broker, t);
  await watchListChanges(broker, t, `analyzers.${process.pid}`, () =>
    lists.reload().catch((err: unknown) => running.app.log.warn({ err }, 'lists not read again')),
  );
  running.app.log.info(
    { analysis_workers: pool ? workers : 0, timeout_ms: serviceTimeoutMs },
    'analyzers: offline analyzers in worker threads',
  );

  return {
    logger: running.app.log,
    async stop() {
      await running.close();
      await broker.close();
      await pool?.close();
      await sql.close();
    },
  };
}

void runService('analyzers', main);
