import { createBuiltinInvoker, type EmbeddedInvoker } from '@trawl/analyzers';
import { type LoadedFiles, loadServiceFiles } from '@trawl/config';
import type { Shutdown, Store } from '@trawl/platform';
import {
  type ConfigSource,
  checkCondition,
  checkConditionReferences,
  createConfigSource,
  snapshotFromFiles,
} from '@trawl/workflow-engine';
import type { Logger } from 'pino';
import type { OrchestratorSettings } from './settings.ts';

/** What runs a job's workflow: the configuration, compiled, and the analyzers it calls. */
export interface AnalysisSetup {
  /** The configuration files, compiled; read again on `config.reloaded`. */
  config: ConfigSource;
  /** The workflow a message is analysed with when none is named (service.yaml). */
  defaultWorkflowId(): string;
  invoker: EmbeddedInvoker;
  /** The allow and block lists of the in-process `lists` analyzer, when it is in this process. */
  lists: { reload(): Promise<void> } | undefined;
  /** The analyzer and provider ids built into this process (none when called over HTTP). */
  builtins: { analyzers: string[]; providers: string[] };
  /** Worker threads of the analysis pool (0: none). */
  workers: number;
  pooledMinChars: number;
  /** service.yaml analyzer.timeout_ms: the pool's hard stop of a call without its own. */
  defaultTimeoutMs: number;
}

/**
 * The analysis an orchestrator runs (ADR 021): the configuration files compiled (and again on a
 * reload), the built-in analyzers through `createBuiltinInvoker` (in this process with the
 * analysis pool, or over HTTP). The orchestrator's assembly and the milter's inline analysis
 * (ADR 013 section 5) both call it, so a message is analysed by the same code either way. The
 * pool and the invoker are registered on `shutdown`.
 */
export async function startAnalysis(
  store: Pick<Store, 'senders' | 'classifier' | 'lists'>,
  logger: Logger,
  settings: Pick<OrchestratorSettings, 'files' | 'analysis'>,
  shutdown: Shutdown,
): Promise<AnalysisSetup> {
  const load = (): LoadedFiles =>
    loadServiceFiles(settings.files, {
      checkCondition,
      checkReferences: checkConditionReferences,
    });
  const compile = (f: LoadedFiles) =>
    snapshotFromFiles({
      version: f.version,
      service: f.service,
      workflows: f.workflows,
      analyzerVersions: f.analyzerVersions,
    });
  let files = load();
  const initial = compile(files);
  const timeoutMs = files.service.analyzer.timeout_ms;
  const a = settings.analysis;

  const built = await createBuiltinInvoker(
    store,
    () => files.service,
    { ...a, timeoutMs },
    (info) => logger.warn(info, 'analysis worker replaced'),
  );
  const { pool, lists } = built;
  if (pool) shutdown.add('analysis-pool', () => pool.close());
  const inv = built.invoker;
  shutdown.add('invoker', () => inv.close());
  const config = createConfigSource(initial, () => {
    const next = load();
    const snapshot = compile(next);
    files = next;
    inv.setService(next.service);
    return snapshot;
  });
  return {
    config,
    defaultWorkflowId: () => files.service.workflow.default_workflow_id,
    invoker: inv,
    lists,
    builtins: built.ids,
    workers: pool ? a.workers : 0,
    pooledMinChars: pool ? a.pooledMinChars : 0,
    defaultTimeoutMs: timeoutMs,
  };
}
