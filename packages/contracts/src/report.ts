import { z } from 'zod';

/**
 * Reported-mail triage (issue 16). A message sent to a reporting mailbox (a retriever with
 * `report: true`) or submitted with `report=true` wraps the message a user reports; the original is
 * analysed and the report is kept apart in `jobs.origin.report` (read by campaigns as
 * `jobs.origin->'report'->>'reporter'`).
 *
 * `found`: where the original was found — an attached `message/rfc822`, an attached `.eml`, an
 * attached Outlook `.msg`, an inline forward in the text, or `none` (the wrapper itself is analysed).
 */
export const REPORT_FOUND = ['rfc822', 'eml', 'msg', 'inline', 'none'] as const;
/** Where the original of a reported message was found (REPORT_FOUND). */
export const ReportFound = z.enum(REPORT_FOUND);
export type ReportFound = z.infer<typeof ReportFound>;

/** A reported message's origin: who reported it and where its original was found. */
export const JobReport = z.object({
  /** The wrapper's sender (lower-case): who reported it. Never the sender of what is analysed. */
  reporter: z.string().max(320),
  /** When the report was submitted (ISO 8601). */
  reported_at: z.string(),
  wrapper_subject: z.string().max(998),
  found: ReportFound,
});
export type JobReport = z.infer<typeof JobReport>;

/** `jobs.origin`: the retriever a message came from, and the report it was part of. */
export const StoredJobOrigin = z.object({
  retriever: z.string().optional(),
  message_id: z.string().optional(),
  report: JobReport.optional(),
});
export type StoredJobOrigin = z.infer<typeof StoredJobOrigin>;
