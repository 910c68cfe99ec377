export { buildSmtpRetrieverApp, SERVICE_NAME, type SmtpRetrieverAppDeps } from './app.ts';
export { createSmtpFilter, type SmtpFilterService } from './create-filter-service.ts';
export { SMTP_ERRORS } from './errors.ts';
export {
  type Answer,
  createFilter,
  type Filter,
  type InlineVerdicts,
  messageRef,
} from './filter.ts';
export {
  fieldName,
  type HeaderBlock,
  type HeaderField,
  joinLines,
  nextLineEnd,
  oneLineValue,
  splitHeader,
  valueLines,
} from './header-lines.ts';
export { editHeaders, type HeaderEdit } from './headers.ts';
export { createIngestClient, type IngestClient, type Submission } from './ingest-client.ts';
export { type InlineAnalyse, inlineVerdicts } from './inline-verdicts.ts';
export { createSmtpMetrics, type SmtpMetrics } from './metrics.ts';
export { type Decoded, encodePacket, type Packet, PacketDecoder } from './milter/codec.ts';
export type { MilterListener } from './milter/listener.ts';
export { milterOutcome } from './milter/outcome.ts';
export { ACTION, CMD, REPLY, STEP } from './milter/protocol.ts';
export {
  type MilterJudge,
  type MilterMessage,
  type MilterModification,
  type MilterOutcome,
  MilterSession,
} from './milter/session.ts';
export { type MilterSettings, startMilter } from './milter/start-milter.ts';
export { type Decision, decide, type Knowledge, scoreOf, tagHeaders } from './policy.ts';
export { createReinjector, ReinjectError, type Reinjector } from './reinjector.ts';
export {
  DEFAULT_POLICY,
  effectiveAction,
  FILTER_ACTIONS,
  FilterAction,
  FilterMode,
  SMTP_ENV,
  SmtpSettings,
  type SmtpSettingsInput,
  smtpSettingsFromEnv,
} from './settings.ts';
export { createSmtpListener, type SmtpListener } from './smtp-listener.ts';
export {
  analysesInline,
  type RetrieverSmtpPorts,
  type RetrieverSmtpSettings,
  type RunningRetrieverSmtp,
  retrieverSmtpSettings,
  startRetrieverSmtp,
} from './start.ts';
export { VerdictBoard } from './verdict-board.ts';
export {
  type AuthMethodResult,
  type AuthVerification,
  authservIdOf,
  claimsAuthservId,
  createDnsResolver,
  DnsAnswerTooLarge,
  type DnsResolverOptions,
  type VerifyAuthInput,
  verifyAuthentication,
} from './verify-auth.ts';
