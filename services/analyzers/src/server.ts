import type { ClassifierRepository, SenderHistoryRepository } from '@trawl/platform';
import {
  createPluginApp,
  type PluginAppOptions,
  type PluginDefinition,
  type SettingsSource,
} from '@trawl/plugin-sdk';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import { builtinAnalyzers } from './registry.ts';
import { extraPlugins } from './registry-extra.ts';

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

/** Every built-in analyzer and context provider, by id. */
export function builtinPlugins(
  deps: Pick<AnalyzersAppDeps, 'senders' | 'classifier'> = {},
): Record<string, PluginDefinition> {
  return {
    ...builtinAnalyzers,
    ...extraPlugins({ senders: deps.senders, classifier: deps.classifier }),
  };
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
