export { pluginTargets } from '@trawl/plugin-client';
export { createEmbeddedInvoker, type EmbeddedInvoker } from './local-invoker.ts';
export { type AnalyzersAppDeps, buildAnalyzersApp, builtinPlugins } from './server.ts';
