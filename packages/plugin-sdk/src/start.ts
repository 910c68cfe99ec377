import { errorText } from '@trawl/contracts';
import type { FastifyInstance } from 'fastify';
import pino from 'pino';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { createPluginApp, type PluginKey, pluginKeyOf } from './app.ts';
import type { PluginDefinition } from './define.ts';
import { type FetchedSettings, fetchSettings } from './settings-fetch.ts';
import { resolveSettings } from './settings-resolve.ts';

/** Options of startPlugin: the plugins, where to listen, credentials. */
export interface StartPluginOptions {
  /** Listen address (default 127.0.0.1: this machine only; 0.0.0.0 in a container). */
  host?: string;
  port: number;
  /** When set, each plugin fetches its settings from the gateway on start. */
  gatewayUrl?: string | undefined;
  /**
   * The plugin's own credential (`trawl credentials plugin <id>`): sent with its settings fetch,
   * required on its `/internal/*` routes. Never the platform's `INTERNAL_API_KEY`. A server of
   * several plugins gives a function answering each one's credential.
   */
  internalApiKey?: PluginKey | undefined;
  /** Settings used when no gateway is configured or it is unreachable (per plugin id). */
  localSettings?: Record<string, unknown>;
  retries?: number;
  backoffMs?: number;
  logLevel?: string;
  /**
   * Re-fetch the settings from the gateway this often (seconds), so that a configuration reload
   * reaches the plugin without a restart. 0 (default) fetches only at start.
   */
  refreshSeconds?: number;
  /** Name reported by `GET /health` when several plugins are served. */
  serviceName?: string;
  /** Install a SIGTERM/SIGINT handler that closes the server. Default true. */
  handleSignals?: boolean;
  /**
   * With handleSignals: the longest the close may take before the process exits with 1 (default
   * 30 000 ms), so that a request that never ends cannot keep a stopped plugin alive.
   */
  hardExitMs?: number;
}

/** A started plugin server: its URL and close(). */
export interface RunningPlugin {
  app: FastifyInstance;
  /** `http://host:port` the server listens on. */
  address: string;
  settings: Record<string, FetchedSettings>;
  close(): Promise<void>;
}

/**
 * Fetches each plugin's settings (gateway, else its defaults), builds the app, listens, and closes
 * on SIGTERM. Settings that do not match a plugin's schema stop the start with every problem listed.
 */
export async function startPlugin(
  defs: PluginDefinition | PluginDefinition[],
  opts: StartPluginOptions,
): Promise<RunningPlugin> {
  const plugins = Array.isArray(defs) ? defs : [defs];
  const logger = pino({
    level: opts.logLevel ?? 'info',
    redact: ['req.headers["x-internal-api-key"]', 'req.headers.authorization'],
  });
  const settings: Record<string, FetchedSettings> = {};
  await Promise.all(
    plugins.map(async (def) => {
      const local = opts.localSettings?.[def.id];
      if (opts.gatewayUrl) {
        const fetched = await fetchSettings({
          gatewayUrl: opts.gatewayUrl,
          internalApiKey: pluginKeyOf(opts.internalApiKey, def.id),
          id: def.id,
          def,
          log: logger,
          ...(opts.retries === undefined ? {} : { retries: opts.retries }),
          ...(opts.backoffMs === undefined ? {} : { backoffMs: opts.backoffMs }),
        });
        settings[def.id] =
          fetched.source === 'defaults' && local !== undefined
            ? { ...fetched, settings: resolveSettings(def, local) }
            : fetched;
      } else {
        settings[def.id] = {
          id: def.id,
          source: 'defaults',
          enabled: true,
          settings: resolveSettings(def, local ?? {}),
        };
      }
      if (!settings[def.id]?.enabled) {
        logger.warn(
          { plugin: def.id },
          'plugin is disabled in the configuration; serving it anyway',
        );
      }
    }),
  );
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const app = createPluginApp({
    plugins,
    internalApiKey: opts.internalApiKey,
    settingsSource: (id) => settings[id]?.settings,
    logger,
    registry,
    ...(opts.serviceName ? { serviceName: opts.serviceName } : {}),
  });
  let refresh: ReturnType<typeof setInterval> | undefined;
  const gatewayUrl = opts.gatewayUrl;
  if (gatewayUrl && (opts.refreshSeconds ?? 0) > 0) {
    let busy = false;
    refresh = setInterval(
      () => {
        if (busy) return;
        busy = true;
        Promise.all(
          plugins.map(async (def) => {
            const next = await fetchSettings({
              gatewayUrl,
              internalApiKey: pluginKeyOf(opts.internalApiKey, def.id),
              id: def.id,
              def,
              retries: 0,
            });
            const prev = settings[def.id];
            if (next.source !== 'gateway' || next.version === prev?.version) return;
            settings[def.id] = next;
            logger.info({ plugin: def.id, version: next.version }, 'settings changed');
          }),
        )
          .catch((e: unknown) => logger.warn({ err: errorText(e) }, 'settings refresh failed'))
          .finally(() => {
            busy = false;
          });
      },
      (opts.refreshSeconds ?? 0) * 1000,
    );
    refresh.unref();
  }
  const address = await app.listen({ host: opts.host ?? '127.0.0.1', port: opts.port });
  logger.info({ address, plugins: plugins.map((p) => p.id) }, 'plugin server listening');
  let closing: Promise<void> | undefined;
  const close = () => {
    if (refresh) clearInterval(refresh);
    closing ??= app.close().then(() => undefined);
    return closing;
  };
  if (opts.handleSignals ?? true) {
    let stopping = false;
    const onSignal = (sig: string) => {
      if (stopping) return;
      stopping = true;
      logger.info({ signal: sig }, 'closing');
      setTimeout(() => process.exit(1), opts.hardExitMs ?? 30_000).unref();
      close().then(
        () => process.exit(0),
        () => process.exit(1),
      );
    };
    process.once('SIGTERM', onSignal);
    process.once('SIGINT', onSignal);
  }
  return { app, address, settings, close };
}
