// `@trawl/mail/testing`: the frozen reference parser, kept with the tests that compare against it;
// bench:mail measures it beside the parser of src/.
export {
  /** The parser Trawl used before its own (mailparser): the reference parity tests compare with. */
  legacyParseRawEmail,
} from './legacy-parse-raw-email.ts';
