export { DOVECOT_BIN, dovecotAvailable, startTestDovecot, type TestDovecot } from './dovecot.ts';
export {
  /** A second IMAP client on a test Dovecot: appends and inspects folders. */
  inspector,
  /** A second IMAP connection to a test Dovecot, and the server's spelling of a folder path. */
  openTestImap,
} from './imap-inspector.ts';
