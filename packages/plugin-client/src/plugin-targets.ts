import type { ServiceConfigFile } from '@trawl/contracts';
import type { PluginTargets } from './plugin-client.ts';

/**
 * Plugin addresses from service.yaml: form B entries (their url), form A entries with a url, and
 * enabled form A entries without one at `<builtinBaseUrl>/<id>` (the built-in analyzers service).
 * Disabled entries are left out (a workflow naming one fails that analyzer's call).
 */
export function pluginTargets(
  svc: ServiceConfigFile,
  builtinBaseUrl?: string,
): Required<PluginTargets> {
  const analyzers: Record<string, { url: string }> = {};
  for (const [id, a] of Object.entries(svc.analyzers)) {
    if (!a.enabled) continue;
    if (a.url) analyzers[id] = { url: a.url };
    else if (builtinBaseUrl) analyzers[id] = { url: `${builtinBaseUrl.replace(/\/+$/, '')}/${id}` };
  }
  for (const [id, p] of Object.entries(svc.plugins.analyzers)) {
    if (p.enabled) analyzers[id] = { url: p.url };
  }
  const providers: Record<string, { url: string }> = {};
  for (const [id, p] of Object.entries(svc.plugins.context_providers)) {
    if (p.enabled) providers[id] = { url: p.url };
  }
  return { analyzers, providers };
}
