import type { ServiceConfigFile } from '@trawl/contracts';
import {
  createInProcessInvoker,
  createPluginClient,
  PluginCallError,
  type PluginClient,
  type PluginInvoker,
  pluginTargets,
} from '@trawl/plugin-client';
import { invokeAnalyzer, invokeProvider, type PluginDefinition } from '@trawl/plugin-sdk';

/** Settings of a built-in: form A settings, overridden by a form B entry's settings. */
function settingsOf(svc: ServiceConfigFile, id: string): unknown {
  const a = svc.analyzers[id]?.settings;
  const b = svc.plugins.analyzers[id]?.settings ?? svc.plugins.context_providers[id]?.settings;
  if (a && b) return { ...a, ...b };
  return b ?? a ?? {};
}

function disabled(svc: ServiceConfigFile, id: string): boolean {
  return (
    svc.analyzers[id]?.enabled === false ||
    svc.plugins.analyzers[id]?.enabled === false ||
    svc.plugins.context_providers[id]?.enabled === false
  );
}

export interface EmbeddedInvoker extends PluginInvoker {
  health(id: string): Promise<{ ok: boolean; latency_ms: number; error?: string }>;
  /** Points the HTTP side at the plugin addresses of a new service.yaml (after a reload). */
  setService(svc: ServiceConfigFile): void;
  close(): Promise<void>;
}

/**
 * The local invoker (embedded mode, and scale-out orchestrators with TRAWL_BUILTINS_IN_PROCESS): built-in analyzers and providers run as functions in this process (no
 * HTTP hop) with the settings of the current service.yaml; a plugin registered with a url (form B,
 * or form A with `url`) is called over HTTP, even when it has a built-in's id.
 */
export function createEmbeddedInvoker(opts: {
  builtins: Record<string, PluginDefinition>;
  service: () => ServiceConfigFile;
  internalApiKey: string | undefined;
}): EmbeddedInvoker {
  let targets = pluginTargets(opts.service());
  const http: PluginClient = createPluginClient({
    ...targets,
    internalApiKey: opts.internalApiKey,
  });
  const analyzers: Record<
    string,
    (e: Parameters<typeof invokeAnalyzer>[1], c: { signal: AbortSignal }) => Promise<unknown>
  > = {};
  const providers: Record<
    string,
    (r: Parameters<typeof invokeProvider>[1], c: { signal: AbortSignal }) => Promise<unknown>
  > = {};
  const refuseDisabled = (kind: 'analyzer' | 'context_provider', id: string) => {
    if (disabled(opts.service(), id))
      throw new PluginCallError('unknown', kind, id, `${kind} ${id} is disabled in service.yaml`);
  };
  for (const def of Object.values(opts.builtins)) {
    if (def.kind === 'analyzer') {
      analyzers[def.id] = (email, { signal }) => {
        refuseDisabled('analyzer', def.id);
        return invokeAnalyzer(def, email, settingsOf(opts.service(), def.id), signal);
      };
    } else {
      providers[def.id] = (req, { signal }) => {
        refuseDisabled('context_provider', def.id);
        return invokeProvider(def, req, settingsOf(opts.service(), def.id), signal);
      };
    }
  }
  const local = createInProcessInvoker({
    analyzers: analyzers as never,
    providers: providers as never,
    fallback: http,
  });
  return {
    analyze(id, email, o) {
      return targets.analyzers[id] ? http.analyze(id, email, o) : local.analyze(id, email, o);
    },
    enrich(id, req, o) {
      return targets.providers[id] ? http.enrich(id, req, o) : local.enrich(id, req, o);
    },
    async health(id) {
      if (targets.analyzers[id] || targets.providers[id]) return http.health(id);
      if (!opts.builtins[id]) return { ok: false, latency_ms: 0, error: `${id} is not configured` };
      if (disabled(opts.service(), id))
        return { ok: false, latency_ms: 0, error: `${id} is disabled` };
      return { ok: true, latency_ms: 0 };
    },
    setService(svc) {
      targets = pluginTargets(svc);
      http.setTargets(targets);
    },
    close: () => http.close(),
  };
}
