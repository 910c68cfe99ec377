export { DOVECOT_BIN, dovecotAvailable, startTestDovecot, type TestDovecot } from './dovecot.ts';
