export { buildApp, type GmailAppDeps, SERVICE_NAME } from './app.ts';
export { GMAIL_ERRORS } from './errors.ts';
export { GmailMailbox, type GmailMailboxOptions, gmailThrottled } from './gmail-mailbox.ts';
export {
  GMAIL_ENV,
  GMAIL_SECRET_FILES,
  GmailSettings,
  type GmailSettingsInput,
  gmailSettingsFromEnv,
  type RetrieverGmailSettings,
  retrieverGmailSettings,
} from './settings.ts';
export {
  GMAIL_DEFAULT_RULES,
  gmailGrant,
  type RetrieverGmailPorts,
  type RetrieverGmailService,
  startRetrieverGmail,
} from './start.ts';
