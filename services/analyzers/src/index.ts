export { createEmbeddedInvoker, type EmbeddedInvoker, pluginTargets } from './local-invoker.ts';
export { type AnalyzersAppDeps, buildAnalyzersApp, builtinPlugins } from './server.ts';
