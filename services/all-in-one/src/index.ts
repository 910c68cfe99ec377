export { createEmbeddedInvoker, type EmbeddedInvoker, pluginTargets } from '@trawl/analyzers';
export { formatBanner } from './banner.ts';
export { configSourceFrom } from './config-source.ts';
export { connectHost, type Embedded, type EmbeddedOptions, startEmbedded } from './embedded.ts';
export {
  type FirstStartEnv,
  randomPassword,
  randomSecret,
  writeFirstStartEnv,
} from './env-file.ts';
export { ALL_IN_ONE_ERRORS } from './errors.ts';
export { EMBEDDED_NODE_FLAGS } from './node-flags.ts';
export { requeueUnfinished } from './requeue.ts';
