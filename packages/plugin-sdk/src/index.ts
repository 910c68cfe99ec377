export {
  capabilitiesOf,
  /** Builds the HTTP app serving `plugins` (not listening). */
  createPluginApp,
  INTERNAL_KEY_HEADER,
  type PluginAppOptions,
  /** `GET /capabilities` of one plugin. */
  type PluginCapabilities,
  /** A plugin's credential, or one per plugin id (a server of several plugins). */
  type PluginKey,
  /** The credential of plugin `id` (undefined). */
  pluginKeyOf,
  /** Where a plugin's raw settings come from, per plugin id (parsed over the schema defaults). */
  type SettingsSource,
  TIMEOUT_HEADER,
} from './app.ts';
export {
  type AnalyzerDefinition,
  type AnalyzerSpec,
  defineAnalyzer,
  defineContextProvider,
  /** What a plugin's code receives besides its input. */
  type PluginContext,
  type PluginDefinition,
  type ProviderDefinition,
  type ProviderSpec,
} from './define.ts';
export {
  /** Error codes of */
  PLUGIN_ERROR_CODES,
  PluginAbortedError,
  PluginInvalidAnswerError,
  PluginTimeoutError,
} from './errors.ts';
export {
  type InvokeOptions,
  /** Runs an analyzer in-process. */
  invokeAnalyzer,
  /** Runs a context provider in-process. */
  invokeProvider,
  type PluginLog,
} from './invoke.ts';
export {
  /** Constant-time comparison of a presented key with the expected one (hashes equalise… */
  keyMatches,
} from './keys.ts';
export {
  /** The SDK's metrics, registered on `registry` (a fresh one when absent). */
  createPluginMetrics,
  type PluginMetrics,
} from './metrics.ts';
export {
  /** Sends RFC 9457 problem details (`application/problem+json`). */
  sendProblem,
} from './problem.ts';
export {
  type FetchedSettings,
  type FetchSettingsOptions,
  /** GET `<gateway>/api/v1/config/analyzers/<id>` with `X-Internal-API-Key`, retrying with… */
  fetchSettings,
  type SettingsLogger,
} from './settings-fetch.ts';
export {
  /** Parses raw settings (from config/service.yaml, the gateway, or nothing) with the… */
  resolveSettings,
} from './settings-resolve.ts';
export {
  type RunningPlugin,
  type StartPluginOptions,
  /** Fetches each plugin's settings (gateway, else its defaults), builds the app, listens,… */
  startPlugin,
} from './start.ts';
