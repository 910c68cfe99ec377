import {
  DEFAULT_EMAIL_LIMITS,
  EMAIL_FIELD_LIMITS,
  type Email,
  type EmailLimits,
  emailParser,
  errorText,
  parseWith,
  type ValidationProblem,
} from '@trawl/contracts';
import { normalizeAddress } from './addresses.ts';
import { addressesInText, receivedForAddresses } from './addresses-in-text.ts';
import { MailInvalidError, MailTooLargeError, MailUnparseableError } from './errors.ts';
import { guessLanguage, LANGUAGE_SAMPLE_CHARS } from './guess-language.ts';
import { stripControls } from './header-text.ts';
import { htmlToText } from './html-to-text.ts';
import { parseMailDate, receivedDate } from './mail-date.ts';
import type { ParsedAddress } from './mime/libs.ts';
import { parseMime, sha256Hex } from './mime/parse-mime.ts';
import type { HeaderLine } from './mime/splitter.ts';
import { multipartDeeperThan } from './mime-depth.ts';
import { decodeHeaders, toRawHeaders } from './raw-headers.ts';

export { decodeQuotedPrintable } from './mime/quoted-printable.ts';

/** Bounds and options of parseRawEmail. */
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
export const UNDISCLOSED_RECIPIENT = 'undisclosed-recipients@undisclosed.invalid';

/** Sender used when a From header is present but holds no usable address. */
export const UNKNOWN_SENDER = 'unknown-sender@unknown.invalid';

/** The largest raw message parsed by default: 25 MiB. */
export const DEFAULT_MAX_RAW_BYTES = 25 * 1024 * 1024;
const DEFAULTS = { maxHeaderBytes: 1024 * 1024, maxParts: 500, maxDepth: 32, timeoutMs: 10_000 };

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

class ParseTimeout extends Error {}

/**
 * Parses the MIME structure (src/mime: the rules of mailparser 3.9 over mailsplit 5.4, synchronous)
 * and collects what parseRawEmail needs: top-level header lines and address fields, text, html and
 * the attachments within `limits`.
 */
function collect(
  buf: Buffer,
  limits: EmailLimits,
  maxHeaderBytes: number,
  maxParts: number,
  timeoutMs: number,
): Collected {
  const deadline = performance.now() + timeoutMs;
  let parsed: ReturnType<typeof parseMime>;
  try {
    parsed = parseMime(buf, {
      // the splitter's own bounds (mailsplit): per-node header size and number of MIME nodes
      maxHeadSize: maxHeaderBytes + 64 * 1024 || 1024 * 1024,
      maxChildNodes: maxParts || 1000,
      checkpoint: () => {
        if (performance.now() > deadline) throw new ParseTimeout();
      },
    });
  } catch (err) {
    if (err instanceof ParseTimeout) {
      throw new MailUnparseableError(`message could not be parsed within ${timeoutMs} ms`);
    }
    if (err instanceof MailUnparseableError) throw err;
    throw new MailUnparseableError(
      `message is not readable MIME: ${errorText(err)}`,
      undefined,
      err,
    );
  }
  const out: Collected = {
    headerLines: parsed.headerLines,
    headers: parsed.headers,
    text: parsed.text,
    html: parsed.html,
    attachments: [],
    droppedAttachments: 0,
    oversizedAttachments: 0,
  };
  for (const att of parsed.attachments) {
    if (out.attachments.length >= limits.maxAttachments) {
      out.droppedAttachments++;
      continue;
    }
    const size = att.content.length;
    const over = size > limits.maxAttachmentBytes;
    if (over) out.oversizedAttachments++;
    out.attachments.push({
      filename: stripControls(att.filename ?? '').slice(0, EMAIL_FIELD_LIMITS.filenameChars),
      // a part whose Content-Type names no type at all (mailparser gave `false` and failed later)
      content_type: stripControls(att.contentType || 'application/octet-stream').slice(
        0,
        EMAIL_FIELD_LIMITS.contentTypeChars,
      ),
      ...(att.contentId
        ? { content_id: stripControls(att.contentId).slice(0, EMAIL_FIELD_LIMITS.lineChars) }
        : {}),
      size,
      sha256: sha256Hex(att.content),
      ...(over ? {} : { content: att.content.toString('base64') }),
    });
  }
  if (performance.now() > deadline) {
    throw new MailUnparseableError(`message could not be parsed within ${timeoutMs} ms`);
  }
  return out;
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
export async function parseRawEmail(
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

  const parsed = collect(buf, limits, maxHeaderBytes, maxParts, timeoutMs);
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
      ['Received', allValues(byName, 'received').flatMap(receivedForAddresses)],
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
      // No header names anybody (`undisclosed-recipients:;`, no To at all, a template placeholder):
      // the mailbox got it as a blind copy, which is how much phishing arrives. It is analysed, with
      // a placeholder that keeps that fact visible (issue 16: a Bcc copy is never refused).
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
