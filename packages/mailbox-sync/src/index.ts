export { ApiRetriever, type ApiRetrieverOptions, type MailboxHealth } from './api-retriever.ts';
export { type ApiRetrieverAppDeps, buildApiRetrieverApp } from './app.ts';
export {
  type ApiRetrieverPorts,
  type ApiRetrieverService,
  apiRetrieverMain,
} from './main.ts';
export { type ApiRetrieverMetrics, createApiRetrieverMetrics } from './metrics.ts';
export { type ApiRetrieverAssembly, runApiRetriever, serveApiRetriever } from './serve.ts';
export { apiRetrieverFields, mailboxList } from './settings.ts';
export {
  type ChangePage,
  CursorExpiredError,
  MailboxAccessError,
  type MailboxSource,
  MessageGoneError,
  UnknownIdError,
} from './source.ts';
export { cacheSyncStore, memorySyncStore, type SyncStateStore } from './state-store.ts';
export { SyncLedger } from './sync-ledger.ts';
export {
  ruleFor,
  ruleTargets,
  VERDICT_RULE_KEYS,
  VerdictRule,
  VerdictRules,
  VerdictRulesJson,
} from './verdict-rules.ts';
