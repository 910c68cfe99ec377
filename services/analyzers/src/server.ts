import { builtinPlugins } from '@trawl/analyzers';
import type { ClassifierRepository, SenderHistoryRepository } from '@trawl/platform';
import { createPluginApp, type PluginAppOptions, type SettingsSource } from '@trawl/plugin-sdk';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';

export interface AnalyzersAppDeps {
  /** Sender history store for the `sender-history` provider. */
  senders?: SenderHistoryRepository | undefined;
  /** The learnt classifier's state for the `classifier` analyzer (it abstains without one). */
  classifier?: Pick<ClassifierRepository, 'totals' | 'counts'> | undefined;
  /** Raw settings per plugin id (from the gateway or config/service.yaml); defaults otherwise. */
  settings?: SettingsSource;
  internalApiKey?: string | undefined;
  logger?: FastifyBaseLogger;
  registry?: PluginAppOptions['registry'];
  /** Serve only these ids (default: every built-in). */
  only?: readonly string[];
}

/**
 * The analyzers service: every built-in at its base path `/<id>` (`/<id>/internal/analyze` or
 * `/<id>/internal/enrich`, `/<id>/health`, `/<id>/capabilities`), plus `/health` and `/metrics`.
 * Never listens.
 */
export function buildAnalyzersApp(deps: AnalyzersAppDeps = {}): FastifyInstance {
  const all = builtinPlugins(deps);
  const plugins = Object.values(all).filter((p) => !deps.only || deps.only.includes(p.id));
  return createPluginApp({
    plugins,
    serviceName: 'analyzers',
    ...(deps.internalApiKey ? { internalApiKey: deps.internalApiKey } : {}),
    ...(deps.settings ? { settingsSource: deps.settings } : {}),
    ...(deps.logger ? { logger: deps.logger } : {}),
    ...(deps.registry ? { registry: deps.registry } : {}),
  });
}
