import {
  type ConfigSource,
  type ConfigSnapshot as OrchestratorSnapshot,
  snapshotFromFiles,
} from '@trawl/analyzer-orchestrator';
import type { LoadedFiles } from '@trawl/config';

/**
 * The orchestrator's configuration in embedded mode: whatever the gateway's configuration state
 * holds now (a reload through the API swaps it for jobs that start afterwards). Compiled once per
 * configuration version.
 */
export function configSourceFrom(current: () => LoadedFiles): ConfigSource {
  let cached: { version: string; snapshot: OrchestratorSnapshot } | undefined;
  return {
    getConfig() {
      const files = current();
      if (cached?.version !== files.version) {
        cached = {
          version: files.version,
          snapshot: snapshotFromFiles({
            version: files.version,
            service: files.service,
            workflows: files.workflows,
            analyzerVersions: files.analyzerVersions,
          }),
        };
      }
      return cached.snapshot;
    },
    // The gateway's state is the source: nothing to re-read on config.reloaded.
    async reload() {},
  };
}
