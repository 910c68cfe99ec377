import { type LearnLabel, TOKENIZER, tokensOf } from '@trawl/analyzers';
import { Email } from '@trawl/contracts';
import {
  type ClassifierTotals,
  createClassifierRepository,
  createFeedbackRepository,
  type SqlClient,
} from '@trawl/platform';

/** What learning a job's feedback did. */
export type FeedbackLearning =
  | {
      outcome: 'learned';
      label: LearnLabel;
      unlearned: LearnLabel | null;
      totals: ClassifierTotals;
    }
  | { outcome: 'unchanged' | 'no-feedback' | 'no-email' };

/**
 * Trains the classifier from a job's analyst feedback (issue 17), in one transaction: the feedback
 * row is locked, the label learnt before from it (if any) is unlearnt, the given one learnt from
 * the job's stored Email, and the row records what is now learnt. A repeat (same label) changes
 * nothing; concurrent calls for one job serialise on its row; a crash leaves nothing half-done.
 */
export async function learnFeedback(sql: SqlClient, jobId: string): Promise<FeedbackLearning> {
  return sql.transaction(async (tx) => {
    const row = await createFeedbackRepository(tx).lockForLearning(jobId);
    if (!row) return { outcome: 'no-feedback' };
    if (row.learned === row.verdict) return { outcome: 'unchanged' };
    const raw = typeof row.email === 'string' ? (JSON.parse(row.email) as unknown) : row.email;
    const parsed = Email.safeParse(raw);
    if (!parsed.success) return { outcome: 'no-email' };
    const tokens = tokensOf(parsed.data);
    const label: LearnLabel = row.verdict;
    const old: LearnLabel | null = row.learned;
    // one change: −1 for the old label's class, +1 for the new one's, per token
    const delta = new Map<number, [number, number]>();
    const add = (k: 0 | 1, sign: 1 | -1) => {
      for (const t of tokens) {
        let c = delta.get(t);
        if (!c) {
          c = [0, 0];
          delta.set(t, c);
        }
        c[k] += sign;
      }
    };
    add(label === 'phishing' ? 0 : 1, 1);
    if (old) add(old === 'phishing' ? 0 : 1, -1);
    const totals = await createClassifierRepository(tx).apply({
      tokenizer: TOKENIZER,
      tokens: delta,
      phishing: (label === 'phishing' ? 1 : 0) - (old === 'phishing' ? 1 : 0),
      ham: (label === 'legitimate' ? 1 : 0) - (old === 'legitimate' ? 1 : 0),
    });
    await tx.query(
      `UPDATE job_feedback SET learned = verdict WHERE job_id = $1 AND source = 'analyst'`,
      [jobId],
    );
    return { outcome: 'learned', label, unlearned: old, totals };
  });
}

/** Learns every analyst feedback not yet learnt as given (a catch-up after a failure), oldest first. */
export async function learnPendingFeedback(sql: SqlClient, limit = 100): Promise<number> {
  const pending = await createFeedbackRepository(sql).unlearned(limit);
  let n = 0;
  for (const f of pending) {
    const r = await learnFeedback(sql, f.job_id);
    if (r.outcome === 'learned') n++;
  }
  return n;
}
