export { silentLogger, smtpClient } from './client.ts';
export {
  startTestDns,
  type TestDnsServer,
  type Zone,
  type ZoneRecords,
} from './dns-server.ts';
export {
  freePort,
  POSTFIX_BIN,
  postfixAvailable,
  startTestPostfix,
  type TestPostfix,
  type TestPostfixOptions,
} from './postfix.ts';
export { headerValue, type SmtpSink, type SunkMessage, startSmtpSink } from './smtp-sink.ts';
