import type { SqlClient } from './types.ts';

/**
 * The retention purge's statements (issue 15; docs/security.md "What is stored and for how long").
 * Each call is one bounded batch: a key subselect with a LIMIT picks the rows through an index
 * (migration 010), one statement changes them, so no call holds a lock for long and a large purge
 * is many short transactions. The caller loops until a batch comes back short.
 */
export interface RetentionRepository {
  /**
   * Replaces the stored Email of up to `limit` finished jobs created before `before`, oldest
   * first, by a stub (trawl_purged_email: headers without raw_headers, attachment metadata, an
   * empty body) and sets `body_purged_at`, taking no more rows than fit in `maxBytes` of stored
   * Email (default 64 MiB; at least one). Verdict, evidence and trace stay. Answers how many: 0
   * when none is left.
   */
  purgeBodies(before: Date, limit: number, maxBytes?: number): Promise<number>;
  /**
   * Deletes up to `limit` finished jobs created before `before`, oldest first, with their search
   * terms (`job_terms`; rows of tables that reference `jobs` with ON DELETE CASCADE go with them).
   * Answers the deleted job ids.
   */
  deleteJobs(before: Date, limit: number): Promise<string[]>;
  /**
   * Walks the sender history by address, `limit` rows from after `after` (null: the start), and
   * deletes those last seen before `before`. Answers how many it deleted and where to go on from
   * (null: the walk is over).
   */
  pruneSenders(
    before: Date,
    after: string | null,
    limit: number,
  ): Promise<{ deleted: number; next: string | null }>;
  /** Deletes up to `limit` refresh tokens that expired before `before`; answers how many. */
  pruneRefreshTokens(before: Date, limit: number): Promise<number>;
}

const FINISHED = `status IN ('completed', 'failed')`;
/** Stored (compressed) Email bytes one body-purge statement reads at most, beyond its first row. */
const BODY_BATCH_BYTES = 64 * 1024 * 1024;

/** What the retention purge removes, in the store. */
export function createRetentionRepository(sql: SqlClient): RetentionRepository {
  return {
    async purgeBodies(before, limit, maxBytes = BODY_BATCH_BYTES) {
      // The inner subselect matches the partial index jobs_body_unpurged_idx; the running sum of
      // the stored (compressed) sizes keeps a batch of large messages to about maxBytes (the first
      // row always goes). Rows a concurrent purge already changed fail the re-checked WHERE.
      const r = await sql.query(
        `UPDATE jobs SET email = trawl_purged_email(email), body_purged_at = now()
         WHERE job_id IN (
           SELECT job_id FROM (
             SELECT job_id, pg_column_size(email) AS size,
               sum(pg_column_size(email)) OVER (
                 ORDER BY created_at, job_id ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW
               ) AS upto
             FROM (
               SELECT job_id, created_at, email FROM jobs
               WHERE body_purged_at IS NULL AND ${FINISHED} AND created_at < $1
               ORDER BY created_at LIMIT $2
             ) oldest
           ) sized
           WHERE upto - size < $3
         ) AND body_purged_at IS NULL`,
        [before, limit, maxBytes],
      );
      return r.rowCount;
    },

    async deleteJobs(before, limit) {
      const r = await sql.query<{ job_id: string }>(
        `WITH doomed AS (
           SELECT job_id, created_at FROM jobs
           WHERE ${FINISHED} AND created_at < $1
           ORDER BY created_at LIMIT $2
         ), terms AS (
           DELETE FROM job_terms t USING doomed d
           WHERE t.created_at = d.created_at AND t.job_id = d.job_id
         )
         DELETE FROM jobs j USING doomed d WHERE j.job_id = d.job_id
         RETURNING j.job_id::text AS job_id`,
        [before, limit],
      );
      return r.rows.map((row) => row.job_id);
    },

    async pruneSenders(before, after, limit) {
      const from = after === null ? '' : 'WHERE address > $3::text';
      const r = await sql.query<{
        last: string | null;
        seen: number | string;
        deleted: number | string;
      }>(
        `WITH page AS (
           SELECT address, last_seen FROM sender_history ${from}
           ORDER BY address LIMIT $2
         ), gone AS (
           DELETE FROM sender_history s USING page p
           WHERE s.address = p.address AND p.last_seen < $1 AND s.last_seen < $1
           RETURNING 1
         )
         SELECT (SELECT max(address) FROM page) AS last, (SELECT count(*) FROM page) AS seen,
           (SELECT count(*) FROM gone) AS deleted`,
        after === null ? [before, limit] : [before, limit, after],
      );
      const row = r.rows[0];
      const more = Number(row?.seen ?? 0) >= limit;
      return { deleted: Number(row?.deleted ?? 0), next: more ? (row?.last ?? null) : null };
    },

    async pruneRefreshTokens(before, limit) {
      const r = await sql.query(
        `DELETE FROM refresh_tokens WHERE token_hash IN (
           SELECT token_hash FROM refresh_tokens WHERE expires_at < $1
           ORDER BY expires_at LIMIT $2
         ) AND expires_at < $1`,
        [before, limit],
      );
      return r.rowCount;
    },
  };
}
