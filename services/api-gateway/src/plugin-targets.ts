import type { ServiceConfigFile } from '@trawl/contracts';

/** Plugin addresses from service.yaml: form B entries, then form A entries with a url. */
export function pluginTargets(svc: ServiceConfigFile): {
  analyzers: Record<string, { url: string }>;
  providers: Record<string, { url: string }>;
} {
  const analyzers: Record<string, { url: string }> = {};
  for (const [id, a] of Object.entries(svc.analyzers)) if (a.url) analyzers[id] = { url: a.url };
  for (const [id, p] of Object.entries(svc.plugins.analyzers)) analyzers[id] = { url: p.url };
  const providers: Record<string, { url: string }> = {};
  for (const [id, p] of Object.entries(svc.plugins.context_providers))
    providers[id] = { url: p.url };
  return { analyzers, providers };
}
