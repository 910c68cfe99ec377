import type { ClaimedJob } from './repositories.ts';
import {
  createJobStatementBatcher,
  memoByRows,
  preparedName,
  valuesRows,
} from './statement-batch.ts';
import type { SqlClient } from './types.ts';

export interface JobClaim {
  jobId: string;
  deadlineAt: Date;
  configVersion: string | undefined;
}

/** queued|processing → processing for n jobs, answering each claimed job's Email. */
const claimSql = memoByRows(
  (
    n,
  ) => `UPDATE jobs AS j SET status = 'processing', started_at = now(), deadline_at = v.deadline_at,
      attempts = j.attempts + 1, config_version = COALESCE(v.config_version, j.config_version)
    FROM (VALUES ${valuesRows(n, ['uuid', 'timestamptz', 'text'])}) AS v (job_id, deadline_at, config_version)
    WHERE j.job_id = v.job_id AND j.status IN ('queued', 'processing')
    RETURNING j.job_id, j.email`,
);

function paramsOf(claims: JobClaim[]): unknown[] {
  const params: unknown[] = [];
  for (const c of claims) params.push(c.jobId, c.deadlineAt, c.configVersion ?? null);
  return params;
}

type Row = { job_id: string; email: unknown };

/**
 * `jobs.claim` with group commit: claims of one event-loop turn share one
 * `UPDATE … FROM (VALUES …) RETURNING job_id, email`; a job that is finished or unknown is not
 * returned and its caller gets null, as from a claim of its own.
 */
export function createJobClaimBatcher(sql: SqlClient, maxRows = 64) {
  return createJobStatementBatcher<JobClaim, ClaimedJob>((c) => c.jobId, {
    maxRows,
    async many(claims) {
      const n = claims.length;
      const r = await sql.query<Row>(claimSql(n), paramsOf(claims), preparedName('job_claim', n));
      const out = new Map<string, ClaimedJob | null>();
      for (const row of r.rows) out.set(String(row.job_id).toLowerCase(), { email: row.email });
      return out;
    },
  });
}
