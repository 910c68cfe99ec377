export {
  PLUGIN_ERROR_CODES,
  PluginCallError,
  type PluginFailure,
  type PluginKind,
} from './errors.ts';
export {
  createInProcessInvoker,
  type InProcessAnalyzer,
  type InProcessInvokerOptions,
  type InProcessProvider,
} from './in-process-invoker.ts';
export type { CallOptions, InProcessInvoker, PluginInvoker } from './invoker.ts';
export {
  Capabilities,
  createPluginClient,
  type HealthReport,
  type PluginClient,
  type PluginClientOptions,
  type PluginTarget,
  type PluginTargets,
} from './plugin-client.ts';
export { pluginTargets } from './plugin-targets.ts';
