// `@trawl/mail/testing`: what the mail tests and benchmarks share.
export {
  /** The parser Trawl used before its own (mailparser): the reference parity tests compare with. */
  legacyParseRawEmail,
} from './legacy-parse-raw-email.ts';
