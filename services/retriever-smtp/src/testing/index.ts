export { freePort } from '@trawl/platform/testing';
export {
  type InlineAnalysisPorts,
  type InlineAnalysisSettings,
  inlineAnalysisSettings,
  startInlineAnalysis,
} from '../inline-analysis.ts';
export { type JobRecord, startJobRecording } from '../job-recorder.ts';
export { silentLogger, smtpClient } from './client.ts';
export {
  startTestDns,
  type TestDnsServer,
  type Zone,
  type ZoneRecords,
} from './dns-server.ts';
export { type InlineMilterOptions, startInlineMilter } from './inline-milter.ts';
export {
  POSTFIX_BIN,
  postfixAvailable,
  startTestPostfix,
  type TestPostfix,
  type TestPostfixOptions,
} from './postfix.ts';
export { type SendingDomain, sendingDomain } from './signed-mail.ts';
export { headerValue, type SmtpSink, type SunkMessage, startSmtpSink } from './smtp-sink.ts';
export { PLATFORM_KEY, startTrawlStack, type TrawlStack } from './stack.ts';
