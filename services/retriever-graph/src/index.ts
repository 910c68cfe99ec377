export { buildApp, type GraphAppDeps, SERVICE_NAME } from './app.ts';
export { GRAPH_ERRORS } from './errors.ts';
export { GraphMailbox, type GraphMailboxOptions } from './graph-mailbox.ts';
export {
  GRAPH_ENV,
  GRAPH_SECRET_FILES,
  GraphSettings,
  type GraphSettingsInput,
  graphSettingsFromEnv,
  type RetrieverGraphSettings,
  retrieverGraphSettings,
} from './settings.ts';
export {
  GRAPH_DEFAULT_RULES,
  graphGrant,
  type RetrieverGraphPorts,
  type RetrieverGraphService,
  startRetrieverGraph,
} from './start.ts';
