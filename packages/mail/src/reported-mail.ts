import type { Email, ReportFound } from '@trawl/contracts';
import { normalizeAddress } from './addresses.ts';
import { addressesInText } from './addresses-in-text.ts';
import { parseMailDate } from './mail-date.ts';
import { isOutlookMsg, outlookMsgToEml } from './outlook-msg.ts';
import { type ParseRawEmailOptions, parseRawEmail } from './parse-raw-email.ts';

/**
 * Reported-mail triage (issue 16): a message sent to a reporting mailbox wraps the message a user
 * reports. The original is looked for, in this order: an attached `message/rfc822`, an attached
 * `.eml`, an attached Outlook `.msg`, then an inline forward in the text (Outlook's
 * "-----Original Message-----" or its `From:` / `Sent:` block, Gmail's "---------- Forwarded
 * message ---------", Apple Mail's "Begin forwarded message:"). The reporter is the wrapper's
 * sender: kept apart, never the sender of what is analysed.
 */

export interface ReportedMail {
  found: ReportFound;
  /** What to analyse: the original, or the wrapper itself when none was found. */
  email: Email;
  /** The wrapper's sender (lower-case address). */
  reporter: string;
  wrapper_subject: string;
}

function lower(name: string | undefined): string {
  return (name ?? '').toLowerCase();
}

type Candidate = { found: 'rfc822' | 'eml' | 'msg'; raw: Buffer };

/** Attachments that may be the reported original, best kind first. */
function attachedOriginals(wrapper: Email): Candidate[] {
  const by: Record<'rfc822' | 'eml' | 'msg', Buffer[]> = { rfc822: [], eml: [], msg: [] };
  for (const a of wrapper.attachments ?? []) {
    if (a.content === undefined) continue; // over the size limit: its bytes were not kept
    const type = lower(a.content_type);
    const name = lower(a.filename);
    const bytes = Buffer.from(a.content, 'base64');
    if (bytes.length === 0) continue;
    // a message with a .eml file name is an attached .eml (whatever type it was sent as)
    if (name.endsWith('.eml')) by.eml.push(bytes);
    else if (type === 'message/rfc822' || type === 'message/global') by.rfc822.push(bytes);
    else if (
      (name.endsWith('.msg') || type === 'application/vnd.ms-outlook') &&
      isOutlookMsg(bytes)
    )
      by.msg.push(bytes);
  }
  return [
    ...by.rfc822.map((raw) => ({ found: 'rfc822' as const, raw })),
    ...by.eml.map((raw) => ({ found: 'eml' as const, raw })),
    ...by.msg.map((raw) => ({ found: 'msg' as const, raw })),
  ];
}

// --- inline forwards ------------------------------------------------------------------------------

const MARKERS = [
  (l: string) => /^-{2,}\s*original message\s*-{2,}$/i.test(l),
  (l: string) => /^-{2,}\s*forwarded message\s*-{2,}$/i.test(l),
  (l: string) => /^begin forwarded message:?$/i.test(l),
  (l: string) => /^-{2,}\s*(?:urspr(?:ü|ue)ngliche nachricht|message d'origine)\s*-{2,}$/i.test(l),
];

const HEADER_NAMES = new Map<string, string>([
  ['from', 'from'],
  ['von', 'from'],
  ['de', 'from'],
  ['sent', 'date'],
  ['date', 'date'],
  ['gesendet', 'date'],
  ['envoyé', 'date'],
  ['to', 'to'],
  ['an', 'to'],
  ['à', 'to'],
  ['cc', 'cc'],
  ['subject', 'subject'],
  ['betreff', 'subject'],
  ['objet', 'subject'],
  ['reply-to', 'reply-to'],
]);

/** `Name: value` of a header line of a forward block, with the name mapped; undefined otherwise. */
function headerLine(line: string): [string, string] | undefined {
  const t = line.replace(/^[>\s*]+/, '');
  const colon = t.indexOf(':');
  if (colon < 1 || colon > 20) return undefined;
  const name = HEADER_NAMES.get(t.slice(0, colon).replace(/\*/g, '').trim().toLowerCase());
  return name
    ? [
        name,
        t
          .slice(colon + 1)
          .replace(/\*/g, '')
          .trim(),
      ]
    : undefined;
}

/** The headers of a message forwarded inline in a report's text. */
export interface InlineForward {
  from?: string;
  to?: string;
  cc?: string;
  subject?: string;
  date?: string;
  replyTo?: string;
  body: string;
}

/**
 * The first forwarded message in a text: a marker line followed by a header block, or an Outlook
 * block without a marker (a `From:` line with `Sent:` and `Subject:` lines right after it).
 */
export function findInlineForward(text: string): InlineForward | undefined {
  const lines = text.slice(0, 2_000_000).split('\n');
  for (let i = 0; i < lines.length; i++) {
    const l = (lines[i] as string)
      .replace(/\r$/, '')
      .replace(/^[>\s]+/, '')
      .trim();
    let start = -1;
    if (MARKERS.some((m) => m(l))) start = i + 1;
    else if (/^\*?from:/i.test(l)) {
      // Outlook without a marker: From: … Sent: … To: … Subject: within the next lines
      const next = lines.slice(i, i + 8).map((x) => headerLine(x)?.[0]);
      if (next.includes('date') && next.includes('subject')) start = i;
    }
    if (start < 0) continue;
    const fields = new Map<string, string>();
    let j = start;
    while (j < lines.length && (lines[j] as string).replace(/^[>\s]+/, '').trim() === '') j++;
    let last: string | undefined;
    for (; j < lines.length; j++) {
      const raw = (lines[j] as string).replace(/\r$/, '');
      if (raw.replace(/^[>\s]+/, '').trim() === '') break;
      const h = headerLine(raw);
      if (h && !fields.has(h[0])) {
        fields.set(h[0], h[1]);
        last = h[0];
      } else if (last && /^[\s>]/.test(raw)) {
        fields.set(last, `${fields.get(last)} ${raw.replace(/^[>\s]+/, '').trim()}`);
      } else if (h) {
        last = undefined;
      } else break;
    }
    if (!fields.has('from') || fields.size < 2) continue;
    const quoted = lines.slice(start, j).every((x) => x.startsWith('>') || x.trim() === '');
    const body = lines
      .slice(j)
      .map((x) => (quoted ? x.replace(/^> ?/, '') : x))
      .join('\n')
      .trim();
    const out: InlineForward = { body };
    const set = (k: keyof Omit<InlineForward, 'body'>, v: string | undefined) => {
      if (v) out[k] = v;
    };
    set('from', fields.get('from'));
    set('to', fields.get('to'));
    set('cc', fields.get('cc'));
    set('subject', fields.get('subject'));
    set('date', fields.get('date'));
    set('replyTo', fields.get('reply-to'));
    return out;
  }
  return undefined;
}

function encodeWord(s: string): string {
  return /^[\x20-\x7e]*$/.test(s) ? s : `=?UTF-8?B?${Buffer.from(s, 'utf8').toString('base64')}?=`;
}

/** An address list of a forward block (`Name <a@b>`, `Name [mailto:a@b]`, `a@b; c@d`) as a header. */
function addressHeader(value: string): string | undefined {
  const parts: string[] = [];
  for (const a of addressesInText(value.replace(/mailto:/gi, ' '))) {
    const n = normalizeAddress(a.replace(/^\[|\]$/g, ''));
    if (n) parts.push(`<${n.address}>`);
    if (parts.length >= 100) break;
  }
  if (parts.length === 0) return undefined;
  // the display name of a single address (`Name <a@b>`, `Name [mailto:a@b]`)
  if (parts.length === 1) {
    const cut = value.search(/[<[]/);
    const name = (cut > 0 ? value.slice(0, cut) : '').replace(/["\\]/g, '').trim();
    if (name && !name.includes('@')) return `"${encodeWord(name)}" ${parts[0]}`;
  }
  return parts.join(', ');
}

function base64Lines(b: Buffer): string {
  const s = b.toString('base64');
  const lines: string[] = [];
  for (let i = 0; i < s.length; i += 76) lines.push(s.slice(i, i + 76));
  return lines.join('\r\n');
}

/**
 * The RFC 822 message of an inline forward: its header block, its text, and the wrapper's
 * attachments (a client forwarding inline attaches the original's attachments to the forward).
 */
function inlineToRaw(f: InlineForward, wrapper: Email): Buffer {
  const head: string[] = [];
  const from = f.from ? addressHeader(f.from) : undefined;
  // A From with a display name only (Exchange): From stays, without an address (placeholder sender)
  head.push(`From: ${from ?? `"${encodeWord((f.from ?? '').replace(/["\\<>]/g, ''))}" <>`}`);
  const to = f.to ? addressHeader(f.to) : undefined;
  if (to) head.push(`To: ${to}`);
  const cc = f.cc ? addressHeader(f.cc) : undefined;
  if (cc) head.push(`Cc: ${cc}`);
  const replyTo = f.replyTo ? addressHeader(f.replyTo) : undefined;
  if (replyTo) head.push(`Reply-To: ${replyTo}`);
  head.push(`Subject: ${encodeWord((f.subject ?? '').replace(/[\r\n]+/g, ' '))}`);
  const date =
    (f.date && (parseMailDate(f.date.replace(/\s+at\s+/i, ' ')) ?? parseMailDate(f.date))) ||
    wrapper.headers.date;
  head.push(`Date: ${new Date(date).toUTCString().replace('GMT', '+0000')}`);
  const boundary = '----=_TrawlInlineForward';
  head.push('MIME-Version: 1.0', `Content-Type: multipart/mixed; boundary="${boundary}"`);
  const parts = [
    `Content-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: base64\r\n\r\n${base64Lines(Buffer.from(f.body, 'utf8'))}`,
  ];
  for (const a of wrapper.attachments ?? []) {
    if (a.content === undefined) continue;
    const type = /^[\w.+-]+\/[\w.+-]+$/.test(a.content_type)
      ? a.content_type
      : 'application/octet-stream';
    const name = encodeWord(a.filename.replace(/[\r\n"]+/g, ' '));
    parts.push(
      `Content-Type: ${type}; name="${name}"\r\nContent-Disposition: attachment; filename="${name}"\r\n` +
        `Content-Transfer-Encoding: base64\r\n\r\n${base64Lines(Buffer.from(a.content, 'base64'))}`,
    );
  }
  const body = `${parts.map((p) => `--${boundary}\r\n${p}\r\n`).join('')}--${boundary}--\r\n`;
  return Buffer.from(`${head.join('\r\n')}\r\n\r\n${body}`, 'utf8');
}

/**
 * Finds the reported original in `wrapper` (see the file's comment) and answers what to analyse.
 * An attached original that cannot be parsed is passed over; with nothing found, the wrapper itself
 * is analysed (`found: "none"`). The original's recipient, when its headers name none, is the
 * reporter (who received it).
 */
export async function extractReportedMail(
  wrapper: Email,
  opts: ParseRawEmailOptions = {},
): Promise<ReportedMail> {
  const reporter = wrapper.headers.sender.toLowerCase();
  const base = { reporter, wrapper_subject: wrapper.headers.subject };
  const parseOpts: ParseRawEmailOptions = {
    ...opts,
    envelope: { to: [reporter] },
    receivedAt: new Date(wrapper.headers.date),
  };
  for (const c of attachedOriginals(wrapper)) {
    try {
      const raw = c.found === 'msg' ? outlookMsgToEml(c.raw) : c.raw;
      return { ...base, found: c.found, email: await parseRawEmail(raw, parseOpts) };
    } catch {
      // not a readable message: try the next candidate
    }
  }
  const text = wrapper.body_text ?? '';
  const inline = findInlineForward(text);
  if (inline) {
    try {
      return {
        ...base,
        found: 'inline',
        email: await parseRawEmail(inlineToRaw(inline, wrapper), parseOpts),
      };
    } catch {
      // fall through: the wrapper is analysed
    }
  }
  return { ...base, found: 'none', email: wrapper };
}
