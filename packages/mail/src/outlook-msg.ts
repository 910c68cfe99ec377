import { createHash } from 'node:crypto';
import { type CfbEntry, isCfb, readCfb } from './cfb.ts';
import { MailUnparseableError } from './errors.ts';

/**
 * Outlook .msg ([MS-OXMSG]: MAPI properties in a CFB file) turned into an RFC 822 message, so that
 * one parser (parseRawEmail) reads every input. The transport headers Outlook kept (PR_TRANSPORT_
 * MESSAGE_HEADERS: Received, Authentication-Results, From, ...) are used as they are, less their
 * MIME fields; without them, From / To / Cc / Subject / Date come from the MAPI properties. The
 * body (plain text and HTML) and the attachments are rebuilt as one multipart/mixed message.
 */

export const OUTLOOK_MSG_CONTENT_TYPE = 'application/vnd.ms-outlook';

/** A file that looks like a .msg (CFB signature). */
export function isOutlookMsg(buf: Buffer): boolean {
  return isCfb(buf);
}

/** An attachment of an Outlook .msg file. */
export interface OutlookAttachment {
  filename: string;
  contentType: string;
  content: Buffer;
}

/** An Outlook .msg file as read: headers, bodies and attachments. */
export interface OutlookMessage {
  subject?: string;
  from?: { name?: string; address?: string };
  to: { name?: string; address: string }[];
  cc: { name?: string; address: string }[];
  date?: Date;
  messageId?: string;
  transportHeaders?: string;
  text?: string;
  html?: string;
  attachments: OutlookAttachment[];
}

const MAX_ATTACHMENTS = 200;
const MAX_RECIPIENTS = 2000;

function prop(dir: CfbEntry, id: number, type: number): Buffer | undefined {
  const name = `__substg1.0_${id.toString(16).padStart(4, '0')}${type.toString(16).padStart(4, '0')}`;
  const e = dir.children.get(name.toLowerCase());
  return e && e.type === 2 ? e.data() : undefined;
}

/** A string property: PT_UNICODE (001F) or PT_STRING8 (001E, read as UTF-8 falling back to latin1). */
function str(dir: CfbEntry, id: number): string | undefined {
  const u = prop(dir, id, 0x001f);
  if (u !== undefined) return u.toString('utf16le').replace(/\0+$/, '');
  const a = prop(dir, id, 0x001e);
  if (a === undefined) return undefined;
  const s = a.toString('utf8');
  return (s.includes('\ufffd') ? a.toString('latin1') : s).replace(/\0+$/, '');
}

/** Fixed-size properties (`__properties_version1.0`): value bytes by property id. */
function fixedProps(dir: CfbEntry, headerBytes: number): Map<number, Buffer> {
  const out = new Map<number, Buffer>();
  const e = dir.children.get('__properties_version1.0');
  if (e?.type !== 2) return out;
  const b = e.data();
  for (let o = headerBytes; o + 16 <= b.length; o += 16) {
    const tag = b.readUInt32LE(o);
    out.set(tag >>> 16, b.subarray(o + 8, o + 16));
  }
  return out;
}

function filetime(v: Buffer | undefined): Date | undefined {
  if (!v || v.length < 8) return undefined;
  const ticks = v.readBigUInt64LE(0);
  if (ticks === 0n) return undefined;
  const ms = Number(ticks / 10_000n) - 11_644_473_600_000;
  const d = new Date(ms);
  return Number.isNaN(d.getTime()) || ms < 0 || ms > 8.64e15 ? undefined : d;
}

const ADDRESS = /^[^\s@<>]{1,64}@[^\s@<>]{1,253}$/;

function smtp(...candidates: (string | undefined)[]): string | undefined {
  for (const c of candidates) {
    const t = c?.trim();
    if (t && ADDRESS.test(t)) return t;
  }
  return undefined;
}

/** Reads the MAPI properties of an Outlook .msg. Throws MailUnparseableError (422) on bad input. */
export function readOutlookMsg(buf: Buffer): OutlookMessage {
  const root = readCfb(buf);
  if (!root.children.has('__properties_version1.0') && !prop(root, 0x0037, 0x001f)) {
    if (![...root.children.keys()].some((k) => k.startsWith('__substg1.0_'))) {
      throw new MailUnparseableError('not an Outlook message: no MAPI properties');
    }
  }
  const fixed = fixedProps(root, 32);
  const out: OutlookMessage = { to: [], cc: [], attachments: [] };
  const subject = str(root, 0x0037);
  if (subject !== undefined) out.subject = subject;
  const fromAddress = smtp(
    str(root, 0x5d01),
    str(root, 0x0c1f),
    str(root, 0x0065),
    str(root, 0x5d02),
  );
  const fromName = str(root, 0x0c1a) ?? str(root, 0x0042);
  if (fromAddress || fromName) {
    out.from = {
      ...(fromName ? { name: fromName } : {}),
      ...(fromAddress ? { address: fromAddress } : {}),
    };
  }
  const date = filetime(fixed.get(0x0039)) ?? filetime(fixed.get(0x0e06));
  if (date) out.date = date;
  const mid = str(root, 0x1035);
  if (mid) out.messageId = mid;
  const headers = str(root, 0x007d);
  if (headers?.trim()) out.transportHeaders = headers;
  const text = str(root, 0x1000);
  if (text !== undefined) out.text = text;
  const htmlBin = prop(root, 0x1013, 0x0102);
  const html = htmlBin ? htmlBin.toString('utf8') : str(root, 0x1013);
  if (html !== undefined) out.html = html.replace(/\0+$/, '');

  for (const [name, e] of root.children) {
    if (e.type !== 1) continue;
    if (name.startsWith('__recip_version1.0_#') && out.to.length + out.cc.length < MAX_RECIPIENTS) {
      const address = smtp(str(e, 0x39fe), str(e, 0x3003));
      if (!address) continue;
      const displayName = str(e, 0x3001);
      const kind = fixedProps(e, 8).get(0x0c15)?.readUInt32LE(0);
      const r = {
        ...(displayName && displayName !== address ? { name: displayName } : {}),
        address,
      };
      if (kind === 2) out.cc.push(r);
      else if (kind !== 3) out.to.push(r);
    } else if (
      name.startsWith('__attach_version1.0_#') &&
      out.attachments.length < MAX_ATTACHMENTS
    ) {
      const content = prop(e, 0x3701, 0x0102);
      if (content === undefined) continue; // an embedded message (PT_OBJECT) or a link: left out
      out.attachments.push({
        filename: str(e, 0x3707) ?? str(e, 0x3704) ?? 'attachment',
        contentType: str(e, 0x370e) || 'application/octet-stream',
        content,
      });
    }
  }
  return out;
}

// --- the RFC 822 message -------------------------------------------------------------------------

function encodeWord(s: string): string {
  // printable ASCII stays as it is; anything else is one RFC 2047 B-encoded word
  return /^[\x20-\x7e]*$/.test(s) ? s : `=?UTF-8?B?${Buffer.from(s, 'utf8').toString('base64')}?=`;
}

function oneLine(s: string): string {
  return s.replace(/[\r\n\t]+/g, ' ').trim();
}

function mailbox(m: { name?: string; address?: string }): string {
  const address = m.address ?? '';
  if (!m.name) return `<${address}>`;
  const name = oneLine(m.name);
  const shown = /^[\x20-\x7e]*$/.test(name)
    ? `"${name.replace(/["\\]/g, '\\$&')}"`
    : encodeWord(name);
  return `${shown} <${address}>`;
}

function base64Lines(b: Buffer): string {
  const s = b.toString('base64');
  const lines: string[] = [];
  for (let i = 0; i < s.length; i += 76) lines.push(s.slice(i, i + 76));
  return lines.join('\r\n');
}

/** Header fields of the transport headers that describe the old MIME body: left out. */
function isMimeField(line: string): boolean {
  const colon = line.indexOf(':');
  const name = (colon > 0 ? line.slice(0, colon) : line).trim().toLowerCase();
  return name === 'mime-version' || name.startsWith('content-');
}

/** The transport headers without their MIME fields (folded lines stay with their field). */
function transportFields(headers: string): string[] {
  const out: string[] = [];
  let keep = false;
  for (const line of headers.split(/\r?\n/)) {
    if (line === '') break;
    if (line[0] === ' ' || line[0] === '\t') {
      if (keep) out.push(line);
      continue;
    }
    keep = line.includes(':') && !isMimeField(line);
    if (keep) out.push(line);
  }
  return out;
}

function rfc2822Date(d: Date): string {
  return d.toUTCString().replace('GMT', '+0000');
}

/** An RFC 822 message of an Outlook message (deterministic: the same .msg gives the same bytes). */
export function outlookMsgToRaw(m: OutlookMessage): Buffer {
  const hash = createHash('sha256');
  hash.update(m.subject ?? '');
  hash.update(m.text ?? '');
  hash.update(m.html ?? '');
  for (const a of m.attachments) hash.update(a.content);
  const digest = hash.digest('hex');
  const boundary = `----=_TrawlMsg_${digest.slice(0, 24)}`;
  const head: string[] = [];
  const fromTransport = m.transportHeaders ? transportFields(m.transportHeaders) : [];
  const has = (name: string) =>
    fromTransport.some((l) => l.toLowerCase().startsWith(`${name.toLowerCase()}:`));
  head.push(...fromTransport);
  if (!has('From') && m.from?.address) head.push(`From: ${mailbox(m.from)}`);
  if (!has('To') && m.to.length > 0) head.push(`To: ${m.to.map(mailbox).join(', ')}`);
  if (!has('Cc') && m.cc.length > 0) head.push(`Cc: ${m.cc.map(mailbox).join(', ')}`);
  if (!has('Subject') && m.subject !== undefined)
    head.push(`Subject: ${encodeWord(oneLine(m.subject))}`);
  if (!has('Date') && m.date) head.push(`Date: ${rfc2822Date(m.date)}`);
  if (!has('Message-ID'))
    head.push(`Message-ID: ${m.messageId ? oneLine(m.messageId) : `<${digest}@msg.invalid>`}`);
  head.push('MIME-Version: 1.0', `Content-Type: multipart/mixed; boundary="${boundary}"`);
  const parts: string[] = [];
  if (m.text !== undefined) {
    parts.push(
      'Content-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: base64\r\n\r\n' +
        base64Lines(Buffer.from(m.text, 'utf8')),
    );
  }
  if (m.html !== undefined) {
    parts.push(
      'Content-Type: text/html; charset=utf-8\r\nContent-Transfer-Encoding: base64\r\n\r\n' +
        base64Lines(Buffer.from(m.html, 'utf8')),
    );
  }
  if (parts.length === 0) parts.push('Content-Type: text/plain; charset=utf-8\r\n\r\n');
  for (const a of m.attachments) {
    const type = /^[\w.+-]+\/[\w.+-]+$/.test(a.contentType)
      ? a.contentType
      : 'application/octet-stream';
    const name = encodeWord(oneLine(a.filename)).replace(/"/g, '');
    parts.push(
      `Content-Type: ${type}; name="${name}"\r\nContent-Disposition: attachment; filename="${name}"\r\n` +
        `Content-Transfer-Encoding: base64\r\n\r\n${base64Lines(a.content)}`,
    );
  }
  const body = parts.map((p) => `--${boundary}\r\n${p}\r\n`).join('') + `--${boundary}--\r\n`;
  return Buffer.from(`${head.join('\r\n')}\r\n\r\n${body}`, 'utf8');
}

/** An Outlook .msg as RFC 822 bytes; MailUnparseableError (422) when it is not a readable .msg. */
export function outlookMsgToEml(buf: Buffer): Buffer {
  try {
    return outlookMsgToRaw(readOutlookMsg(buf));
  } catch (err) {
    if (err instanceof MailUnparseableError) throw err;
    // a RangeError of a Buffer read on a truncated file, or anything else: bad input, not a crash
    throw new MailUnparseableError(
      `not a readable Outlook message: ${(err as Error)?.message ?? String(err)}`,
      undefined,
      err,
    );
  }
}
