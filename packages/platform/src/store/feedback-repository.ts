import { iso } from './rows.ts';
import type { SqlClient } from './types.ts';

/**
 * Feedback on a job's verdict (issue 17). `analyst` feedback is what an analyst or admin says the
 * message was; it trains the classifier. `reporter` feedback (a mailbox user's report) is weaker,
 * stored apart and never trained on. One row per (job, source): a second feedback replaces the
 * first. The search terms `fb:<verdict>` and `fb:disagrees` (feedback ≠ the job's verdict) of the
 * job are rewritten with it (job search, issue 16).
 */
export const FEEDBACK_VERDICTS = ['phishing', 'legitimate'] as const;
export type FeedbackVerdict = (typeof FEEDBACK_VERDICTS)[number];
/** Who gives feedback on a job: an analyst, or the person who reported it. */
export const FEEDBACK_SOURCES = ['analyst', 'reporter'] as const;
export type FeedbackSource = (typeof FEEDBACK_SOURCES)[number];

export interface Feedback {
  verdict: FeedbackVerdict;
  note: string | null;
  by: string | null;
  at: string;
}

export interface StoredFeedback extends Feedback {
  job_id: string;
  source: FeedbackSource;
  /** The label currently learnt into the classifier from this feedback (null: none). */
  learned: FeedbackVerdict | null;
}

export interface GiveFeedback {
  job_id: string;
  source: FeedbackSource;
  verdict: FeedbackVerdict;
  note: string | null;
  by: string | null;
  /** The job's own verdict (is_phishing), for the `fb:disagrees` term; null: none. */
  job_is_phishing: boolean | null;
  /**
   * Rank of the giver's highest role (1 viewer, 2 analyst, 3 admin) when they gave it: their label
   * is kept per user (`feedback_labels`, migration 012) and decides conflicts (issue 28).
   */
  rank?: number;
}

/** What one user taught the classifier (the admin view of issue 28). */
export interface Teacher {
  user: string;
  /** Labels given (latest per job), forgotten ones included. */
  labels: number;
  /** Jobs whose learnt label is this user's, by label. */
  learned: { phishing: number; legitimate: number };
  /**
   * Labels of theirs not learnt: `outvoted` (another's label is learnt from the job, or none:
   * outranked, disputed or not learnt yet), `capped` (held at the share cap).
   */
  held: { outvoted: number; capped: number };
  /** Labels removed from learning by `trawl learn --forget`. */
  forgotten: number;
  last_at: string | null;
}

export interface FeedbackRepository {
  get(jobId: string, source?: FeedbackSource): Promise<StoredFeedback | null>;
  /**
   * Stores (or replaces) a feedback and its search terms in `tx` (or its own transaction); answers
   * the stored row and the one it replaced.
   */
  give(
    f: GiveFeedback,
    tx?: SqlClient,
  ): Promise<{ feedback: StoredFeedback; previous: StoredFeedback | null }>;
  /**
   * Records that `label` is now learnt from a job's analyst feedback, only while the row still
   * holds `expected` (another change in between wins); true when it did.
   */
  markLearned(
    jobId: string,
    expected: FeedbackVerdict | null,
    label: FeedbackVerdict | null,
  ): Promise<boolean>;
  /** Analyst feedback not yet learnt as given (`learned` ≠ `verdict`), oldest first. */
  unlearned(limit: number): Promise<StoredFeedback[]>;
  /**
   * Locks a job's analyst feedback row (call it on a transaction's client) and answers it with the
   * job's stored Email (its JSON text or a parsed value, not validated); null when none.
   */
  lockForLearning(jobId: string): Promise<{
    verdict: FeedbackVerdict;
    learned: FeedbackVerdict | null;
    learned_by: string | null;
    email: unknown;
  } | null>;
  /** Who taught what, most learnt first (issue 28). */
  teachers(): Promise<Teacher[]>;
  /**
   * Marks every label of `user` forgotten (they stop counting for learning) and answers the jobs
   * whose learnt label has to be decided again: those with a label of theirs or learnt from them.
   */
  forget(user: string): Promise<string[]>;
}

interface Row {
  job_id: string;
  source: FeedbackSource;
  verdict: FeedbackVerdict;
  note: string | null;
  given_by: string | null;
  given_at: unknown;
  learned: FeedbackVerdict | null;
}

const COLUMNS = 'job_id, source, verdict, note, given_by, given_at, learned';

function toFeedback(r: Row): StoredFeedback {
  return {
    job_id: r.job_id,
    source: r.source,
    verdict: r.verdict,
    note: r.note,
    by: r.given_by,
    at: iso(r.given_at),
    learned: r.learned,
  };
}

/** The public part of a stored feedback (what the job shows). */
export function publicFeedback(f: StoredFeedback): Feedback {
  return { verdict: f.verdict, note: f.note, by: f.by, at: f.at };
}

/** Analysts' and reporters' feedback on jobs in the store. */
export function createFeedbackRepository(sql: SqlClient): FeedbackRepository {
  async function give(tx: SqlClient, f: GiveFeedback) {
    const prev = await tx.query<Row>(
      `SELECT ${COLUMNS} FROM job_feedback WHERE job_id = $1 AND source = $2 FOR UPDATE`,
      [f.job_id, f.source],
    );
    const r = await tx.query<Row>(
      `INSERT INTO job_feedback (job_id, source, verdict, note, given_by, given_at)
       VALUES ($1, $2, $3, $4, $5, now())
       ON CONFLICT (job_id, source) DO UPDATE SET verdict = EXCLUDED.verdict,
         note = EXCLUDED.note, given_by = EXCLUDED.given_by, given_at = EXCLUDED.given_at,
         held = NULL
       RETURNING ${COLUMNS}`,
      [f.job_id, f.source, f.verdict, f.note, f.by],
    );
    if (f.source === 'analyst' && f.by !== null && f.rank !== undefined) {
      // the user's own latest label of the job (a label forgotten before counts again)
      await tx.query(
        `INSERT INTO feedback_labels (job_id, given_by, rank, verdict, given_at)
         VALUES ($1, $2, $3, $4, now())
         ON CONFLICT (job_id, given_by) DO UPDATE SET rank = EXCLUDED.rank,
           verdict = EXCLUDED.verdict, given_at = EXCLUDED.given_at, forgotten = false`,
        [f.job_id, f.by, f.rank, f.verdict],
      );
    }
    if (f.source === 'analyst') {
      await tx.query(`DELETE FROM job_terms WHERE kind = 'fb' AND job_id = $1`, [f.job_id]);
      const values: string[] = [f.verdict];
      if (f.job_is_phishing !== null && f.job_is_phishing !== (f.verdict === 'phishing')) {
        values.push('disagrees');
      }
      await tx.query(
        `INSERT INTO job_terms (kind, value, created_at, job_id)
         SELECT 'fb', v, j.created_at, j.job_id FROM jobs j, unnest($2::text[]) v
         WHERE j.job_id = $1 ON CONFLICT DO NOTHING`,
        [f.job_id, values],
      );
    }
    const row = r.rows[0];
    if (!row) throw new Error('feedback was not stored');
    return { feedback: toFeedback(row), previous: prev.rows[0] ? toFeedback(prev.rows[0]) : null };
  }

  return {
    async get(jobId, source = 'analyst') {
      const r = await sql.query<Row>(
        `SELECT ${COLUMNS} FROM job_feedback WHERE job_id = $1 AND source = $2`,
        [jobId, source],
        'feedback_get',
      );
      return r.rows[0] ? toFeedback(r.rows[0]) : null;
    },
    give(f, tx) {
      return tx ? give(tx, f) : sql.transaction((t) => give(t, f));
    },
    async markLearned(jobId, expected, label) {
      const r = await sql.query(
        `UPDATE job_feedback SET learned = $3
         WHERE job_id = $1 AND source = 'analyst' AND learned IS NOT DISTINCT FROM $2`,
        [jobId, expected, label],
      );
      return r.rowCount === 1;
    },
    async unlearned(limit) {
      const r = await sql.query<Row>(
        `SELECT ${COLUMNS} FROM job_feedback
         WHERE source = 'analyst' AND learned IS DISTINCT FROM verdict AND held IS NULL
           AND NOT EXISTS (SELECT 1 FROM jobs j
                           WHERE j.job_id = job_feedback.job_id AND j.body_purged_at IS NOT NULL)
         ORDER BY given_at LIMIT $1`,
        [limit],
      );
      return r.rows.map(toFeedback);
    },
    async lockForLearning(jobId) {
      const r = await sql.query<{
        verdict: FeedbackVerdict;
        learned: FeedbackVerdict | null;
        learned_by: string | null;
        email: unknown;
      }>(
        // a job whose body retention purged has only a stub left: nothing to learn or unlearn from
        `SELECT f.verdict, f.learned, f.learned_by, CASE WHEN j.body_purged_at IS NULL THEN j.email END AS email
         FROM job_feedback f JOIN jobs j ON j.job_id = f.job_id
         WHERE f.job_id = $1 AND f.source = 'analyst' FOR UPDATE OF f`,
        [jobId],
      );
      return r.rows[0] ?? null;
    },
    async teachers() {
      const r = await sql.query<{
        user: string;
        labels: string;
        phishing: string;
        legitimate: string;
        disputed: string;
        capped: string;
        forgotten: string;
        last_at: unknown;
      }>(
        `WITH u AS (
           SELECT given_by AS "user" FROM feedback_labels
           UNION SELECT learned_by FROM job_feedback WHERE learned_by IS NOT NULL)
         SELECT u."user",
           (SELECT count(*) FROM feedback_labels l WHERE l.given_by = u."user") AS labels,
           (SELECT count(*) FROM job_feedback f WHERE f.source = 'analyst'
              AND f.learned_by = u."user" AND f.learned = 'phishing') AS phishing,
           (SELECT count(*) FROM job_feedback f WHERE f.source = 'analyst'
              AND f.learned_by = u."user" AND f.learned = 'legitimate') AS legitimate,
           (SELECT count(*) FROM feedback_labels l JOIN job_feedback f
              ON f.job_id = l.job_id AND f.source = 'analyst'
              WHERE l.given_by = u."user" AND NOT l.forgotten
                AND f.learned_by IS DISTINCT FROM u."user"
                AND (f.held IS DISTINCT FROM 'capped')) AS disputed,
           (SELECT count(*) FROM feedback_labels l JOIN job_feedback f
              ON f.job_id = l.job_id AND f.source = 'analyst'
              WHERE l.given_by = u."user" AND f.held = 'capped') AS capped,
           (SELECT count(*) FROM feedback_labels l
              WHERE l.given_by = u."user" AND l.forgotten) AS forgotten,
           (SELECT max(given_at) FROM feedback_labels l WHERE l.given_by = u."user") AS last_at
         FROM u ORDER BY 3 DESC, 4 DESC, 1`,
      );
      return r.rows.map((x) => ({
        user: x.user,
        labels: Number(x.labels),
        learned: { phishing: Number(x.phishing), legitimate: Number(x.legitimate) },
        held: { outvoted: Number(x.disputed), capped: Number(x.capped) },
        forgotten: Number(x.forgotten),
        last_at: x.last_at === null ? null : iso(x.last_at),
      }));
    },
    async forget(user) {
      const r = await sql.query<{ job_id: string }>(
        `WITH f AS (UPDATE feedback_labels SET forgotten = true WHERE given_by = $1
                    RETURNING job_id)
         SELECT job_id FROM f
         UNION SELECT job_id FROM job_feedback WHERE source = 'analyst' AND learned_by = $1`,
        [user],
      );
      return r.rows.map((x) => x.job_id);
    },
  };
}
