import type { z } from 'zod';
import {
  type Attachment,
  BASE64_RE,
  base64DecodedLength,
  createEmailSchema,
  DEFAULT_EMAIL_LIMITS,
  EMAIL_FIELD_LIMITS,
  type Email,
  EmailAddress,
  type EmailLimits,
  IsoTimestamp,
} from './email.ts';
import { coversKeys, fastRecord, isPlainData, memberSchema, SLOW } from './fast-path.ts';
import { ISO_639_1 } from './iso639.ts';

/**
 * The Email schema of some limits with a cheap `safeParse`: exactly the zod schema's answer (same
 * accepted and refused inputs, same output, key order included), with the common case (a valid
 * Email of plain data, as JSON.parse or the MIME parser build it) checked and copied by hand.
 * Anything else, and every refusal, goes through zod, which stays the contract and writes the issues.
 */
export interface EmailParser {
  /** The zod schema (for composing into other schemas and for the OpenAPI document). */
  readonly schema: ReturnType<typeof createEmailSchema>;
  safeParse(value: unknown): z.ZodSafeParseResult<Email>;
}

/** zod's own patterns, read from the schemas so the fast path can never drift from them. */
function patternOf(schema: unknown): RegExp | undefined {
  const p = (schema as { _zod?: { def?: { pattern?: unknown } } })._zod?.def?.pattern;
  return p instanceof RegExp && !p.global && !p.sticky ? p : undefined;
}
const ADDRESS_RE = patternOf(EmailAddress);
const TIMESTAMP_RE = patternOf(IsoTimestamp);
const SHA256_RE = /^[a-f0-9]{64}$/;

function isAddress(v: unknown): v is string {
  return typeof v === 'string' && (ADDRESS_RE as RegExp).test(v);
}

function fastAddresses(v: unknown): string[] | typeof SLOW {
  if (!Array.isArray(v)) return SLOW;
  const out = new Array<string>(v.length);
  for (let i = 0; i < v.length; i++) {
    const a: unknown = v[i];
    if (!isAddress(a)) return SLOW;
    out[i] = a;
  }
  return out;
}

/** The value of an optional key as zod leaves it: absent stays absent, a held undefined stays. */
const ABSENT = Symbol('absent');
function optional(o: Record<string, unknown>, key: string): unknown {
  const v = o[key];
  return v === undefined && !(key in o) ? ABSENT : v;
}

function optionalString(o: Record<string, unknown>, key: string, max: number): unknown {
  const v = optional(o, key);
  if (v === ABSENT || v === undefined) return v;
  return typeof v === 'string' && v.length <= max ? v : SLOW;
}

function fastRawHeaders(v: unknown): Record<string, string | string[]> | typeof SLOW {
  const copy = fastRecord(v);
  if (copy === SLOW) return SLOW;
  for (const k in copy) {
    const h = copy[k];
    if (typeof h === 'string') continue;
    if (!Array.isArray(h)) return SLOW;
    const arr = new Array<string>(h.length);
    for (let i = 0; i < h.length; i++) {
      const s: unknown = h[i];
      if (typeof s !== 'string') return SLOW;
      arr[i] = s;
    }
    copy[k] = arr;
  }
  return copy as Record<string, string | string[]>;
}

function fastHeaders(
  v: unknown,
  limits: EmailLimits,
): { headers: Email['headers']; count: number } | typeof SLOW {
  if (!isPlainData(v)) return SLOW;
  const subject = v.subject;
  if (typeof subject !== 'string' || subject.length > limits.maxSubjectChars) return SLOW;
  const sender = v.sender;
  if (!isAddress(sender)) return SLOW;
  const recipients = fastAddresses(v.recipients);
  if (recipients === SLOW || recipients.length < 1) return SLOW;
  const out = { subject, sender, recipients } as Email['headers'];
  let count = recipients.length;
  for (const key of ['cc', 'bcc'] as const) {
    const list = optional(v, key);
    if (list === ABSENT) continue;
    if (list === undefined) {
      out[key] = undefined;
      continue;
    }
    const copy = fastAddresses(list);
    if (copy === SLOW) return SLOW;
    out[key] = copy;
    count += copy.length;
  }
  const date = v.date;
  if (typeof date !== 'string' || !(TIMESTAMP_RE as RegExp).test(date)) return SLOW;
  out.date = date;
  const raw = optional(v, 'raw_headers');
  if (raw !== ABSENT) {
    if (raw === undefined) out.raw_headers = undefined;
    else {
      const copy = fastRawHeaders(raw);
      if (copy === SLOW) return SLOW;
      out.raw_headers = copy;
    }
  }
  return { headers: out, count };
}

function fastAttachment(v: unknown, limits: EmailLimits): Attachment | typeof SLOW {
  if (!isPlainData(v)) return SLOW;
  const filename = v.filename;
  if (typeof filename !== 'string' || filename.length > EMAIL_FIELD_LIMITS.filenameChars)
    return SLOW;
  let contentType = v.content_type;
  if (contentType === undefined) contentType = 'application/octet-stream';
  else if (
    typeof contentType !== 'string' ||
    contentType.length > EMAIL_FIELD_LIMITS.contentTypeChars
  )
    return SLOW;
  const out = { filename, content_type: contentType } as Attachment;
  const size = optional(v, 'size');
  if (size !== ABSENT) {
    if (size !== undefined && !(Number.isSafeInteger(size) && (size as number) >= 0)) return SLOW;
    out.size = size as number | undefined;
  }
  const content = optional(v, 'content');
  if (content !== ABSENT) {
    if (content !== undefined) {
      if (typeof content !== 'string' || !BASE64_RE.test(content)) return SLOW;
      if (
        Math.floor((content.length * 3) / 4) > limits.maxAttachmentBytes &&
        base64DecodedLength(content) > limits.maxAttachmentBytes
      )
        return SLOW;
    }
    out.content = content as string | undefined;
  }
  for (const [key, max] of [
    ['content_id', EMAIL_FIELD_LIMITS.lineChars],
    ['sha256', 64],
  ] as const) {
    const s = optionalString(v, key, max);
    if (s === ABSENT) continue;
    if (s === SLOW || (key === 'sha256' && s !== undefined && !SHA256_RE.test(s as string)))
      return SLOW;
    out[key] = s as string | undefined;
  }
  // the schema's transform: the decoded size when none was given (appended, as its spread does)
  if (out.size === undefined && out.content !== undefined) {
    return { ...out, size: base64DecodedLength(out.content) };
  }
  return out;
}

function fastEmail(v: unknown, limits: EmailLimits): Email | typeof SLOW {
  if (!isPlainData(v)) return SLOW;
  const h = fastHeaders(v.headers, limits);
  if (h === SLOW) return SLOW;
  const out = { headers: h.headers } as Email;
  const text = optional(v, 'body_text');
  const html = optional(v, 'body_html');
  if (typeof text !== 'string' && typeof html !== 'string') return SLOW;
  for (const [key, value] of [
    ['body_text', text],
    ['body_html', html],
  ] as const) {
    if (value === ABSENT) continue;
    if (value !== undefined && typeof value !== 'string') return SLOW;
    out[key] = value;
  }
  const attachments = optional(v, 'attachments');
  if (attachments !== ABSENT) {
    if (attachments === undefined) out.attachments = undefined;
    else {
      if (!Array.isArray(attachments) || attachments.length > limits.maxAttachments) return SLOW;
      const list = new Array<Attachment>(attachments.length);
      for (let i = 0; i < attachments.length; i++) {
        const a = fastAttachment(attachments[i], limits);
        if (a === SLOW) return SLOW;
        list[i] = a;
      }
      out.attachments = list;
    }
  }
  const language = optional(v, 'language');
  if (language !== ABSENT) {
    if (
      language !== undefined &&
      (typeof language !== 'string' || !ISO_639_1.has(language.toLowerCase()))
    )
      return SLOW;
    out.language = language as string | undefined;
  }
  const source = optionalString(v, 'source', EMAIL_FIELD_LIMITS.sourceChars);
  if (source === SLOW) return SLOW;
  if (source !== ABSENT) out.source = source as string | undefined;
  const ctx = v.analysis_context;
  if (ctx === undefined) out.analysis_context = {};
  else {
    const copy = fastRecord(ctx);
    if (copy === SLOW) return SLOW;
    out.analysis_context = copy;
  }
  if (h.count > limits.maxRecipients) return SLOW;
  return out;
}

/**
 * The keys the fast path reads and copies (or leaves to zod), per object of the Email. It is used
 * only where `emailFastPathCovers` finds them equal to the schema's keys.
 */
export const EMAIL_FAST_KEYS = {
  email: [
    'headers',
    'body_text',
    'body_html',
    'attachments',
    'language',
    'source',
    'analysis_context',
  ],
  headers: ['subject', 'sender', 'recipients', 'cc', 'bcc', 'date', 'raw_headers'],
  attachment: ['filename', 'content_type', 'size', 'content', 'content_id', 'sha256'],
} as const;

/** True when the fast path handles every key of the Email schema `schema` (and no other). */
export function emailFastPathCovers(schema: unknown): boolean {
  return (
    coversKeys(schema, EMAIL_FAST_KEYS.email) &&
    coversKeys(memberSchema(schema, 'headers'), EMAIL_FAST_KEYS.headers) &&
    coversKeys(memberSchema(schema, 'attachments'), EMAIL_FAST_KEYS.attachment)
  );
}

const parsers = new WeakMap<EmailLimits, EmailParser>();

/** The Email parser for `limits`, built once per limits object. */
export function emailParser(limits: EmailLimits = DEFAULT_EMAIL_LIMITS): EmailParser {
  let p = parsers.get(limits);
  if (p === undefined) {
    const schema = createEmailSchema(limits);
    // without zod's own patterns to check against, or with keys it does not know, every input
    // goes to zod
    const fast = ADDRESS_RE && TIMESTAMP_RE && emailFastPathCovers(schema);
    p = {
      schema,
      safeParse(value) {
        const data = fast ? fastEmail(value, limits) : SLOW;
        return data === SLOW ? schema.safeParse(value) : { success: true, data };
      },
    };
    parsers.set(limits, p);
  }
  return p;
}

/** Exactly `Email.safeParse(value)`, cheap for the common case (see `emailParser`). */
export function safeParseEmail(value: unknown): z.ZodSafeParseResult<Email> {
  return emailParser().safeParse(value);
}
