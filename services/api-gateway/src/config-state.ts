import type { LoadedFiles } from '@trawl/config';
import type { ReloadResponse, Topology } from '@trawl/contracts';
import type { Broker, Store } from '@trawl/platform';

/** The loaded service files (LoadedFiles of @trawl/config). */
export type ConfigFiles = LoadedFiles;

/** Loaded files plus their compiled workflows (by id). */
export interface ConfigSnapshot<C = unknown> {
  files: ConfigFiles;
  compiled: ReadonlyMap<string, C>;
  /** Analyzer and provider ids workflows may reference (for POST /workflows/validate). */
  known?: { analyzers: readonly string[]; providers: readonly string[] };
}

/** What a reload changed (ReloadResponse). */
export type Changed = ReloadResponse['changed'];

/** A reload's answer with the new snapshot, and whether the version changed. */
export interface ReloadOutcome<C = unknown> extends ReloadResponse {
  snapshot: ConfigSnapshot<C>;
  /** true when the cluster's configuration version changed with this reload. */
  versionChanged: boolean;
}

/** The gateway's current configuration, reloaded across replicas under one lock. */
export interface ConfigState<C = unknown> {
  current(): ConfigSnapshot<C>;
  /**
   * Loads and validates both files completely (throws, keeping the current snapshot, when invalid),
   * serialised across replicas by a database advisory lock. The version changes only when the
   * canonical content changed compared with the latest recorded version.
   */
  reload(actor: string | null): Promise<ReloadOutcome<C>>;
  /** Records the current version in config_versions (idempotent). Call once at start-up. */
  recordCurrent(actor: string | null): Promise<void>;
}

/** Advisory lock key of configuration reloads ('trwl'). */
export const RELOAD_LOCK_KEY = 0x7472776c;

/** What the configuration state needs: the first snapshot, how to load again, its store. */
export interface ConfigStateDeps<C> {
  initial: ConfigSnapshot<C>;
  /** Reads and validates the files again; throws (a BadInputError with problems) when invalid. */
  load: () => Promise<ConfigSnapshot<C>> | ConfigSnapshot<C>;
  diff: (a: ConfigFiles, b: ConfigFiles) => Changed;
  store: Store;
  broker?: Broker | undefined;
  topology?: Topology | undefined;
  clock?: () => Date;
  onPublishError?: (err: unknown) => void;
  /** Called after a new snapshot is swapped in (e.g. to point the plugin client at new URLs). */
  onSwap?: (next: ConfigSnapshot<C>) => void;
}

const NO_CHANGE: Changed = { platform: false, workflows: false, analyzers: [] };

/** Builds the gateway's configuration state. */
export function createConfigState<C>(deps: ConfigStateDeps<C>): ConfigState<C> {
  let snapshot = deps.initial;
  const now = deps.clock ?? (() => new Date());
  // In-process serialisation (the advisory lock serialises across replicas; PGlite shares one
  // session, so an in-process queue keeps the semantics there too).
  let queue: Promise<unknown> = Promise.resolve();

  async function doReload(actor: string | null): Promise<ReloadOutcome<C>> {
    return deps.store.sql.withAdvisoryLock(RELOAD_LOCK_KEY, async () => {
      const next = await deps.load();
      const old = snapshot;
      const latest = await deps.store.configVersions.latest();
      const baseline = latest?.version ?? old.files.version;
      const versionChanged = baseline !== next.files.version;
      if (versionChanged) {
        await deps.store.configVersions.record({
          version: next.files.version,
          service_yaml: next.files.text.service,
          workflows_yaml: next.files.text.workflows,
          actor,
        });
      }
      snapshot = next;
      deps.onSwap?.(next);
      if (versionChanged && deps.broker && deps.topology) {
        try {
          await deps.broker.publish(
            deps.topology.exchanges.control,
            deps.topology.routingKeys.configReloaded,
            { old_version: baseline, new_version: next.files.version, at: now().toISOString() },
          );
        } catch (err) {
          deps.onPublishError?.(err);
        }
      }
      const changed = versionChanged ? deps.diff(old.files, next.files) : NO_CHANGE;
      return {
        old_version: baseline,
        new_version: next.files.version,
        changed: { ...changed, analyzers: [...changed.analyzers] },
        snapshot: next,
        versionChanged,
      };
    });
  }

  return {
    current: () => snapshot,
    reload(actor) {
      const run = queue.then(
        () => doReload(actor),
        () => doReload(actor),
      );
      queue = run.catch(() => undefined);
      return run;
    },
    async recordCurrent(actor) {
      await deps.store.configVersions.record({
        version: snapshot.files.version,
        service_yaml: snapshot.files.text.service,
        workflows_yaml: snapshot.files.text.workflows,
        actor,
      });
    },
  };
}
