/**
 * The analyzers service: every built-in analyzer and context provider at
 * `http://<host>:<TRAWL_ANALYZERS_PORT, default 8100>/<id>`. Each fetches its settings from the
 * gateway (`GET /api/v1/config/analyzers/<id>`); when the gateway is unreachable it falls back to
 * config/service.yaml read locally, then to its defaults.
 */
import { loadConfigOrExit, loadServiceFiles } from '@trawl/config';
import { credentialDeriver } from '@trawl/contracts';
import { createPgClient, createStore } from '@trawl/platform';
import { startPlugin } from '@trawl/plugin-sdk';
import { builtinPlugins } from './server.ts';

const config = loadConfigOrExit({
  needs: { postgres: true, rabbitmq: false, redis: false, secretKey: false },
});

/** Settings per id from the local service.yaml (form A, then form B entries). */
function localSettings(ids: string[]): Record<string, unknown> {
  try {
    const { service } = loadServiceFiles(config, { knownAnalyzers: ids, knownProviders: ids });
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

const sql = createPgClient({
  url: config.database.url,
  max: 4,
  applicationName: 'trawl-analyzers',
});
const store = createStore(sql);
const plugins = Object.values(
  builtinPlugins({ senders: store.senders, classifier: store.classifier }),
);
const platformKey = config.internalApiKey;
const derive = platformKey ? credentialDeriver(platformKey) : () => '';
const host = '0.0.0.0';

const running = await startPlugin(plugins, {
  host,
  port: config.analyzersPort,
  gatewayUrl: config.gateway.url,
  // The platform's own service: it holds the platform key and checks (and fetches settings with)
  // each built-in's own credential, the one the orchestrator sends that built-in.
  internalApiKey: platformKey ? (id) => derive({ kind: 'plugin', id }) : undefined,
  localSettings: localSettings(plugins.map((p) => p.id)),
  logLevel: config.pinoLevel,
  serviceName: 'analyzers',
  refreshSeconds: 30,
  handleSignals: false,
});

let stopping = false;
const stop = async (signal: string) => {
  if (stopping) return;
  stopping = true;
  running.app.log.info({ signal }, 'analyzers: closing');
  try {
    await running.close();
    await sql.close();
    process.exit(0);
  } catch {
    process.exit(1);
  }
};
process.once('SIGTERM', () => void stop('SIGTERM'));
process.once('SIGINT', () => void stop('SIGINT'));
