import { createHash } from 'node:crypto';
import {
  pluginDisabled,
  type ServiceConfigFile,
  type VerdictThresholds,
  type Workflow,
} from '@trawl/contracts';
import { type CompiledWorkflow, compileWorkflow } from './compile.ts';

/** The configuration a job runs with, fixed when the job starts. Immutable. */
export interface ConfigSnapshot {
  /** Version of the configuration files (hash of content). */
  version: string;
  workflows: ReadonlyMap<string, CompiledWorkflow>;
  thresholds: VerdictThresholds;
  /** Per-attempt timeout of analyzers without their own `timeout_ms`. */
  analyzerTimeoutMs: number;
  /** Seconds to cache an analyzer's answers; 0 = no caching. */
  analyzerCacheTtl(id: string): number;
  /** Version of one analyzer's configuration (part of its cache key). */
  analyzerVersion(id: string): string;
  /** False for an analyzer service.yaml switches off: the engine skips it as not configured. */
  analyzerConfigured(id: string): boolean;
  /**
   * The authserv-ids whose Authentication-Results are trusted (the headers analyzer's
   * `authserv_ids` setting): the evidence reads the results as the analyzer does.
   */
  authservIds?: readonly string[];
}

/** What the orchestrator reads its configuration from. */
export interface ConfigSource {
  /** The configuration current now; a job calls it once when it starts. */
  getConfig(): ConfigSnapshot;
  /** Re-reads the configuration (after `config.reloaded`); jobs that start afterwards use it. */
  reload?(): Promise<void>;
}

export interface SnapshotInput {
  version: string;
  service: ServiceConfigFile;
  workflows: Workflow[];
  /** From loadServiceFiles; computed here when absent. */
  analyzerVersions?: Record<string, string>;
}

function ttlOf(settings: Record<string, unknown> | undefined): number {
  const v = settings?.cache_ttl_seconds;
  return typeof v === 'number' && Number.isFinite(v) && v > 0 ? Math.floor(v) : 0;
}

/** Builds a snapshot from the loaded service files; compiles every workflow (throws when invalid). */
export function snapshotFromFiles(input: SnapshotInput): ConfigSnapshot {
  const { service } = input;
  const workflows = new Map<string, CompiledWorkflow>();
  for (const w of input.workflows) workflows.set(w.id, compileWorkflow(w));
  const versions = input.analyzerVersions ?? {};
  const ttls = new Map<string, number>();
  for (const [id, e] of Object.entries(service.analyzers)) ttls.set(id, ttlOf(e.settings));
  for (const [id, e] of Object.entries(service.plugins.analyzers)) {
    const t = ttlOf(e.settings);
    if (t > 0 || !ttls.has(id)) ttls.set(id, t);
  }
  const authserv = (service.analyzers.headers?.settings?.authserv_ids ??
    service.plugins.analyzers.headers?.settings?.authserv_ids) as unknown;
  const authservIds = Array.isArray(authserv)
    ? authserv.filter((x): x is string => typeof x === 'string').slice(0, 50)
    : [];
  return Object.freeze({
    version: input.version,
    authservIds,
    workflows,
    thresholds: service.verdict.thresholds,
    analyzerTimeoutMs: service.analyzer.timeout_ms,
    analyzerCacheTtl: (id: string) => ttls.get(id) ?? 0,
    analyzerConfigured: (id: string) => !pluginDisabled(service, id),
    analyzerVersion: (id: string) =>
      versions[id] ??
      createHash('sha256')
        .update(
          JSON.stringify([service.analyzers[id] ?? null, service.plugins.analyzers[id] ?? null]),
        )
        .digest('hex')
        .slice(0, 16),
  });
}

/**
 * A ConfigSource over a loader: `reload()` calls it (serialised) and swaps the snapshot when it
 * succeeds; a failed reload keeps the previous snapshot and rethrows.
 */
export function createConfigSource(
  initial: ConfigSnapshot,
  load?: () => Promise<ConfigSnapshot> | ConfigSnapshot,
): ConfigSource & { set(s: ConfigSnapshot): void } {
  let current = initial;
  let chain: Promise<void> = Promise.resolve();
  return {
    getConfig: () => current,
    set: (s) => {
      current = s;
    },
    ...(load
      ? {
          reload(): Promise<void> {
            const next = chain.then(async () => {
              current = await load();
            });
            chain = next.catch(() => undefined);
            return next;
          },
        }
      : {}),
  };
}
