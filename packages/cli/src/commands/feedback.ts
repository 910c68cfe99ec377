import type { Ctx } from '../context.ts';
import { usageError } from '../errors.ts';
import { EXIT } from '../exit-codes.ts';

const VERDICTS = ['phishing', 'legitimate'];

interface FeedbackAnswer {
  job_id: string;
  feedback: { verdict: string; note: string | null; by: string | null; at: string };
  previous: { verdict: string } | null;
  learning: string;
}

/**
 * `trawl feedback <job_id> phishing|legitimate [--note TEXT]`: an analyst's verdict on a completed
 * job (POST /api/v1/analyze/<id>/feedback); a second one replaces the first.
 */
export async function feedbackCommand(
  ctx: Ctx,
  o: { jobId: string; verdict: string; note: string | undefined },
): Promise<number> {
  if (!VERDICTS.includes(o.verdict))
    throw usageError(`the verdict must be ${VERDICTS.join(' or ')}, not ${o.verdict}`);
  const r = await ctx
    .api()
    .request<FeedbackAnswer>('POST', `/api/v1/analyze/${encodeURIComponent(o.jobId)}/feedback`, {
      json: { verdict: o.verdict, ...(o.note !== undefined ? { note: o.note } : {}) },
    });
  if (ctx.json) ctx.printJson(r);
  else {
    const was = r.previous ? ` (was ${r.previous.verdict})` : '';
    ctx.print(`${r.job_id}: ${r.feedback.verdict}${was}; classifier: ${r.learning}`);
  }
  return EXIT.ok;
}
