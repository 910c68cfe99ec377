export {
  /** Lower-cases a host, drops a trailing dot and encodes IDN labels as punycode. */
  asciiHost,
  /** The domain of an address (lower-case, punycode), or undefined when it has none. */
  domainOfAddress,
  type NormalizedAddress,
  /** Normalises one address so that it passes the Email schema's address check. */
  normalizeAddress,
  /** The registrable domain (eTLD+1, public suffix list via tldts) of a host name, URL or… */
  registrableDomain,
} from './addresses.ts';
export {
  /** Outcome of one authentication method. */
  type AuthOutcome,
  type AuthReadOptions,
  type AuthResults,
  /** The authserv-id of an Authentication-Results value. */
  authservIdOf,
  /** Reads SPF/DKIM/DMARC/ARC outcomes as RFC 8601 says. */
  readAuthResults,
} from './auth-results.ts';
export {
  /** Whether a UTF-16 code unit is JavaScript white space (`\s`, what `trim()` removes). */
  isSpaceCode,
} from './char-codes.ts';
export {
  type AttachmentBytes,
  DOCUMENT_LINK_LIMITS,
  type DocumentLinkLimits,
  documentLinks,
  documentUrls,
  urlsOfDocumentLinks,
} from './document-links.ts';
export {
  /** Stable id of a message. */
  emailId,
} from './email-id.ts';
export {
  /** Stable error codes of */
  MAIL_ERROR_CODES,
  MailInvalidError,
  MailTooLargeError,
  MailUnparseableError,
} from './errors.ts';
export {
  /** Where a link was found inside an attachment (document-links.ts). */
  DOCUMENT_LINK_SOURCES,
  type DocumentLinkSource,
  /** A domain shown in link text (`www.paypal.com`, `https://bank.example/login`),… */
  domainInText,
  type ExtractedUrl,
  type ExtractUrlsOptions,
  /** Every URL of an Email's bodies, never fetched. */
  extractUrls,
  /** What a document decoder found. */
  type FoundLinks,
  type UrlSource,
  /** The URLs of links found in an attachment, parsed and normalised as the body's links… */
  urlsOfFoundLinks,
} from './extract-urls.ts';
export {
  /** Guesses the language of a text (ISO 639-1) from stop words over its first few KB. */
  guessLanguage,
  /** Characters of the text the guess reads (callers may cut longer texts to this first). */
  LANGUAGE_SAMPLE_CHARS,
} from './guess-language.ts';
export {
  /** The first value of a raw header (lower-case name), bounded (8192 characters). */
  firstHeader,
  /** Every value of a raw header (lower-case name), bounded (50 values of 8192 characters). */
  headerValues,
} from './header-values.ts';
export {
  /** Decodes HTML character references (numeric and the common named ones). */
  decodeEntities,
} from './html-entities.ts';
export {
  /** Longest output, in characters. */
  HTML_TO_TEXT_MAX_CHARS,
  /** Converts HTML to readable plain text. */
  htmlToText,
} from './html-to-text.ts';
export {
  /** Whether an IP address (dotted IPv4, or IPv6) is a private, loopback, link-local,… */
  isPrivateIp,
} from './ip-address.ts';
export {
  /** Parses an RFC 5322 date (and the common broken variants seen in real mail). */
  parseMailDate,
  /** The timestamp of a Received header (the text after its last `;`). */
  receivedDate,
} from './mail-date.ts';
export {
  /** True when the file starts with an mbox `From ` separator line. */
  isMbox,
  /** The messages of an mbox file, in order, each without its `From ` line and unquoted. */
  splitMbox,
} from './mbox.ts';
export {
  /** A file that looks like a .msg (CFB signature). */
  isOutlookMsg,
  /** Outlook .msg ([MS-OXMSG]). */
  OUTLOOK_MSG_CONTENT_TYPE,
  type OutlookAttachment,
  type OutlookMessage,
  /** An Outlook .msg as RFC 822 bytes. */
  outlookMsgToEml,
  /** An RFC 822 message of an Outlook message (deterministic). */
  outlookMsgToRaw,
  /** Reads the MAPI properties of an Outlook .msg. */
  readOutlookMsg,
} from './outlook-msg.ts';
export {
  DEFAULT_MAX_RAW_BYTES,
  /** Quoted-printable decoding, byte for byte what libqp 2.1's `decode` (mailsplit's… */
  decodeQuotedPrintable,
  type ParseRawEmailOptions,
  /** Parses an RFC 822 / MIME message into an Email (see docs/mail.md for every rule). */
  parseRawEmail,
  /** Recipient used when a To header is present but names no address (see docs/mail.md). */
  UNDISCLOSED_RECIPIENT,
  /** Sender used when a From header is present but holds no usable address. */
  UNKNOWN_SENDER,
} from './parse-raw-email.ts';
export {
  DEFAULT_RAW_HEADER_LIMITS,
  type DecodedHeaders,
  /** Decodes the header lines of a message, bounded by `limits`. */
  decodeHeaders,
  type HeaderLine,
  /** Key under which the parser records what it changed or dropped (see docs/mail.md). */
  PARSER_NOTES_HEADER,
  type RawHeaderLimits,
  /** The Email's `raw_headers`. */
  toRawHeaders,
} from './raw-headers.ts';
export {
  /** Finds the reported original in `wrapper` (see the file's comment) and answers what to… */
  extractReportedMail,
  /** The first forwarded message in a text. */
  findInlineForward,
  type InlineForward,
  /** Reported-mail triage (issue 16). */
  type ReportedMail,
} from './reported-mail.ts';
export {
  type AttachmentKind,
  type AttachmentSniff,
  type HtmlFeatures,
  type PdfFlags,
  /** Tells what an attachment really is from its bytes (magic numbers), whatever its name or… */
  sniffAttachment,
  /** Entry names and flags of a zip, from its central directory (or local headers when that… */
  zipEntries,
} from './sniff-attachment.ts';
