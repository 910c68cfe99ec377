export { type AnalyzersAppDeps, buildAnalyzersApp, builtinPlugins } from './server.ts';
