import { join } from 'node:path';
import type { ConfigSource } from '@trawl/analyzer-orchestrator';
import { builtinPlugins, createEmbeddedInvoker, type EmbeddedInvoker } from '@trawl/analyzers';
import { createConfigState, loadSnapshot } from '@trawl/api-gateway';
import { diffFiles, findRepoRoot } from '@trawl/config';
import type { Topology } from '@trawl/contracts';
import type { Broker, Store } from '@trawl/platform';
import type { CompiledWorkflow } from '@trawl/workflow-engine';
import { configSourceFrom } from '../config-source.ts';

/** The shipped configuration as a stack of tests runs it: its state, its source, the built-ins. */
export interface ShippedConfig {
  /** The gateway's configuration state (reloads, versions recorded in the store). */
  configState: ReturnType<typeof createConfigState<CompiledWorkflow>>;
  /** What an orchestrator reads its configuration from (follows `configState`). */
  config: ConfigSource;
  /** The built-in analyzers in process, authenticated with `internalApiKey`. */
  invoker: EmbeddedInvoker;
}

/**
 * The shipped default configuration (config/defaults) over the built-in analyzers, for stacks of
 * services that tests and benches start on the test servers: the gateway's configuration state
 * on `store` and `broker` (the current version recorded), an orchestrator's configuration source
 * following it, and the embedded invoker of the built-ins. Close `invoker` when done.
 */
export async function shippedConfig(o: {
  store: Store;
  broker: Broker;
  topology: Topology;
  internalApiKey: string;
}): Promise<ShippedConfig> {
  const root = findRepoRoot();
  const files = {
    configFile: join(root, 'config', 'defaults', 'service.yaml'),
    workflowsFile: join(root, 'config', 'defaults', 'workflows.yaml'),
  };
  const builtins = builtinPlugins({ senders: o.store.senders });
  const idsOf = (kind: string) =>
    Object.values(builtins)
      .filter((p) => p.kind === kind)
      .map((p) => p.id);
  const loadOpts = { knownAnalyzers: idsOf('analyzer'), knownProviders: idsOf('context_provider') };
  const initial = loadSnapshot(files, loadOpts);
  const invoker = createEmbeddedInvoker({
    builtins,
    service: () => initial.files.service,
    internalApiKey: o.internalApiKey,
  });
  const configState = createConfigState<CompiledWorkflow>({
    initial,
    load: () => loadSnapshot(files, loadOpts),
    diff: diffFiles,
    store: o.store,
    broker: o.broker,
    topology: o.topology,
  });
  await configState.recordCurrent(null);
  return {
    configState,
    config: configSourceFrom(() => configState.current().files),
    invoker,
  };
}
