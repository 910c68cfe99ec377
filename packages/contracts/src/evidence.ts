import { z } from 'zod';

/**
 * The evidence behind a verdict (issue 16): what the message says about itself (headers, the
 * Received path, authentication results) and what it carries (URLs, attachments), stored with the
 * result. Built by the analyzer orchestrator from the Email it already has; every list and string
 * is capped (EVIDENCE_LIMITS) so that a hostile message cannot make a result large.
 */
export const EVIDENCE_LIMITS = {
  /** Most URLs kept (the first ones found: HTML, then text, then attachments). */
  urls: 100,
  attachments: 50,
  /** Entries listed per archive or document. */
  entries: 50,
  recipients: 100,
  hops: 20,
  /** Characters of a URL. */
  urlChars: 2048,
  /** Characters of any other string. */
  chars: 512,
} as const;

const Str = z.string().max(EVIDENCE_LIMITS.chars);
const UrlStr = z.string().max(EVIDENCE_LIMITS.urlChars);

/** The results an Authentication-Results header may give a method (RFC 8601), as stored. */
export const AUTH_RESULT_VALUES = [
  'pass',
  'fail',
  'softfail',
  'neutral',
  'none',
  'temperror',
  'permerror',
  'policy',
] as const;
/** A method's outcome in the evidence: a result, or none_seen when no header gave one. */
export const AUTH_OUTCOMES = [...AUTH_RESULT_VALUES, 'none_seen'] as const;
/** An authentication method's outcome in the evidence (AUTH_OUTCOMES). */
export const AuthOutcomeValue = z.enum(AUTH_OUTCOMES);

/** An address in the evidence, with its display name. */
export const EvidenceAddress = z.object({
  address: Str,
  display_name: Str.optional(),
});
export type EvidenceAddress = z.infer<typeof EvidenceAddress>;

/** The evidence of the message itself: subject, sender, recipients, dates. */
export const EvidenceMessage = z.object({
  subject: Str,
  from: EvidenceAddress,
  reply_to: z.array(Str).max(EVIDENCE_LIMITS.recipients),
  return_path: Str.optional(),
  to: z.array(Str).max(EVIDENCE_LIMITS.recipients),
  cc: z.array(Str).max(EVIDENCE_LIMITS.recipients),
  bcc: z.array(Str).max(EVIDENCE_LIMITS.recipients),
  date: Str,
  message_id: Str.optional(),
});
export type EvidenceMessage = z.infer<typeof EvidenceMessage>;

/** One Received header, topmost (the receiver's own) first. */
export const ReceivedHop = z.object({ from: Str, by: Str, ip: Str, date: Str }).partial();
export type ReceivedHop = z.infer<typeof ReceivedHop>;

/** One Received header in the evidence: who handed the message to whom, and when. */
export const EvidenceReceived = z.object({
  /** The address of the host that handed the message to the first hop of the receiver's. */
  sending_ip: Str.optional(),
  hops: z.array(ReceivedHop).max(EVIDENCE_LIMITS.hops),
});

/** SPF / DKIM / DMARC / ARC as read from Authentication-Results (RFC 8601) of the trusted hop. */
export const EvidenceAuth = z.object({
  spf: AuthOutcomeValue,
  dkim: AuthOutcomeValue,
  dmarc: AuthOutcomeValue,
  arc: AuthOutcomeValue,
  dmarc_from: Str.optional(),
  dkim_pass_domains: z.array(Str).max(20),
  authserv_id: Str,
  via_arc: z.boolean(),
  verified: z.boolean(),
});
export type EvidenceAuth = z.infer<typeof EvidenceAuth>;

/** Where in a message a link was found. */
export const URL_PLACES = ['text', 'html', 'attachment'] as const;

/** What kind of attachment a link was found in, by the attachment decoders (issue 32). */
export const DOCUMENT_SOURCES = ['pdf', 'office', 'calendar', 'qr'] as const;
/** The kind of attachment a link was found in (DOCUMENT_SOURCES). */
export const DocumentSource = z.enum(DOCUMENT_SOURCES);

/**
 * A link found inside an attachment, as the attachments analyzer reports it in its
 * `analyzer_details.document_urls`: decoding attachments is CPU work done where analysis runs (the
 * analysis pool's threads), and the job's evidence and the threat-intel lookups read this list
 * instead of decoding again.
 */
export const DocumentLink = z.object({
  url: UrlStr,
  source: DocumentSource,
  /** Index of the attachment in the Email's attachments. */
  attachment: z.number().int().nonnegative(),
  attachment_name: Str,
});
export type DocumentLink = z.infer<typeof DocumentLink>;

/** Most document links read from one analysis context. */
const MAX_DOCUMENT_LINKS = 200;

/**
 * The links found inside attachments that the analyzers of `context` (an analysis_context: stage
 * name → {analyzers: id → result}) reported in `analyzer_details.document_urls`, deduplicated,
 * at most 200; entries that are not DocumentLinks are left out.
 */
export function documentLinksIn(context: unknown): DocumentLink[] {
  const out: DocumentLink[] = [];
  const seen = new Set<string>();
  if (context === null || typeof context !== 'object') return out;
  for (const stage of Object.values(context as Record<string, unknown>)) {
    const analyzers = (stage as { analyzers?: unknown } | null)?.analyzers;
    if (analyzers === null || typeof analyzers !== 'object') continue;
    for (const a of Object.values(analyzers as Record<string, unknown>)) {
      const list = (a as { analyzer_details?: { document_urls?: unknown } } | null)
        ?.analyzer_details?.document_urls;
      if (!Array.isArray(list)) continue;
      for (const item of list.slice(0, MAX_DOCUMENT_LINKS)) {
        const r = DocumentLink.safeParse(item);
        if (!r.success) continue;
        const key = `${r.data.attachment}\u0000${r.data.source}\u0000${r.data.url}`;
        if (seen.has(key)) continue;
        seen.add(key);
        out.push(r.data);
        if (out.length >= MAX_DOCUMENT_LINKS) return out;
      }
    }
  }
  return out;
}

/** One link of the message in the evidence, with where it was found. */
export const EvidenceUrl = z.object({
  /** The URL as extracted (WHATWG-normalised; data: URLs cut). */
  url: UrlStr,
  /** Percent-escapes decoded and the host in Unicode: what a person reads. */
  decoded: UrlStr,
  host: Str,
  registrable_domain: Str.optional(),
  /** The text the link was shown under (anchor text, image alt). */
  text: Str.optional(),
  /** Where it appeared. */
  found_in: z.enum(URL_PLACES),
  /** The HTML element kind (href, src, form, css, meta, area), `text`, or the document source. */
  element: z.string().max(16),
  /** Index of the attachment it was found in (found_in: attachment). */
  attachment: z.number().int().nonnegative().optional(),
  /** Name of that attachment. */
  attachment_name: Str.optional(),
  /** For a link inside a document: the decoder that found it (pdf, office, calendar, qr). */
  source: DocumentSource.optional(),
  hidden: z.boolean().optional(),
});
export type EvidenceUrl = z.infer<typeof EvidenceUrl>;

/** One attachment in the evidence: name, type, size, hashes and what sniffing found. */
export const EvidenceAttachment = z.object({
  filename: Str,
  declared_type: Str,
  /** The type the bytes tell (absent when only metadata was sent). */
  sniffed_type: Str.optional(),
  kind: z.string().max(32).optional(),
  size: z.number().int().nonnegative().optional(),
  sha256: z
    .string()
    .regex(/^[a-f0-9]{64}$/)
    .optional(),
  /** The name or declared type promises another kind than the bytes. */
  type_mismatch: z.boolean().optional(),
  /** Entry names found inside an archive (zip). */
  contents: z.array(Str).max(EVIDENCE_LIMITS.entries).optional(),
  /** What was found inside a document: macros, pdf_javascript, encrypted, html_form, … */
  findings: z.array(z.string().max(64)).max(32).optional(),
});
export type EvidenceAttachment = z.infer<typeof EvidenceAttachment>;

/** One symbol's share of the score: the log-odds it added and the group it counts in. */
export const ScoreContribution = z.object({
  symbol: z.string(),
  weight: z.number(),
  group: z.string().optional(),
});
export type ScoreContribution = z.infer<typeof ScoreContribution>;

/** A group's tally: what its symbols added up to, and what it counted after the group's cap. */
export const GroupTally = z.object({
  sum: z.number(),
  counted: z.number(),
  /** It counted nothing because this group, which it yields to, counted (the allow list). */
  yielded_to: z.string().optional(),
});
export type GroupTally = z.infer<typeof GroupTally>;

/**
 * How the verdict's score was made, when a scorer made it: the log-odds each symbol added, in which
 * group, and what each group counted after its cap (the scorer's own analyzer_details).
 */
export const EvidenceScore = z.object({
  /** The analyzer that scored (`stage.analyzer`). */
  by: z.string(),
  probability: z.number().min(0).max(1),
  log_odds: z.number(),
  bias: z.number(),
  contributions: z.array(ScoreContribution).max(30),
  groups: z.record(z.string(), GroupTally),
});
export type EvidenceScore = z.infer<typeof EvidenceScore>;

/** An entry of the organisation's allow or block list that matched the message (issue 32). */
export const EvidenceListMatch = z.object({
  list: z.enum(['allow', 'block']),
  kind: z.enum(['sender', 'sender_domain', 'url_host', 'sha256']),
  /** The entry's value. */
  value: Str,
  entry_id: z.string().max(64),
  note: Str.nullable(),
  /** What of the message matched it: the address, the host, the attachment's name. */
  matched: Str,
  /** False for an allow that did not count (a block matched too, no authentication, …). */
  counted: z.boolean(),
  reason: Str.optional(),
});
export type EvidenceListMatch = z.infer<typeof EvidenceListMatch>;

/** What a message says and carries, as stored with its job (issue 16). */
export const Evidence = z.object({
  message: EvidenceMessage,
  received: EvidenceReceived,
  auth: EvidenceAuth,
  urls: z.array(EvidenceUrl).max(EVIDENCE_LIMITS.urls),
  attachments: z.array(EvidenceAttachment).max(EVIDENCE_LIMITS.attachments),
  /** The score by symbol and group, when a scorer made the verdict. */
  score: EvidenceScore.optional(),
  /** The allow and block list entries that matched (issue 32), when the `lists` analyzer ran. */
  lists: z.array(EvidenceListMatch).max(50).optional(),
  /** How many items of a list were left out by the caps. */
  truncated: z.record(z.string(), z.number().int().nonnegative()).optional(),
});
export type Evidence = z.infer<typeof Evidence>;

/** The kinds of evidence item an indicator can point at. */
export const EVIDENCE_KINDS = ['url', 'attachment', 'header', 'auth', 'received', 'body'] as const;

/**
 * What an indicator is about: `{kind: 'url', index}` / `{kind: 'attachment', index}` point into the
 * evidence lists; `{kind: 'header', name}` names a header (from, reply_to, return_path, subject,
 * to, date); `{kind: 'auth', name}` a method (spf, dkim, dmarc, arc); `received` the Received
 * path; `body` the text of the message.
 */
export const EvidenceRef = z.object({
  kind: z.enum(EVIDENCE_KINDS),
  index: z.number().int().nonnegative().optional(),
  name: z.string().max(64).optional(),
});
export type EvidenceRef = z.infer<typeof EvidenceRef>;
