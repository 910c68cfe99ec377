export { DOVECOT_BIN, dovecotAvailable, startTestDovecot, type TestDovecot } from './dovecot.ts';
export {
  /** A second IMAP client on a test Dovecot: appends and inspects folders. */
  inspector,
} from './imap-inspector.ts';
