import type { Email, JobReport } from '@trawl/contracts';
import { extractReportedMail, type ParseRawEmailOptions } from '@trawl/mail';
import { z } from 'zod';

/**
 * `report` of a submission (query `?report=true` of the raw route, `report: true` in the JSON
 * body): the message is a report sent to a reporting mailbox. Accepts true/false and 1/0.
 */
export const ReportFlag = z
  .enum(['true', 'false', '1', '0'], { message: 'must be true or false' })
  .transform((v) => v === 'true' || v === '1');

/**
 * The reported original of a wrapper and the report to record (`jobs.origin.report`): the original
 * is what gets analysed; the wrapper's sender is the reporter, kept apart (issue 16).
 */
export async function reportedEmail(
  wrapper: Email,
  opts: ParseRawEmailOptions,
  now: Date,
): Promise<{ email: Email; report: JobReport }> {
  const r = await extractReportedMail(wrapper, opts);
  return {
    email: r.email,
    report: {
      reporter: r.reporter.slice(0, 320),
      reported_at: now.toISOString(),
      wrapper_subject: r.wrapper_subject.slice(0, 998),
      found: r.found,
    },
  };
}
