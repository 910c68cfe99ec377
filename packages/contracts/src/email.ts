import { z } from 'zod';
import { isSpaceCode } from './char-codes.ts';
import { ISO_639_1 } from './iso639.ts';

/** Limits applied to an Email; configurable (decisions.md "Limits"). */
export interface EmailLimits {
  maxAttachments: number;
  maxRecipients: number;
  maxSubjectChars: number;
  maxAttachmentBytes: number;
}

/**
 * The fixed lengths of an Email's fields, defined once for the schema, its fast path
 * (email-fast.ts) and the MIME parser, which cuts what it reads to them. 998 is RFC 5322's longest
 * line (a header value on one line).
 */
export const EMAIL_FIELD_LIMITS = {
  lineChars: 998,
  filenameChars: 1024,
  contentTypeChars: 255,
  sourceChars: 255,
} as const;

/** The default bounds of an Email: sizes of bodies, attachments, headers and counts. */
export const DEFAULT_EMAIL_LIMITS: EmailLimits = {
  maxAttachments: 100,
  maxRecipients: 1000,
  maxSubjectChars: EMAIL_FIELD_LIMITS.lineChars,
  maxAttachmentBytes: 25 * 1024 * 1024,
};

const HAS_SPACE = /\s/;

/**
 * Decoded length of a base64 string without decoding it: the length of the text without white
 * space (`\s`), less its padding. Counted in one pass, without the copy (and, on a text of line
 * breaks, the one match per character) of `b64.replace(/[\s]/g, '')`.
 */
export function base64DecodedLength(b64: string): number {
  if (!HAS_SPACE.test(b64)) {
    if (b64.length === 0) return 0;
    const padding = b64.endsWith('==') ? 2 : b64.endsWith('=') ? 1 : 0;
    return Math.floor((b64.length * 3) / 4) - padding;
  }
  let chars = 0;
  let last = -1;
  let beforeLast = -1;
  for (let i = 0; i < b64.length; i++) {
    const c = b64.charCodeAt(i);
    if (isSpaceCode(c)) continue;
    chars++;
    beforeLast = last;
    last = c;
  }
  if (chars === 0) return 0;
  const padding = last === 0x3d ? (beforeLast === 0x3d ? 2 : 1) : 0;
  return Math.floor((chars * 3) / 4) - padding;
}

/**
 * Base64 text: the language of `^[A-Za-z0-9+/\r\n]*={0,2}[\r\n]*$`, written so that it backtracks in
 * linear time (that form retried the trailing `[\r\n]*` from every line break: a content of many
 * line breaks then one bad character took seconds).
 */
export const BASE64_RE = /^[A-Za-z0-9+/\r\n]*(?:={1,2}[\r\n]*)?$/;

/** An email address as an Email field holds it. */
export const EmailAddress = z.email({ message: 'must be a valid email address' });

/** An ISO 8601 timestamp, with a zone (`Z` or an offset) or local. */
export const IsoTimestamp = z.iso.datetime({
  offset: true,
  local: true,
  message: 'must be an ISO 8601 timestamp, e.g. 2024-05-01T09:30:00Z',
});

/** An ISO 639-1 language code. */
export const LanguageCode = z.string().refine((v) => ISO_639_1.has(v.toLowerCase()), {
  message: 'must be an ISO 639-1 code such as en',
});

/** The Attachment schema under the given limits. */
export function createAttachmentSchema(limits: EmailLimits = DEFAULT_EMAIL_LIMITS) {
  return z
    .object({
      filename: z.string().max(EMAIL_FIELD_LIMITS.filenameChars),
      content_type: z
        .string()
        .max(EMAIL_FIELD_LIMITS.contentTypeChars)
        .default('application/octet-stream'),
      /** Decoded size in bytes; computed from `content` when absent. */
      size: z.number().int().nonnegative().optional(),
      /** Base64 of the attachment's bytes. May be absent when only metadata is sent. */
      content: z
        .string()
        .regex(BASE64_RE, { message: 'must be base64' })
        // the decoded length is at most 3/4 of the text's: only count exactly near the limit
        .refine(
          (v) =>
            Math.floor((v.length * 3) / 4) <= limits.maxAttachmentBytes ||
            base64DecodedLength(v) <= limits.maxAttachmentBytes,
          {
            message: `decoded content must be at most ${limits.maxAttachmentBytes} bytes`,
          },
        )
        .optional(),
      content_id: z.string().max(EMAIL_FIELD_LIMITS.lineChars).optional(),
      /** Hex sha256 of the decoded content; filled by the platform when it has the bytes. */
      sha256: z
        .string()
        .regex(/^[a-f0-9]{64}$/)
        .optional(),
    })
    .transform((a) =>
      a.size === undefined && a.content !== undefined
        ? { ...a, size: base64DecodedLength(a.content) }
        : a,
    );
}

/** An attachment of an Email, under the default limits. */
export const Attachment = createAttachmentSchema();
export type Attachment = z.output<typeof Attachment>;

const RawHeaderValue = z.union([z.string(), z.array(z.string())]);

/** The Email headers schema under the given limits. */
export function createEmailHeadersSchema(limits: EmailLimits = DEFAULT_EMAIL_LIMITS) {
  return z.object({
    subject: z.string({ message: 'is required' }).max(limits.maxSubjectChars, {
      message: `must be at most ${limits.maxSubjectChars} characters`,
    }),
    sender: EmailAddress,
    recipients: z.array(EmailAddress).min(1, { message: 'must hold at least one recipient' }),
    cc: z.array(EmailAddress).optional(),
    bcc: z.array(EmailAddress).optional(),
    date: IsoTimestamp,
    /** Every header of the message, lower-cased names; repeated headers as arrays. */
    raw_headers: z.record(z.string(), RawHeaderValue).optional(),
  });
}

/** Free-form per-stage context (spec 2.8); validated loosely here, strictly by the engine. */
export const AnalysisContextInput = z.record(z.string(), z.unknown());

/** The Email schema under the given limits. */
export function createEmailSchema(limits: EmailLimits = DEFAULT_EMAIL_LIMITS) {
  return z
    .object({
      headers: createEmailHeadersSchema(limits),
      body_text: z.string().optional(),
      body_html: z.string().optional(),
      attachments: z
        .array(createAttachmentSchema(limits))
        .max(limits.maxAttachments, {
          message: `must hold at most ${limits.maxAttachments} attachments`,
        })
        .optional(),
      language: LanguageCode.optional(),
      source: z.string().max(EMAIL_FIELD_LIMITS.sourceChars).optional(),
      analysis_context: AnalysisContextInput.default({}),
    })
    .refine(
      (e) => {
        // Runs even when other fields are invalid, so every problem is reported at once.
        const v = e as { body_text?: unknown; body_html?: unknown } | undefined;
        return typeof v?.body_text === 'string' || typeof v?.body_html === 'string';
      },
      {
        path: ['body_text'],
        message: 'at least one of body_text or body_html must be present',
        when: () => true,
      },
    )
    .superRefine((e, ctx) => {
      const n =
        e.headers.recipients.length + (e.headers.cc?.length ?? 0) + (e.headers.bcc?.length ?? 0);
      if (n > limits.maxRecipients) {
        ctx.addIssue({
          code: 'custom',
          path: ['headers', 'recipients'],
          message: `recipients, cc and bcc together must be at most ${limits.maxRecipients} (got ${n})`,
        });
      }
    });
}

/** A message as Trawl analyses it: headers, bodies, attachments (default limits). */
export const Email = createEmailSchema();
export type Email = z.output<typeof Email>;
/** An Email as a client may send it (defaults not yet applied). */
export type EmailInput = z.input<typeof Email>;
/** The headers member of an Email. */
export type EmailHeaders = Email['headers'];
