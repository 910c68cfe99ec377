export { buildApp } from './app.ts';
export {
  connectHost,
  type GatewayDescription,
  type GatewayPorts,
  type GatewaySettings,
  gatewaySettings,
  type RunningGateway,
  startGateway,
} from './assembly.ts';
export { PASSWORD_MIN_CHARS, passwordProblems } from './auth/password-policy.ts';
export { hashPassword, verifyPassword } from './auth/passwords.ts';
export { bootstrapAdmin } from './bootstrap.ts';
export { followConfigReloads } from './config-events.ts';
export { compileAll, type FileLoaderOptions, loadSnapshot } from './config-loader.ts';
export {
  type Changed,
  type ConfigFiles,
  type ConfigSnapshot,
  type ConfigState,
  type ConfigStateDeps,
  createConfigState,
  RELOAD_LOCK_KEY,
  type ReloadOutcome,
} from './config-state.ts';
export {
  /** The gateway's CPU work off the HTTP thread (MIME parsing, message views): its benchmark. */
  createCpuWork,
} from './cpu-work/cpu-work.ts';
export type { GatewayDeps, PluginInvoker } from './deps.ts';
export {
  /** The stored JSON text of a submitted Email (its fast serializer): its benchmark. */
  serializeEmail,
} from './email-json.ts';
export { GATEWAY_ERRORS } from './errors.ts';
export {
  buildConfiguredGateway,
  type GatewayBackground,
  startGatewayBackground,
} from './gateway-process.ts';
export {
  createGatewayLogger,
  gatewayLogDestination,
  gatewayLoggerOptions,
  REDACT_PATHS,
} from './logger.ts';
export { defaultGatewayOptions, type GatewayOptions, gatewayOptionsFrom } from './options.ts';
export { hostAllowed } from './plugins/edge.ts';
export { createReleaseDelivery, type ReleaseDelivery } from './quarantine-release.ts';
