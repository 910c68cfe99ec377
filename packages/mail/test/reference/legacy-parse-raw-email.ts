/**
 * The mailparser-based parseRawEmail as it was before the synchronous MIME parser (src/mime), kept
 * unchanged as the reference the differential tests and bench:mail hold the new one to. Not used at
 * runtime; mailparser is a devDependency.
 */
import { Transform, type TransformCallback, type Writable } from 'node:stream';
import {
  DEFAULT_EMAIL_LIMITS,
  type Email,
  type EmailLimits,
  emailParser,
  parseWith,
  type ValidationProblem,
} from '@trawl/contracts';
import { MailParser } from 'mailparser';
import { normalizeAddress } from '../../src/addresses.ts';
import { MailInvalidError, MailTooLargeError, MailUnparseableError } from '../../src/errors.ts';
import { guessLanguage, LANGUAGE_SAMPLE_CHARS } from '../../src/guess-language.ts';
import { stripControls } from '../../src/header-text.ts';
import { htmlToText } from '../../src/html-to-text.ts';
import { parseMailDate, receivedDate } from '../../src/mail-date.ts';
import { multipartDeeperThan } from '../../src/mime-depth.ts';
import { decodeHeaders, type HeaderLine, toRawHeaders } from '../../src/raw-headers.ts';

export interface ParseRawEmailOptions {
  limits?: EmailLimits;
  /** Largest raw message accepted (413 above). Default 25 MiB. */
  maxBytes?: number;
  /** Largest header block of the message or of one MIME part. Default 1 MiB. */
  maxHeaderBytes?: number;
  /** Most MIME parts. Default 500. */
  maxParts?: number;
  /** Deepest multipart nesting. Default 32. */
  maxDepth?: number;
  /** Give up after this long (422). Default 10 s. */
  timeoutMs?: number;
  /** SMTP envelope, when the caller knows it: used when the headers name no recipient / sender. */
  envelope?: { from?: string; to?: readonly string[] };
  /** Copied to `Email.source`. */
  source?: string;
  /** Used as `headers.date` when neither Date nor any Received header carries a usable date. */
  receivedAt?: Date;
}

/** Recipient used when a To header is present but names no address (see docs/mail.md). */
const UNDISCLOSED_RECIPIENT = 'undisclosed-recipients@undisclosed.invalid';

/** Sender used when a From header is present but holds no usable address. */
const UNKNOWN_SENDER = 'unknown-sender@unknown.invalid';

const DEFAULT_MAX_RAW_BYTES = 25 * 1024 * 1024;
const DEFAULTS = { maxHeaderBytes: 1024 * 1024, maxParts: 500, maxDepth: 32, timeoutMs: 10_000 };

interface ParsedAddress {
  address?: string;
  name?: string;
  group?: ParsedAddress[];
}
interface ParsedAttachment {
  filename?: string;
  contentType: string;
  contentId?: string;
  /** Hex digest (`checksumAlgo`) of the content, set before `content` ends. */
  checksum?: string;
  content: NodeJS.ReadableStream;
  release: () => void;
}
interface Collected {
  headerLines: HeaderLine[];
  headers: Map<string, unknown>;
  text: string | undefined;
  html: string | undefined;
  attachments: {
    filename: string;
    content_type: string;
    content_id?: string;
    size: number;
    sha256: string;
    content?: string;
  }[];
  droppedAttachments: number;
  oversizedAttachments: number;
}

function blankLineEnd(buf: Buffer, from: number, to: number): number {
  // index just after the blank line that ends the header block, or -1
  for (let i = buf.indexOf(10, from); i >= 0 && i < to; i = buf.indexOf(10, i + 1)) {
    const next = buf[i + 1];
    if (next === 10) return i + 2;
    if (next === 13 && buf[i + 2] === 10) return i + 3;
  }
  return -1;
}

/** Cuts an oversized top-level header block down to `max` bytes (whole header fields only). */
function capTopHeaders(buf: Buffer, max: number, notes: string[]): Buffer {
  if (buf.length <= max) return buf;
  const end = blankLineEnd(buf, 0, Math.min(buf.length, max + 4));
  if (end >= 0 && end <= max + 3) return buf;
  // last line start before `max` that begins a new field (not a folded continuation)
  let cut = -1;
  for (let i = buf.lastIndexOf(10, max); i > 0; i = buf.lastIndexOf(10, i - 1)) {
    const c = buf[i + 1];
    if (c !== 32 && c !== 9) {
      cut = i + 1;
      break;
    }
  }
  if (cut <= 0) cut = max;
  const bodyStart = blankLineEnd(buf, max, buf.length);
  notes.push(`header block larger than ${max} bytes: later header fields dropped`);
  const rest = bodyStart >= 0 ? buf.subarray(bodyStart) : Buffer.alloc(0);
  return Buffer.concat([buf.subarray(0, cut), Buffer.from('\r\n'), rest]);
}

const HEX_VALUE = new Int8Array(256).fill(-1);
for (let i = 0; i < 16; i++) {
  HEX_VALUE[i.toString(16).charCodeAt(0)] = i;
  HEX_VALUE[i.toString(16).toUpperCase().charCodeAt(0)] = i;
}

/**
 * Quoted-printable decoding, byte for byte what libqp 2.1's `decode` (mailsplit's decoder) answers,
 * in linear passes over bytes instead of regexes and a per-character loop over a binary string:
 *  1. runs of spaces and tabs before CR, LF or the end are dropped;
 *  2. then `=` before CRLF, LF or the end (a soft line break) is dropped;
 *  3. then `=XX` with two hex digits becomes that byte; every other byte is kept as it is.
 */
function decodeQuotedPrintable(src: Buffer): Buffer {
  const n = src.length;
  const out = Buffer.allocUnsafe(n);
  let w = 0;
  // 1 and 2 in one pass: what follows a `=` once step 1 has run decides whether it is a soft break
  for (let i = 0; i < n; ) {
    const c = src[i] as number;
    if (c === 61) {
      let k = i + 1;
      while (k < n && (src[k] === 32 || src[k] === 9)) k++;
      if (k === n) break; // `=` (and blanks) at the very end
      if (src[k] === 10) {
        i = k + 1;
        continue;
      }
      if (src[k] === 13) {
        // blanks between CR and LF go too (step 1): `=` CR blanks LF is a soft break
        let m = k + 1;
        while (m < n && (src[m] === 32 || src[m] === 9)) m++;
        if (src[m] === 10) {
          i = m + 1;
          continue;
        }
      }
      out[w++] = 61;
      i++;
      continue;
    }
    if (c !== 32 && c !== 9) {
      out[w++] = c;
      i++;
      continue;
    }
    let j = i + 1;
    while (j < n && (src[j] === 32 || src[j] === 9)) j++;
    const next = src[j];
    if (j < n && next !== 10 && next !== 13) while (i < j) out[w++] = src[i++] as number;
    else i = j;
  }
  // 3. =XX escapes (in place)
  const len2 = w;
  w = 0;
  for (let r = 0; r < len2; ) {
    const c = out[r] as number;
    if (c === 61 && r + 2 < len2) {
      const hi = HEX_VALUE[out[r + 1] as number] as number;
      const lo = HEX_VALUE[out[r + 2] as number] as number;
      if (hi >= 0 && lo >= 0) {
        out[w++] = (hi << 4) | lo;
        r += 3;
        continue;
      }
    }
    out[w++] = c;
    r++;
  }
  return out.subarray(0, w);
}

/** Stands in for libqp's Decoder stream: buffers the part, decodes it once at the end. */
class QuotedPrintableDecoder extends Transform {
  private chunks: Buffer[] = [];
  private bytes = 0;
  override _transform(chunk: Buffer | string, encoding: BufferEncoding, done: TransformCallback) {
    const b = typeof chunk === 'string' ? Buffer.from(chunk, encoding) : chunk;
    if (b.length > 0) {
      this.chunks.push(b);
      this.bytes += b.length;
    }
    done();
  }
  override _flush(done: TransformCallback) {
    if (this.bytes > 0) this.push(decodeQuotedPrintable(Buffer.concat(this.chunks, this.bytes)));
    this.chunks = [];
    done();
  }
}

/** What mailsplit hands mailparser for each MIME node (the members used here). */
interface SplitterNode {
  headers: unknown;
  encoding: string | false;
  parseHeaders(): void;
  getDecoder(): Writable;
}
interface HeaderListLine {
  key: string;
  line: string;
}
/** mailparser 3.9 internals overridden below (the version is pinned in package.json). */
interface MailParserInternals {
  processHeaders(lines: HeaderListLine[] | undefined): Map<string, unknown>;
  createNode(node: SplitterNode): { decoder?: Writable };
}

/**
 * Header fields whose decoded value anything reads: From, Sender, To, Cc, Bcc here; Subject, Date
 * and the address fields for the summary mailparser writes into the text of an attached
 * message/rfc822; Content-ID for attachments. raw_headers is decoded from the header lines.
 */
const DECODED_HEADER_KEYS = new Set([
  'from',
  'sender',
  'to',
  'cc',
  'bcc',
  'subject',
  'date',
  'content-id',
]);

const MailParserBase = MailParser as unknown as new (
  options: object,
) => MailParser & MailParserInternals;

/**
 * mailparser's MailParser with three costs removed, same output:
 *  - it decodes (and parses addresses, Message-IDs, List-* of) every header field of every MIME node:
 *    here only the fields something reads;
 *  - libqp decodes quoted-printable through regexes and a per-character loop: decodeQuotedPrintable;
 *  - it ends a finished part decoder a second time, which builds and drops an
 *    ERR_STREAM_ALREADY_FINISHED error (with its stack) per message: a second end() is skipped.
 */
class TrawlMailParser extends MailParserBase {
  override processHeaders(lines: HeaderListLine[] | undefined): Map<string, unknown> {
    return super.processHeaders(lines?.filter((l) => DECODED_HEADER_KEYS.has(l.key)));
  }

  override createNode(node: SplitterNode): { decoder?: Writable } {
    const getDecoder = node.getDecoder;
    node.getDecoder = () => {
      if (!node.headers) node.parseHeaders();
      return node.encoding === 'quoted-printable'
        ? new QuotedPrintableDecoder()
        : getDecoder.call(node);
    };
    const created = super.createNode(node);
    const decoder = created.decoder;
    if (decoder !== undefined) {
      const end = decoder.end;
      decoder.end = function (this: Writable, ...args: unknown[]) {
        // a bare end() on an ending stream does nothing but build an error (see Writable.end)
        if (args.length === 0 && this.writableEnded && this.writableCorked === 0) return this;
        return (end as (...a: unknown[]) => Writable).apply(this, args);
      } as Writable['end'];
    }
    return created;
  }
}

type ParserOutput =
  | ({ type: 'text'; text?: string | false; html?: string | false } & object)
  | ({ type: 'attachment' } & ParsedAttachment)
  | null;

/**
 * One run of mailparser over a message, collecting what parseRawEmail needs. A class rather than
 * closures: under tsx (keepNames) every named closure costs a defineProperty per message.
 */
class Collection {
  readonly out: Collected = {
    headerLines: [],
    headers: new Map(),
    text: undefined,
    html: undefined,
    attachments: [],
    droppedAttachments: 0,
    oversizedAttachments: 0,
  };
  private readonly parser: TrawlMailParser;
  private readonly timer: NodeJS.Timeout;
  private done = false;
  private ended = false;
  private reading = false;
  private pendingAttachment = false;
  private offset = 0;

  constructor(
    private readonly buf: Buffer,
    private readonly limits: EmailLimits,
    maxHeaderBytes: number,
    maxParts: number,
    timeoutMs: number,
    private readonly resolve: (c: Collected) => void,
    private readonly reject: (err: unknown) => void,
  ) {
    const parser = new TrawlMailParser({
      // the attachments' sha256 is computed by mailparser's own content hash (md5 otherwise)
      checksumAlgo: 'sha256',
      skipHtmlToText: true,
      skipTextToHtml: true,
      skipTextLinks: true,
      skipImageLinks: true,
      // the splitter's own bounds (mailsplit): per-node header size and number of MIME nodes
      ...({ maxHeadSize: maxHeaderBytes + 64 * 1024, maxChildNodes: maxParts } as object),
    });
    this.parser = parser;
    this.timer = setTimeout(
      () =>
        this.finish(new MailUnparseableError(`message could not be parsed within ${timeoutMs} ms`)),
      timeoutMs,
    );
    parser.on('error', (err: unknown) =>
      this.finish(
        new MailUnparseableError(
          `message is not readable MIME: ${String((err as Error)?.message ?? err)}`,
          undefined,
          err,
        ),
      ),
    );
    parser.on('headers', (headers: Map<string, unknown>) => {
      this.out.headers = headers;
      this.out.headerLines = (
        (parser as unknown as { headerLines?: HeaderLine[] }).headerLines ?? []
      ).slice();
    });
    parser.on('readable', () => {
      if (!this.reading) this.read();
    });
    parser.on('end', () => {
      this.ended = true;
      if (!this.reading && !this.pendingAttachment) this.finish();
    });
    this.feed();
  }

  private finish(err?: unknown): void {
    if (this.done) return;
    this.done = true;
    clearTimeout(this.timer);
    if (err !== undefined) {
      this.parser.removeAllListeners('readable');
      this.parser.destroy();
      this.reject(err);
    } else this.resolve(this.out);
  }

  /** Feeds the message in slices so that the timer can fire between them. */
  private feed(): void {
    const CHUNK = 64 * 1024;
    const { buf, parser } = this;
    if (this.done) return;
    while (this.offset < buf.length) {
      const slice = buf.subarray(this.offset, this.offset + CHUNK);
      this.offset += slice.length;
      if (!parser.write(slice)) {
        parser.once('drain', () => setImmediate(() => this.feed()));
        return;
      }
      if (this.offset < buf.length) {
        setImmediate(() => this.feed());
        return;
      }
    }
    parser.end();
  }

  private read(): void {
    this.reading = true;
    for (;;) {
      if (this.done) return;
      const data = this.parser.read() as ParserOutput;
      if (data === null) {
        this.reading = false;
        if (this.ended && !this.pendingAttachment) this.finish();
        return;
      }
      if (data.type === 'text') {
        if (typeof data.text === 'string') this.out.text = data.text;
        if (typeof data.html === 'string') this.out.html = data.html;
        continue;
      }
      this.readAttachment(data as ParsedAttachment);
      return;
    }
  }

  /** Reads one attachment's content, then goes on reading the parser. */
  private readAttachment(att: ParsedAttachment): void {
    const { out, limits } = this;
    const keep = out.attachments.length < limits.maxAttachments;
    if (!keep) out.droppedAttachments++;
    const chunks: Buffer[] = [];
    let size = 0;
    let over = false;
    this.pendingAttachment = true;
    att.content.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (!keep || over) return;
      if (size > limits.maxAttachmentBytes) {
        over = true;
        chunks.length = 0;
      } else chunks.push(chunk);
    });
    att.content.on('end', () => {
      if (keep) {
        if (typeof att.checksum !== 'string') {
          this.finish(new Error('mailparser gave an attachment without its sha256 checksum'));
          return;
        }
        if (over) out.oversizedAttachments++;
        out.attachments.push({
          filename: stripControls(att.filename ?? '').slice(0, 1024),
          content_type: stripControls(att.contentType ?? 'application/octet-stream').slice(0, 255),
          ...(att.contentId ? { content_id: stripControls(att.contentId).slice(0, 998) } : {}),
          size,
          sha256: att.checksum,
          ...(over ? {} : { content: Buffer.concat(chunks, size).toString('base64') }),
        });
      }
      this.pendingAttachment = false;
      att.release();
      this.read();
    });
  }
}

function collect(
  buf: Buffer,
  limits: EmailLimits,
  maxHeaderBytes: number,
  maxParts: number,
  timeoutMs: number,
): Promise<Collected> {
  return new Promise<Collected>((resolve, reject) => {
    new Collection(buf, limits, maxHeaderBytes, maxParts, timeoutMs, resolve, reject);
  });
}

function walkAddresses(list: ParsedAddress[] | undefined, out: string[]): void {
  for (const a of list ?? []) {
    if (out.length > 10_000) return;
    if (a.group) walkAddresses(a.group, out);
    else if (a.address) out.push(a.address);
  }
}

function flattenAddresses(value: unknown): string[] {
  const out: string[] = [];
  const values = Array.isArray(value) ? value : value === undefined ? [] : [value];
  for (const v of values) walkAddresses((v as { value?: ParsedAddress[] })?.value, out);
  return out;
}

/** Pulls addr-specs out of free text such as Delivered-To, Return-Path or Received "for <...>". */
function addressesInText(text: string): string[] {
  return [...text.slice(0, 4096).matchAll(/<?([^\s<>"(),;:]+@[^\s<>"(),;:]+)>?/g)].map(
    (m) => m[1] as string,
  );
}

function normalizeList(
  raw: readonly string[],
  notes: string[],
  what: string,
  seen: Set<string>,
): string[] {
  const out: string[] = [];
  for (const r of raw) {
    const n = normalizeAddress(r);
    if (n === undefined) {
      notes.push(`${what}: dropped invalid address ${JSON.stringify(r.slice(0, 200))}`);
      continue;
    }
    if (n.lossy && n.address !== r)
      notes.push(`${what}: rewrote ${JSON.stringify(r.slice(0, 200))} as ${n.address}`);
    const key = n.address.toLowerCase();
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(n.address);
  }
  return out;
}

function firstValue(byName: Map<string, string[]>, name: string): string | undefined {
  return byName.get(name)?.[0];
}

function allValues(byName: Map<string, string[]>, name: string): string[] {
  return byName.get(name) ?? [];
}

/** Where the sender is looked for, in order (see senderCandidates). */
const SENDER_SOURCES = ['From', 'Sender', 'Return-Path', 'envelope'] as const;

/** The candidate sender addresses of SENDER_SOURCES[source], computed only when asked for. */
function senderCandidates(
  source: number,
  headers: Map<string, unknown>,
  byName: Map<string, string[]>,
  envelope: ParseRawEmailOptions['envelope'],
): string[] {
  switch (SENDER_SOURCES[source]) {
    case 'From':
      return flattenAddresses(headers.get('from'));
    case 'Sender':
      return flattenAddresses(headers.get('sender'));
    case 'Return-Path':
      return allValues(byName, 'return-path').flatMap(addressesInText);
    default:
      return envelope?.from ? [envelope.from] : [];
  }
}

/** Keeps what is left of the recipient budget of `list`, noting what it drops. */
function capList(
  list: string[],
  what: string,
  budget: { left: number },
  notes: string[],
): string[] {
  const kept = list.slice(0, Math.max(0, budget.left));
  budget.left -= kept.length;
  if (kept.length < list.length)
    notes.push(`${what}: ${list.length - kept.length} addresses over the limit dropped`);
  return kept;
}

function truncateChars(s: string, max: number): string {
  if (s.length <= max) return s;
  let cut = max;
  const code = s.charCodeAt(cut - 1);
  if (code >= 0xd800 && code <= 0xdbff) cut--;
  return s.slice(0, cut);
}

/**
 * Parses an RFC 822 / MIME message into an Email (see docs/mail.md for every rule). Throws
 * MailTooLargeError (413) over `maxBytes`, MailUnparseableError (422) when the bytes cannot be read
 * as a message within the bounds, MailInvalidError (422) when the message cannot become a valid Email.
 */
export async function legacyParseRawEmail(
  raw: Buffer | string,
  opts: ParseRawEmailOptions = {},
): Promise<Email> {
  const limits = opts.limits ?? DEFAULT_EMAIL_LIMITS;
  const maxBytes = opts.maxBytes ?? DEFAULT_MAX_RAW_BYTES;
  const maxHeaderBytes = opts.maxHeaderBytes ?? DEFAULTS.maxHeaderBytes;
  const maxParts = opts.maxParts ?? DEFAULTS.maxParts;
  const maxDepth = opts.maxDepth ?? DEFAULTS.maxDepth;
  const timeoutMs = opts.timeoutMs ?? DEFAULTS.timeoutMs;
  if (typeof raw === 'string' && raw.length > maxBytes)
    throw new MailTooLargeError(raw.length, maxBytes);
  let buf = typeof raw === 'string' ? Buffer.from(raw, 'utf8') : raw;
  if (buf.length > maxBytes) throw new MailTooLargeError(buf.length, maxBytes);
  if (buf.length === 0) throw new MailUnparseableError('message is empty');
  const notes: string[] = [];

  // mbox "From " separator line some exports carry
  if (buf.subarray(0, 5).toString('latin1') === 'From ') {
    const nl = buf.indexOf(10);
    if (nl > 0) buf = buf.subarray(nl + 1);
  }
  buf = capTopHeaders(buf, maxHeaderBytes, notes);
  if (multipartDeeperThan(buf, maxDepth)) {
    throw new MailUnparseableError(`multipart nesting deeper than ${maxDepth}`, [
      { path: '', message: `multipart nesting must be at most ${maxDepth} levels deep` },
    ]);
  }

  const parsed = await collect(buf, limits, maxHeaderBytes, maxParts, timeoutMs);
  const { byName, truncated } = decodeHeaders(parsed.headerLines);
  if (truncated) notes.push('raw_headers truncated to their size bounds');
  const problems: ValidationProblem[] = [];

  // sender: From, then Sender, then Return-Path, then the envelope sender
  let sender: string | undefined;
  for (let source = 0; source < SENDER_SOURCES.length; source++) {
    const where = SENDER_SOURCES[source] as string;
    for (const a of senderCandidates(source, parsed.headers, byName, opts.envelope)) {
      const n = normalizeAddress(a);
      if (n === undefined) continue;
      if (n.lossy) notes.push(`sender: rewrote ${JSON.stringify(a.slice(0, 200))} as ${n.address}`);
      if (where !== 'From') notes.push(`sender taken from ${where}`);
      sender = n.address;
      break;
    }
    if (sender !== undefined) break;
  }
  if (sender === undefined && byName.has('from')) {
    // From is present but holds no usable address (`"Name" <>`, garbage): keep the message, mark it
    sender = UNKNOWN_SENDER;
    notes.push(`sender: From names no valid address, placeholder ${UNKNOWN_SENDER} used`);
  }
  if (sender === undefined) {
    problems.push({
      path: '/headers/sender',
      message: 'no valid sender address in From, Sender or Return-Path',
    });
  }

  // recipients: To, then envelope, Delivered-To, X-Original-To, Envelope-To, Received "for", then Cc
  const seen = new Set<string>();
  let recipients = normalizeList(flattenAddresses(parsed.headers.get('to')), notes, 'to', seen);
  let cc = normalizeList(flattenAddresses(parsed.headers.get('cc')), notes, 'cc', seen);
  const bcc = normalizeList(flattenAddresses(parsed.headers.get('bcc')), notes, 'bcc', seen);
  if (recipients.length === 0) {
    const fallbacks: [string, string[]][] = [
      ['envelope', [...(opts.envelope?.to ?? [])]],
      ['Delivered-To', allValues(byName, 'delivered-to').flatMap(addressesInText)],
      ['X-Original-To', allValues(byName, 'x-original-to').flatMap(addressesInText)],
      [
        'Envelope-To',
        [...allValues(byName, 'envelope-to'), ...allValues(byName, 'x-envelope-to')].flatMap(
          addressesInText,
        ),
      ],
      [
        'Received',
        allValues(byName, 'received').flatMap((r) =>
          [...r.matchAll(/\bfor\s+<?([^\s<>;]+@[^\s<>;]+?)>?\s*;/gi)].map((m) => m[1] as string),
        ),
      ],
    ];
    for (const [where, list] of fallbacks) {
      recipients = normalizeList(list, [], where, seen).slice(0, 1);
      if (recipients.length > 0) {
        notes.push(`recipients taken from ${where}`);
        break;
      }
    }
    if (recipients.length === 0 && cc.length > 0) {
      recipients = cc;
      cc = [];
      notes.push('recipients taken from Cc');
    }
    if (recipients.length === 0 && bcc.length > 0) {
      recipients = [bcc[0] as string];
      notes.push('recipients taken from Bcc');
    }
    if (recipients.length === 0) {
      // issue 16: a message without any recipient is analysed with the placeholder (as the port)
      recipients = [UNDISCLOSED_RECIPIENT];
      notes.push(
        byName.has('to')
          ? `recipients: To names no address, placeholder ${UNDISCLOSED_RECIPIENT} used`
          : `recipients: no header names a recipient, placeholder ${UNDISCLOSED_RECIPIENT} used`,
      );
    }
  }
  // bound to+cc+bcc instead of refusing the message
  const budget = { left: limits.maxRecipients };
  recipients = capList(recipients, 'to', budget, notes);
  const ccKept = capList(cc, 'cc', budget, notes);
  const bccKept = capList(bcc, 'bcc', budget, notes);

  // date: Date header, then the newest (topmost) Received timestamp, then opts.receivedAt
  let date: string | undefined;
  const dateHeader = firstValue(byName, 'date');
  if (dateHeader !== undefined) date = parseMailDate(dateHeader);
  if (date === undefined) {
    for (const r of allValues(byName, 'received')) {
      date = receivedDate(r);
      if (date !== undefined) {
        notes.push(
          dateHeader === undefined
            ? 'date taken from Received (no Date header)'
            : 'date taken from Received (invalid Date header)',
        );
        break;
      }
    }
  }
  if (
    date === undefined &&
    opts.receivedAt !== undefined &&
    !Number.isNaN(opts.receivedAt.getTime())
  ) {
    date = opts.receivedAt.toISOString();
    notes.push('date taken from the time of receipt');
  }
  if (date === undefined) {
    problems.push({
      path: '/headers/date',
      message:
        dateHeader === undefined
          ? 'no Date header and no dated Received header'
          : 'Date header is not a valid date',
    });
  }
  if (problems.length > 0) {
    throw new MailInvalidError(
      `message cannot become a valid Email: ${problems.map((p) => `${p.path} ${p.message}`).join('; ')}`,
      problems,
    );
  }

  let subject = firstValue(byName, 'subject') ?? '';
  if (subject.length > limits.maxSubjectChars) {
    subject = truncateChars(subject, limits.maxSubjectChars);
    notes.push(`subject truncated to ${limits.maxSubjectChars} characters`);
  }
  if (parsed.droppedAttachments > 0)
    notes.push(`${parsed.droppedAttachments} attachments over the limit dropped`);
  if (parsed.oversizedAttachments > 0) {
    notes.push(
      `${parsed.oversizedAttachments} attachments over ${limits.maxAttachmentBytes} bytes kept without content`,
    );
  }

  const html = parsed.html === undefined ? undefined : stripControls(parsed.html);
  let text = parsed.text === undefined ? undefined : stripControls(parsed.text);
  if (text === undefined || text.trim() === '') {
    if (html !== undefined) text = htmlToText(html);
    else text ??= '';
  }
  const contentLanguage = firstValue(byName, 'content-language')
    ?.split(/[,;\s]/)[0]
    ?.slice(0, 2)
    .toLowerCase();
  const language =
    contentLanguage && /^[a-z]{2}$/.test(contentLanguage)
      ? contentLanguage
      : // only the first LANGUAGE_SAMPLE_CHARS are read: do not copy a long body to join it
        guessLanguage(`${subject}\n${text.slice(0, LANGUAGE_SAMPLE_CHARS)}`);

  const candidate = {
    headers: {
      subject,
      sender,
      recipients,
      ...(ccKept.length > 0 ? { cc: ccKept } : {}),
      ...(bccKept.length > 0 ? { bcc: bccKept } : {}),
      date,
      raw_headers: toRawHeaders(byName, notes),
    },
    body_text: text,
    ...(html !== undefined ? { body_html: html } : {}),
    ...(parsed.attachments.length > 0 ? { attachments: parsed.attachments } : {}),
    ...(language !== undefined ? { language } : {}),
    ...(opts.source !== undefined ? { source: opts.source } : {}),
  };
  const result = parseWith(emailParser(limits), candidate);
  if (!result.ok) {
    // a language code the schema refuses (e.g. a bogus Content-Language) must not sink the message
    const rest = result.problems.filter((p) => p.path !== '/language');
    if (rest.length === 0 && 'language' in candidate) {
      const { language: _dropped, ...withoutLanguage } = candidate;
      const again = parseWith(emailParser(limits), withoutLanguage);
      if (again.ok) return again.value;
    }
    throw new MailInvalidError('message cannot become a valid Email', result.problems);
  }
  return result.value;
}
