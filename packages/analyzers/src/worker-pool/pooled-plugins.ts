import { type CallOptions, PluginCallError } from '@trawl/plugin-client';
import { type PluginDefinition, PluginTimeoutError } from '@trawl/plugin-sdk';
import type { AnalysisPool } from './analysis-pool.ts';

/**
 * The analyzers service's definitions with the analyzers the pool runs moved into its worker
 * threads (issue 15): the HTTP thread only parses the request, posts the call and writes the
 * answer, and a synchronous analyzer still running at `timeoutMs` has its worker terminated and
 * answers 504 TRAWL_ERR_PLUGIN_TIMEOUT, as a remote plugin that overran would time out. The others
 * (providers, and the analyzers that wait on I/O) are served as they are.
 *
 * Settings: the server gives each call the plugin's current (parsed) settings; when the object of
 * an id changes (a refresh from the gateway), the pool's workers get the new ones. Parsing parsed
 * settings again is what the SDK itself does on every call (resolveSettings), so the workers see
 * what the main thread would.
 */
export function pooledPlugins(
  plugins: PluginDefinition[],
  pool: AnalysisPool,
  opts: { timeoutMs: number },
): PluginDefinition[] {
  const current: Record<string, unknown> = {};
  const callOptions: CallOptions = { timeoutMs: opts.timeoutMs };
  return plugins.map((def): PluginDefinition => {
    if (def.kind !== 'analyzer' || !pool.ids.has(def.id)) return def;
    const id = def.id;
    return {
      ...def,
      async analyze(email, ctx) {
        if (current[id] !== ctx.settings) {
          current[id] = ctx.settings;
          pool.configure({ ...current });
        }
        try {
          // no signal: a call the client gave up on still ends at its deadline in the worker,
          // and the server stops waiting for it at once (the SDK races the request's signal)
          return await pool.analyze(id, email, callOptions);
        } catch (e) {
          if (e instanceof PluginCallError && e.timedOut) {
            throw new PluginTimeoutError(id, opts.timeoutMs);
          }
          throw e;
        }
      },
    };
  });
}
