import { createHash, randomBytes } from 'node:crypto';
import type { Email, MessageView } from '@trawl/contracts';
import { htmlToText, PARSER_NOTES_HEADER } from '@trawl/mail';
import { sanitizeHtml } from './sanitize-html.ts';

/**
 * The message view of a stored job (issue 16): what GET /api/v1/analyze/{id}/message answers, and
 * the RFC 822 message GET …/message/raw downloads. Trawl keeps the parsed Email of every job (the
 * job row's JSON), not the bytes it was parsed from: every header (raw_headers), both bodies and
 * every attachment's bytes. The download is rebuilt from them (docs/investigation.md).
 */

/** Inline images a message's HTML may reference by `cid:` (at most this large each). */
const INLINE_IMAGE_MAX_BYTES = 2 * 1024 * 1024;
const INLINE_TYPES = new Set(['image/png', 'image/gif', 'image/jpeg', 'image/webp']);

function headerName(lower: string): string {
  return lower.replace(/(^|-)([a-z])/g, (_m, dash: string, c: string) => dash + c.toUpperCase());
}

/** Every header as stored (lower-case names, repeated ones once per value); the Email's own fields
 * when the submission carried no raw headers (a JSON submission). */
function headersOf(email: Email): { name: string; value: string }[] {
  const out: { name: string; value: string }[] = [];
  const raw = email.headers.raw_headers;
  if (raw && Object.keys(raw).length > 0) {
    for (const [name, v] of Object.entries(raw)) {
      if (name === PARSER_NOTES_HEADER) continue;
      for (const value of Array.isArray(v) ? v : [v]) out.push({ name, value });
    }
    return out;
  }
  const h = email.headers;
  out.push({ name: 'from', value: h.sender });
  out.push({ name: 'to', value: h.recipients.join(', ') });
  if (h.cc?.length) out.push({ name: 'cc', value: h.cc.join(', ') });
  out.push({ name: 'subject', value: h.subject });
  out.push({ name: 'date', value: h.date });
  return out;
}

function inlineImages(email: Email): Map<string, string> {
  const m = new Map<string, string>();
  for (const a of email.attachments ?? []) {
    if (!a.content_id || a.content === undefined) continue;
    const type = a.content_type.toLowerCase().split(';')[0]?.trim() ?? '';
    if (!INLINE_TYPES.has(type)) continue;
    if ((a.size ?? 0) > INLINE_IMAGE_MAX_BYTES) continue;
    const b64 = a.content.replace(/[^A-Za-z0-9+/=]/g, '');
    m.set(a.content_id.replace(/^<|>$/g, ''), `data:${type};base64,${b64}`);
  }
  return m;
}

function sha256Of(content: string | undefined): string | null {
  if (content === undefined) return null;
  return createHash('sha256').update(Buffer.from(content, 'base64')).digest('hex');
}

export function messageViewOf(jobId: string, email: Email): MessageView {
  const text =
    email.body_text ?? (email.body_html !== undefined ? htmlToText(email.body_html) : '');
  return {
    job_id: jobId,
    headers: headersOf(email),
    text,
    html:
      email.body_html !== undefined
        ? sanitizeHtml(email.body_html, { inlineImages: inlineImages(email) })
        : null,
    attachments: (email.attachments ?? []).map((a) => ({
      name: a.filename,
      type: a.content_type,
      size: a.size ?? (a.content !== undefined ? Buffer.from(a.content, 'base64').length : 0),
      sha256: a.sha256 ?? sha256Of(a.content),
    })),
  };
}

/** Structural headers the rebuilt message writes itself. */
const REBUILT = new Set(['content-type', 'content-transfer-encoding', 'mime-version']);

function oneLine(v: string): string {
  return v.replace(/[\r\n]+/g, ' ');
}

function base64Lines(b64: string): string {
  const clean = b64.replace(/[^A-Za-z0-9+/=]/g, '');
  const lines: string[] = [];
  for (let i = 0; i < clean.length; i += 76) lines.push(clean.slice(i, i + 76));
  return lines.join('\r\n');
}

function quoted(v: string): string {
  return `"${oneLine(v).replace(/["\\]/g, (c) => `\\${c}`)}"`;
}

function textPart(type: string, body: string): string[] {
  return [
    `Content-Type: ${type}; charset=utf-8`,
    'Content-Transfer-Encoding: base64',
    '',
    base64Lines(Buffer.from(body, 'utf8').toString('base64')),
  ];
}

/**
 * The job's message as RFC 822 (MIME): its stored headers (UTF-8 where they are not ASCII, RFC
 * 6532), then its text and HTML bodies and its attachments, rebuilt. It says so in its first header:
 * a rebuilt message keeps what was analysed, not the original bytes (a DKIM signature over them no
 * longer verifies).
 */
export function rebuildRfc822(jobId: string, email: Email): Buffer {
  const lines: string[] = [
    `X-Trawl-Rebuilt: job ${jobId}; headers, bodies and attachments as stored, MIME structure rebuilt`,
  ];
  for (const h of headersOf(email)) {
    if (REBUILT.has(h.name)) continue;
    lines.push(`${headerName(h.name)}: ${oneLine(h.value)}`);
  }
  lines.push('MIME-Version: 1.0');
  const tag = randomBytes(12).toString('hex');
  const bodies: string[][] = [];
  if (email.body_text !== undefined) bodies.push(textPart('text/plain', email.body_text));
  if (email.body_html !== undefined) bodies.push(textPart('text/html', email.body_html));
  const atts = email.attachments ?? [];
  const alt = `alt-${tag}`;
  const bodyPart: string[] =
    bodies.length === 1
      ? (bodies[0] as string[])
      : [
          `Content-Type: multipart/alternative; boundary="${alt}"`,
          '',
          ...bodies.flatMap((b) => [`--${alt}`, ...b]),
          `--${alt}--`,
        ];
  if (atts.length === 0) {
    lines.push(...bodyPart);
  } else {
    const mixed = `mixed-${tag}`;
    lines.push(`Content-Type: multipart/mixed; boundary="${mixed}"`, '', `--${mixed}`, ...bodyPart);
    for (const a of atts) {
      lines.push(
        `--${mixed}`,
        `Content-Type: ${oneLine(a.content_type)}; name=${quoted(a.filename)}`,
        `Content-Disposition: ${a.content_id ? 'inline' : 'attachment'}; filename=${quoted(a.filename)}`,
        ...(a.content_id ? [`Content-ID: <${oneLine(a.content_id).replace(/^<|>$/g, '')}>`] : []),
        'Content-Transfer-Encoding: base64',
        '',
        base64Lines(a.content ?? ''),
      );
    }
    lines.push(`--${mixed}--`);
  }
  lines.push('');
  return Buffer.from(lines.join('\r\n'), 'utf8');
}
