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
  | {
      /** Nothing is learnt from the job now; what was learnt from it before is unlearnt. */
      outcome: 'disputed' | 'capped' | 'forgotten';
      unlearned: LearnLabel | null;
    }
  | { outcome: 'unchanged' | 'no-feedback' | 'no-email' };

/**
 * Bounds of what feedback teaches (issue 28, docs/feedback-and-webhooks.md "Bounded feedback").
 * `maxShare`: the most one user's labels may be of every document the classifier learnt (corpus
 * training included), 0-1; a user's first `floor` learnt labels are never held by it (a new
 * deployment learns at all).
 */
export interface FeedbackBounds {
  maxShare: number;
  floor?: number;
}

/** A user may always teach this many jobs, whatever the share (a new deployment learns at all). */
const FEEDBACK_SHARE_FLOOR = 20;

interface Label {
  given_by: string;
  rank: number;
  verdict: LearnLabel;
  forgotten: boolean;
}

/**
 * The label to learn from a job's labels, and whose it is (the rule of docs/feedback-and-
 * webhooks.md): the labels of the highest rank among those not forgotten; when they all agree,
 * that label, taught by the latest of them; when they disagree, none (disputed). A job whose
 * feedback predates per-user labels learns its feedback's verdict, taught by nobody.
 */
function decideLabel(
  labels: readonly Label[],
  legacy: LearnLabel,
): { label: LearnLabel | null; by: string | null; why?: 'disputed' | 'forgotten' } {
  if (labels.length === 0) return { label: legacy, by: null };
  const live = labels.filter((l) => !l.forgotten);
  if (live.length === 0) return { label: null, by: null, why: 'forgotten' };
  const top = Math.max(...live.map((l) => l.rank));
  const tops = live.filter((l) => l.rank === top); // latest first (the query's order)
  const first = tops[0] as Label;
  if (tops.some((l) => l.verdict !== first.verdict)) {
    return { label: null, by: null, why: 'disputed' };
  }
  return { label: first.verdict, by: first.given_by };
}

/**
 * Trains the classifier from a job's analyst feedback (issue 17), in one transaction: the feedback
 * row is locked, the label to learn decided from every analyst's label of the job (`decideLabel`)
 * and held when its teacher is past the share cap (`bounds`), the label learnt before from it (if
 * any) is unlearnt, the decided one learnt from the job's stored Email, and the row records what
 * is now learnt and from whom. A repeat changes nothing; concurrent calls for one job serialise on
 * its row; a crash leaves nothing half-done.
 */
export async function learnFeedback(
  sql: SqlClient,
  jobId: string,
  bounds?: FeedbackBounds,
): Promise<FeedbackLearning> {
  return sql.transaction(async (tx) => {
    const row = await createFeedbackRepository(tx).lockForLearning(jobId);
    if (!row) return { outcome: 'no-feedback' };
    const labels = await tx.query<Label>(
      `SELECT given_by, rank, verdict, forgotten FROM feedback_labels WHERE job_id = $1
       ORDER BY given_at DESC, given_by`,
      [jobId],
    );
    const decided = decideLabel(labels.rows, row.verdict);
    let label = decided.label;
    let by = decided.by;
    let why: 'disputed' | 'capped' | 'forgotten' | 'outranked' | null = decided.why ?? null;
    const classifier = createClassifierRepository(tx);
    if (
      label !== null &&
      by !== null &&
      bounds &&
      !(row.learned === label && row.learned_by === by)
    ) {
      const mine = await tx.query<{ n: string }>(
        `SELECT count(*) AS n FROM job_feedback
         WHERE source = 'analyst' AND learned_by = $1 AND job_id <> $2`,
        [by, jobId],
      );
      const t = await classifier.totals();
      const documents = t.phishing + t.ham - (row.learned ? 1 : 0) + 1;
      const allowed = Math.max(bounds.floor ?? FEEDBACK_SHARE_FLOOR, bounds.maxShare * documents);
      if (Number(mine.rows[0]?.n ?? 0) + 1 > allowed) {
        label = null;
        by = null;
        why = 'capped';
      }
    }
    if (label !== null && label !== row.verdict) why = 'outranked';
    const old: LearnLabel | null = row.learned;
    const record = () =>
      tx.query(
        `UPDATE job_feedback SET learned = $2, learned_by = $3, held = $4
         WHERE job_id = $1 AND source = 'analyst'`,
        [jobId, label, by, why],
      );
    if (old === label) {
      if (row.learned_by !== by || why !== null) await record();
      if (label === null && why !== null && why !== 'outranked') {
        return { outcome: why, unlearned: null };
      }
      return { outcome: 'unchanged' };
    }
    const raw = typeof row.email === 'string' ? (JSON.parse(row.email) as unknown) : row.email;
    const parsed = Email.safeParse(raw);
    if (!parsed.success) return { outcome: 'no-email' };
    const tokens = tokensOf(parsed.data);
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
    if (label) add(label === 'phishing' ? 0 : 1, 1);
    if (old) add(old === 'phishing' ? 0 : 1, -1);
    const totals = await classifier.apply({
      tokenizer: TOKENIZER,
      tokens: delta,
      phishing: (label === 'phishing' ? 1 : 0) - (old === 'phishing' ? 1 : 0),
      ham: (label === 'legitimate' ? 1 : 0) - (old === 'legitimate' ? 1 : 0),
    });
    await record();
    if (label === null) {
      return {
        outcome: why === 'capped' || why === 'forgotten' ? why : 'disputed',
        unlearned: old,
      };
    }
    return { outcome: 'learned', label, unlearned: old, totals };
  });
}

/**
 * `trawl learn --forget USER` (issue 28): every label USER gave stops counting, and each job it
 * touched is decided again: what was learnt from USER is unlearnt, another analyst's label learnt
 * in its place when the rule gives one. Answers the number of jobs whose learnt label changed.
 */
export async function forgetTeacher(
  sql: SqlClient,
  user: string,
  bounds?: FeedbackBounds,
): Promise<{ jobs: number; changed: number }> {
  const jobs = await createFeedbackRepository(sql).forget(user);
  let changed = 0;
  for (const id of jobs) {
    const r = await learnFeedback(sql, id, bounds);
    if (r.outcome === 'learned' || ('unlearned' in r && r.unlearned !== null)) changed++;
  }
  return { jobs: jobs.length, changed };
}

/** Learns every analyst feedback not yet learnt as given (a catch-up after a failure), oldest first. */
export async function learnPendingFeedback(
  sql: SqlClient,
  limit = 100,
  bounds?: FeedbackBounds,
): Promise<number> {
  const pending = await createFeedbackRepository(sql).unlearned(limit);
  let n = 0;
  for (const f of pending) {
    const r = await learnFeedback(sql, f.job_id, bounds);
    if (r.outcome === 'learned') n++;
  }
  return n;
}
