import { domainToASCII } from 'node:url';
import { z } from 'zod';
import { RecommendedAction, ThreatLevel } from './analysis.ts';
import type { Evidence } from './evidence.ts';
import { JobStatus, PAGE_QUERY } from './job.ts';

/**
 * Job search (issue 16). A finished job is indexed by terms (`job_terms`: kind, value, the job's
 * created_at and id); a search walks one term's index newest first and checks the others by point
 * lookups, so a page costs about the same over a million jobs as over a thousand. The kinds and
 * the normalisation live here because the writer (the orchestrator) and the reader (the store)
 * must agree on them exactly.
 */
export const TERM_KINDS = {
  sender: 'from',
  senderDomain: 'from_dom',
  recipient: 'rcpt',
  recipientDomain: 'rcpt_dom',
  subjectWord: 'subj',
  urlDomain: 'url',
  sha256: 'sha',
  indicator: 'ind',
  /**
   * Kinds with few values, read from the job row (`result`, `workflow_id`, `submitted_by`;
   * migration 015), never written as terms: see ROW_TERM_KINDS.
   */
  verdict: 'phish',
  threat: 'threat',
  action: 'action',
  workflow: 'wf',
  submitter: 'by',
  /** Written by the campaign store when a job joins a campaign (issue 16); value: the campaign id. */
  campaign: 'camp',
  /** Written by the store from `jobs.origin.report.reporter` (reported-mail triage, issue 16). */
  reporter: 'reporter',
  /**
   * Written by the store with analyst feedback (issue 17): `fb:phishing` / `fb:legitimate`, and
   * `fb:disagrees` when the feedback differs from the job's verdict.
   */
  feedback: 'fb',
} as const;
/** A search term's kind prefix (TERM_KINDS). */
export type TermKind = (typeof TERM_KINDS)[keyof typeof TERM_KINDS];

/**
 * The kinds a search reads from the job row instead of `job_terms` (issue 29): a handful of values
 * each, already in the row, so a term row per finished job for them was pure cost. The store
 * answers `kind:value` filters of these kinds from its own indexes on `jobs` and writes no term of
 * them.
 */
export const ROW_TERM_KINDS: ReadonlySet<string> = new Set([
  TERM_KINDS.verdict,
  TERM_KINDS.threat,
  TERM_KINDS.action,
  TERM_KINDS.workflow,
  TERM_KINDS.submitter,
]);

/** Longest value indexed (longer ones are cut: a search for them matches the cut value). */
export const TERM_MAX_CHARS = 200;
/** Subject words indexed per job. */
export const SUBJECT_MAX_WORDS = 24;

/** A search term: `kind:value`. */
export function term(kind: TermKind, value: string): string {
  return `${kind}:${value.slice(0, TERM_MAX_CHARS)}`;
}

/**
 * The words of a subject as indexed and as searched: lower-case runs of letters and digits
 * (Unicode), 2 to 40 characters, each once, the first SUBJECT_MAX_WORDS.
 */
export function subjectWords(subject: string): string[] {
  const out = new Set<string>();
  for (const m of subject.toLowerCase().matchAll(/[\p{L}\p{N}]+/gu)) {
    const w = m[0];
    if (w.length < 2 || w.length > 40) continue;
    out.add(w);
    if (out.size >= SUBJECT_MAX_WORDS) break;
  }
  return [...out];
}

function domainOfAddress(a: string): string {
  const at = a.lastIndexOf('@');
  return at === -1 ? '' : a.slice(at + 1);
}

/**
 * The search terms of a finished job: its message (sender, recipients, subject words, URL hosts
 * and registrable domains, attachment hashes) and, for a completed job, its indicator types. The
 * verdict, threat level, action, workflow and submitter are searched in the row (ROW_TERM_KINDS).
 */
export function searchTermsOf(
  evidence: Evidence,
  result?: { indicators: { type: string }[] },
): string[] {
  const t = new Set<string>();
  const m = evidence.message;
  const from = m.from.address.toLowerCase();
  if (from) {
    t.add(term(TERM_KINDS.sender, from));
    const d = domainOfAddress(from);
    if (d) t.add(term(TERM_KINDS.senderDomain, d));
  }
  for (const r of [...m.to, ...m.cc, ...m.bcc]) {
    const a = r.toLowerCase();
    t.add(term(TERM_KINDS.recipient, a));
    const d = domainOfAddress(a);
    if (d) t.add(term(TERM_KINDS.recipientDomain, d));
  }
  for (const w of subjectWords(m.subject)) t.add(term(TERM_KINDS.subjectWord, w));
  for (const u of evidence.urls) {
    if (u.host) t.add(term(TERM_KINDS.urlDomain, u.host));
    if (u.registrable_domain) t.add(term(TERM_KINDS.urlDomain, u.registrable_domain));
  }
  for (const a of evidence.attachments) if (a.sha256) t.add(term(TERM_KINDS.sha256, a.sha256));
  if (result) for (const i of result.indicators) t.add(term(TERM_KINDS.indicator, i.type));
  return [...t];
}

const DOMAIN_RE =
  /^(?=.{1,253}$)[a-z0-9_](?:[a-z0-9_-]{0,62}[a-z0-9_])?(?:\.[a-z0-9_](?:[a-z0-9_-]{0,62}[a-z0-9_])?)*$/;

/** A domain as indexed (lower-case, IDN as punycode); undefined when it is not a domain. */
export function normaliseDomain(v: string): string | undefined {
  const d = v.trim().toLowerCase().replace(/^@/, '').replace(/\.$/, '');
  const ascii = /^[\x00-\x7f]*$/.test(d) ? d : domainToASCII(d);
  return ascii && DOMAIN_RE.test(ascii) ? ascii : undefined;
}

/** A string read by `read`: its value, or refused with `message` when `read` answers undefined. */
function readString<T>(base: z.ZodString, message: string, read: (v: string) => T | undefined) {
  return base.transform((v, ctx) => {
    const value = read(v);
    if (value !== undefined) return value;
    ctx.addIssue({ code: 'custom', message });
    return z.NEVER;
  });
}

/** `sender` / `recipient`: an address (`a@b.example`) or a domain (`b.example`, `@b.example`). */
const AddressOrDomain = readString(
  z.string().max(TERM_MAX_CHARS),
  'must be an email address or a domain',
  (v) => {
    const s = v.trim().toLowerCase();
    if (s.includes('@') && !s.startsWith('@')) {
      const at = s.lastIndexOf('@');
      const domain = normaliseDomain(s.slice(at + 1));
      if (at > 0 && domain && !/\s/.test(s)) return { address: `${s.slice(0, at)}@${domain}` };
      return undefined;
    }
    const domain = normaliseDomain(s);
    return domain ? { domain } : undefined;
  },
);

const Domain = readString(
  z.string().max(253),
  'must be a domain such as example.com',
  normaliseDomain,
);

const Instant = readString(
  z.string().max(64),
  'must be an ISO 8601 date or timestamp, e.g. 2026-11-01 or 2026-11-01T09:30:00Z',
  (v) => {
    const ok =
      /^\d{4}-\d{2}-\d{2}$/.test(v) || z.iso.datetime({ offset: true }).safeParse(v).success;
    const ms = ok ? Date.parse(v) : Number.NaN;
    return Number.isNaN(ms) ? undefined : new Date(ms).toISOString();
  },
);

const Label = z.string().min(1).max(128);

/**
 * GET /api/v1/analyze query: every filter, each at most once; an unknown parameter is refused
 * (strict), naming it. Filters combine with AND.
 */
export const JobSearchQuery = z
  .strictObject({
    status: JobStatus.optional(),
    is_phishing: z.enum(['true', 'false']).optional(),
    threat_level: ThreatLevel.optional(),
    action: RecommendedAction.optional(),
    sender: AddressOrDomain.optional(),
    recipient: AddressOrDomain.optional(),
    subject: readString(
      z.string().max(500),
      'must hold at least one word of 2+ characters',
      (v) => {
        const words = subjectWords(v);
        return words.length > 0 ? words : undefined;
      },
    ).optional(),
    url_domain: Domain.optional(),
    sha256: z
      .string()
      .regex(/^[a-fA-F0-9]{64}$/, { message: 'must be 64 hex digits' })
      .transform((v) => v.toLowerCase())
      .optional(),
    indicator: z
      .string()
      .max(64)
      .regex(/^[a-z0-9_.-]+$/, { message: 'must be an indicator type such as url_shortener' })
      .optional(),
    workflow: Label.optional(),
    submitter: Label.optional(),
    /** Who reported it (reported-mail triage): the reporter's address. */
    reporter: z
      .string()
      .max(TERM_MAX_CHARS)
      .transform((v, ctx) => {
        const s = v.trim().toLowerCase();
        const at = s.lastIndexOf('@');
        if (at > 0 && at < s.length - 1 && !/\s/.test(s)) return s;
        ctx.addIssue({ code: 'custom', message: 'must be an email address' });
        return z.NEVER;
      })
      .optional(),
    email_id: Label.optional(),
    /** Analyst feedback: given as phishing / legitimate, none given, or differing from the verdict. */
    feedback: z.enum(['phishing', 'legitimate', 'none', 'disagrees']).optional(),
    campaign: z
      .uuid({ message: 'must be a campaign id (a UUID)' })
      .transform((v) => v.toLowerCase())
      .optional(),
    since: Instant.optional(),
    until: Instant.optional(),
    ...PAGE_QUERY,
  })
  .superRefine((q, ctx) => {
    if (q.since && q.until && q.since >= q.until) {
      ctx.addIssue({ code: 'custom', path: ['until'], message: 'must be after since' });
    }
  });
export type JobSearchQuery = z.output<typeof JobSearchQuery>;

/** The filters of a search as the store takes them (the query without limit and cursor). */
export interface JobSearchFilters {
  status?: JobStatus;
  email_id?: string;
  /** ISO timestamps: created_at >= since, created_at < until. */
  since?: string;
  until?: string;
  /** `kind:value` terms (see searchTermsOf), all required. */
  terms?: string[];
  /** Only jobs without analyst feedback (issue 17). */
  no_feedback?: boolean;
}

/** The store's filters of a parsed query. */
export function searchFiltersOf(q: JobSearchQuery): JobSearchFilters {
  const terms: string[] = [];
  // Most selective first: the store walks the first term's index.
  if (q.sha256) terms.push(term(TERM_KINDS.sha256, q.sha256));
  if (q.campaign) terms.push(term(TERM_KINDS.campaign, q.campaign));
  if (q.url_domain) terms.push(term(TERM_KINDS.urlDomain, q.url_domain));
  if (q.sender) {
    terms.push(
      'address' in q.sender
        ? term(TERM_KINDS.sender, q.sender.address)
        : term(TERM_KINDS.senderDomain, q.sender.domain),
    );
  }
  if (q.recipient) {
    terms.push(
      'address' in q.recipient
        ? term(TERM_KINDS.recipient, q.recipient.address)
        : term(TERM_KINDS.recipientDomain, q.recipient.domain),
    );
  }
  for (const w of q.subject ?? []) terms.push(term(TERM_KINDS.subjectWord, w));
  if (q.indicator) terms.push(term(TERM_KINDS.indicator, q.indicator));
  if (q.threat_level) terms.push(term(TERM_KINDS.threat, q.threat_level));
  if (q.action) terms.push(term(TERM_KINDS.action, q.action));
  if (q.submitter) terms.push(term(TERM_KINDS.submitter, q.submitter));
  if (q.reporter) terms.push(term(TERM_KINDS.reporter, q.reporter));
  if (q.is_phishing) terms.push(term(TERM_KINDS.verdict, q.is_phishing));
  if (q.workflow) terms.push(term(TERM_KINDS.workflow, q.workflow));
  if (q.feedback && q.feedback !== 'none') terms.push(term(TERM_KINDS.feedback, q.feedback));
  const f: JobSearchFilters = {};
  if (q.feedback === 'none') f.no_feedback = true;
  if (terms.length) f.terms = terms;
  if (q.status) f.status = q.status;
  if (q.email_id) f.email_id = q.email_id;
  if (q.since) f.since = q.since;
  if (q.until) f.until = q.until;
  return f;
}
