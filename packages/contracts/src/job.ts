import { z } from 'zod';
import { AnalysisResult, AnalyzerStatus, Indicator, Millis, StageAggregate } from './analysis.ts';
import { Email } from './email.ts';
import { JobReport } from './report.ts';
import { JobFeedback } from './webhooks.ts';

/** The ids of a job and of the message it analyses, as every shape about a job carries them. */
export const JOB_IDS = { job_id: z.uuid(), email_id: z.string() };

/** The states of a job, in order. */
export const JOB_STATUSES = ['queued', 'processing', 'completed', 'failed'] as const;
/** A job's status (JOB_STATUSES). */
export const JobStatus = z.enum(JOB_STATUSES);
export type JobStatus = z.infer<typeof JobStatus>;

/** Why a job failed: a code and a message. */
export const JobError = z.object({
  code: z.string(),
  message: z.string(),
  stage: z.string().optional(),
  analyzer: z.string().optional(),
});
export type JobError = z.infer<typeof JobError>;

/** The states of a stage in a job's trace. */
export const STAGE_STATUSES = ['pending', 'running', 'completed', 'failed', 'skipped'] as const;
/** A stage's status (STAGE_STATUSES). */
export const StageStatus = z.enum(STAGE_STATUSES);
export type StageStatus = z.infer<typeof StageStatus>;

/** One analyzer or provider call in a job's trace: status, duration, error. */
export const CallTrace = z.object({
  id: z.string(),
  status: AnalyzerStatus,
  attempts: z.number().int().nonnegative(),
  duration_ms: Millis,
  error: z.string().optional(),
  cached: z.boolean().optional(),
});
export type CallTrace = z.infer<typeof CallTrace>;

/** One stage in a job's trace: status, timing and its calls. */
export const StageTrace = z.object({
  name: z.string(),
  status: StageStatus,
  started_at_ms: Millis.optional(),
  duration_ms: Millis,
  error: z.string().optional(),
  condition: z.string().optional(),
  /** Why a stage was skipped when no condition said so: `not configured` (issue 32). */
  reason: z.string().optional(),
  providers: z.array(CallTrace),
  analyzers: z.array(CallTrace),
  result: StageAggregate.optional(),
});
export type StageTrace = z.infer<typeof StageTrace>;

/** How a job's workflow ran: its stages and their calls. */
export const Trace = z.object({
  workflow_id: z.string(),
  config_version: z.string().optional(),
  duration_ms: Millis,
  final_stage: z.string().optional(),
  stages: z.array(StageTrace),
});
export type Trace = z.infer<typeof Trace>;

/** What a job shows of its campaign (GET /api/v1/analyze/{job_id}; campaigns, issue 16). */
export const JobCampaign = z.object({
  id: z.uuid(),
  /** Messages (jobs) in the campaign, this one included. */
  size: z.number().int().nonnegative(),
  /** Distinct recipient addresses (To, Cc, Bcc) over its messages. */
  recipients: z.number().int().nonnegative(),
  /** Distinct people who reported one of its messages (reporting mailbox). */
  reporters: z.number().int().nonnegative(),
});
export type JobCampaign = z.infer<typeof JobCampaign>;

/** Recipients a job row and a list item name (the rest are counted: `recipient_count`). */
export const HEADLINE_RECIPIENTS = 3;
/** Characters of a subject, an address or a display name kept for the list. */
const HEADLINE_CHARS = 256;

/**
 * What the jobs list shows of a message (issue 32), stored on the job row when the job is created
 * (`jobs.subject`, `sender`, `sender_name`, `recipients`, `recipient_count`; migration 013), so a
 * page of the list reads no message body and no evidence.
 */
export const JobHeadline = z.object({
  subject: z.string().max(HEADLINE_CHARS),
  /** The From address. */
  sender: z.string().max(HEADLINE_CHARS),
  /** The From header's display name, when it has one. */
  sender_name: z.string().max(HEADLINE_CHARS).optional(),
  /** The first HEADLINE_RECIPIENTS recipients (To, then Cc, then Bcc). */
  recipients: z.array(z.string().max(HEADLINE_CHARS)).max(HEADLINE_RECIPIENTS),
  /** Every recipient (To, Cc and Bcc). */
  recipient_count: z.number().int().nonnegative(),
});
export type JobHeadline = z.infer<typeof JobHeadline>;

/** `Name <a@b>` of the first From header → `Name` (quotes removed), or undefined. */
export function senderDisplayName(email: Email): string | undefined {
  const v = email.headers.raw_headers?.from;
  const raw = (Array.isArray(v) ? v[0] : v) ?? '';
  const lt = raw.indexOf('<');
  if (lt <= 0) return undefined;
  const name = raw
    .slice(0, lt)
    .trim()
    .replace(/^"(.*)"$/, '$1')
    .trim();
  return name || undefined;
}

/** The headline of a message: subject, sender, the first recipients and their count. */
export function headlineOf(email: Email): JobHeadline {
  const h = email.headers;
  const cut = (s: string) => (s.length > HEADLINE_CHARS ? s.slice(0, HEADLINE_CHARS) : s);
  const all = [...h.recipients, ...(h.cc ?? []), ...(h.bcc ?? [])];
  const name = senderDisplayName(email);
  return {
    subject: cut(h.subject),
    sender: cut(h.sender),
    ...(name ? { sender_name: cut(name) } : {}),
    recipients: all.slice(0, HEADLINE_RECIPIENTS).map(cut),
    recipient_count: all.length,
  };
}

/** A job: one message's analysis, its status, result and trace. */
export const Job = z.object({
  ...JOB_IDS,
  status: JobStatus,
  workflow: z.string(),
  created_at: z.string(),
  started_at: z.string().nullable().optional(),
  completed_at: z.string().nullable().optional(),
  result: AnalysisResult.optional(),
  error: JobError.optional(),
  trace: Trace.optional(),
  /**
   * A reported message (reported-mail triage, issue 16): who reported it, when, the report's subject
   * and where the original was found (`jobs.origin.report`). The job's Email is the original.
   */
  report: JobReport.optional(),
  /** The campaign the job belongs to (issue 16), when it is in one. */
  campaign: JobCampaign.optional(),
  /** Analyst feedback on the verdict (issue 17): on a single job's read, null when none. */
  feedback: JobFeedback.nullable().optional(),
  // What the jobs list shows (issue 32); absent on jobs stored before migration 013.
  ...JobHeadline.partial().shape,
  /** Who reported it (`report.reporter`), on a reported message. */
  reporter: z.string().max(320).optional(),
  /** The result's indicator of highest confidence, on a completed job that has one. */
  top_indicator: Indicator.optional(),
});
export type Job = z.infer<typeof Job>;

/** POST /api/v1/analyze body. */
export const SubmitRequest = z.object({
  email: Email,
  workflow_id: z.string().min(1).max(128).optional(),
  /**
   * The email is a user's report to a reporting mailbox (issue 16): the original it wraps (an
   * attached message/rfc822, .eml or Outlook .msg, or an inline forward) is analysed, and the
   * report is recorded apart (`jobs.origin.report`). Absent: false.
   */
  report: z.boolean().optional(),
});
export type SubmitRequest = z.output<typeof SubmitRequest>;

/** POST /api/v1/analyze answer. */
export const SubmitResponse = z.object({
  ...JOB_IDS,
  status: z.literal('queued'),
  workflow: z.string(),
  message: z.string(),
});
export type SubmitResponse = z.infer<typeof SubmitResponse>;

/** A page of a list, newest first: its items and the cursor of the next page (null: the last). */
export function pageOf<T extends z.ZodType>(item: T) {
  return z.object({ items: z.array(item), next_cursor: z.string().nullable() });
}

/** The query of a paged list: `limit` (1 to 200, default 50) and the `cursor` of a page. */
export const PAGE_QUERY = {
  limit: z.coerce.number().int().min(1).max(200).default(50),
  cursor: z.string().min(1).max(512).optional(),
};

/** A page of jobs (GET /api/v1/jobs). */
export const JobList = pageOf(Job);
export type JobList = z.infer<typeof JobList>;
