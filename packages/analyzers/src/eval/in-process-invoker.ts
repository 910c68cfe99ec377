import type { AnalyzerAnswer, Email, ServiceConfigFile } from '@trawl/contracts';
import type { PluginDefinition } from '@trawl/plugin-sdk';
import type { EngineDeps } from '@trawl/workflow-engine';

const silentLog = { info() {}, warn() {} };

/**
 * Engine dependencies that call analyzer definitions directly, in this process (no HTTP). An
 * analyzer that is unknown or disabled in service.yaml fails its call, so the engine applies the
 * workflow's failure strategy (e.g. the llm stage is dropped when llm is not configured).
 */
export function inProcessDeps(
  registry: Record<string, PluginDefinition>,
  service: ServiceConfigFile,
): Pick<EngineDeps, 'callAnalyzer' | 'callProvider'> {
  const settings = new Map<string, unknown>();
  const disabledErrors = new Map<string, Error>();
  const settingsOf = (def: PluginDefinition) => {
    if (!settings.has(def.id))
      settings.set(def.id, def.settings.parse(service.analyzers[def.id]?.settings ?? {}));
    return settings.get(def.id);
  };
  return {
    async callAnalyzer(id: string, email: Email, o: { signal: AbortSignal }) {
      const def = registry[id];
      if (def?.kind !== 'analyzer') throw new Error(`analyzer ${id} is not available in-process`);
      if (service.analyzers[id]?.enabled === false) {
        // one Error per id: the llm stage asks for a disabled llm on every message
        let err = disabledErrors.get(id);
        if (!err) {
          err = Object.assign(new Error(`analyzer ${id} is disabled`), {
            code: 'TRAWL_ERR_PLUGIN_NOT_CONFIGURED',
          });
          disabledErrors.set(id, err);
        }
        throw err;
      }
      const answer = await def.analyze(email, {
        settings: settingsOf(def),
        // read only if the analyzer asks: the engine makes a call's signal on first read
        get signal() {
          return o.signal;
        },
        log: silentLog,
      });
      // the engine validates the answer (AnalyzerAnswer.safeParse) itself: no second parse here
      return answer as unknown as AnalyzerAnswer;
    },
    async callProvider(id, req, o) {
      const def = registry[id];
      if (def?.kind !== 'context_provider')
        throw new Error(`provider ${id} is not available in-process`);
      const r = await def.enrich(req, {
        settings: settingsOf(def),
        signal: o.signal,
        log: silentLog,
      });
      return { provider_id: id, ...r };
    },
  };
}
