export { buildRetrieverApp, type RetrieverAppDeps, SERVICE_NAME } from './app.ts';
export { createImapRetriever, type ImapRetrieverService } from './create-retriever.ts';
export { IMAP_ERRORS } from './errors.ts';
export {
  type AckResult,
  ImapRetriever,
  type ImapRetrieverOptions,
  KEYWORDS,
  type VerdictOutcome,
} from './imap-retriever.ts';
export { type Folders, ImapSession, type SessionOptions } from './imap-session.ts';
export { formatRef, type MessageRef, parseRef } from './message-ref.ts';
export { createImapMetrics, type ImapMetrics } from './metrics.ts';
export {
  IMAP_ENV,
  IMAP_SECRET_FILES,
  ImapSettings,
  type ImapSettingsInput,
  imapOAuthGrant,
  imapSettingsFromEnv,
} from './settings.ts';
export {
  type RetrieverImapPorts,
  type RetrieverImapSettings,
  type RunningRetrieverImap,
  retrieverImapSettings,
  startRetrieverImap,
} from './start.ts';
