import type { AnalysisResult, Job, JobError, JobStatus, Trace } from '@trawl/contracts';
import { JOB_STATUSES, ROW_TERM_KINDS } from '@trawl/contracts';
import { badCursor } from '../errors.ts';
import { decodeCursor, encodeCursor } from './cursor.ts';
import { createJobClaimBatcher } from './job-claim-batch.ts';
import { createJobFinishBatcher } from './job-finish-batch.ts';
import { createJobInsertBatcher, type JobInsertBatchOptions } from './job-insert-batch.ts';
import { createJobRecordBatcher } from './job-record-batch.ts';
import type { JobPage, JobRepository } from './repositories.ts';
import {
  CURSOR_TS,
  HEADLINE_COLUMNS,
  type HeadlineRow,
  headlineFields,
  iso,
  isoOrNull,
  json,
  jsonParam,
  splitEvidence,
  withStoredEvidence,
} from './rows.ts';
import type { SqlClient } from './types.ts';

interface JobRow extends HeadlineRow {
  job_id: string;
  email_id: string;
  workflow_id: string;
  status: JobStatus;
  result: unknown;
  /** `jobs.evidence` (migration 011): the evidence as JSON text, or null. */
  evidence?: unknown;
  error: unknown;
  trace: unknown;
  created_at: unknown;
  started_at: unknown;
  completed_at: unknown;
  cursor_ts?: string;
}

const COLUMNS = `job_id, email_id, workflow_id, status, result, evidence, error, trace, created_at, started_at,
  completed_at, ${CURSOR_TS} AS cursor_ts, origin->'report' AS report, ${HEADLINE_COLUMNS('jobs')}`;

/** A listed job's result leaves its evidence out (one job's read has it): pages stay small. */
const LIST_COLUMNS = `j.job_id, j.email_id, j.workflow_id, j.status, j.result - 'evidence' AS result,
  j.error, j.trace,
  j.created_at, j.started_at, j.completed_at, j.origin->'report' AS report, ${HEADLINE_COLUMNS('j')},
  to_char(j.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS cursor_ts`;

/**
 * The row's side of a search kind read from `jobs` (ROW_TERM_KINDS, migration 015): its column,
 * the condition of its partial index (repeated so that the planner may use the index), and the
 * value as the column holds it. Only finished jobs match, as only they had terms of these kinds.
 */
const ROW_TERMS: Record<
  string,
  { column: string; finished: string; value?: (v: string) => unknown }
> = {
  phish: {
    column: 'search_phishing',
    finished: 'search_phishing IS NOT NULL',
    value: (v) => v === 'true',
  },
  threat: { column: 'search_threat', finished: 'search_threat IS NOT NULL' },
  action: { column: 'search_action', finished: 'search_action IS NOT NULL' },
  wf: { column: 'workflow_id', finished: `status IN ('completed', 'failed')` },
  by: { column: 'submitted_by', finished: `status IN ('completed', 'failed')` },
};

/** `kind:value` → [kind, value]. */
function splitTerm(t: string): [string, string] {
  const i = t.indexOf(':');
  return i <= 0 ? ['', t] : [t.slice(0, i), t.slice(i + 1)];
}

function toJob(r: JobRow): Job {
  const job: Job = {
    job_id: r.job_id,
    email_id: r.email_id,
    status: r.status,
    workflow: r.workflow_id,
    created_at: iso(r.created_at),
    started_at: isoOrNull(r.started_at),
    completed_at: isoOrNull(r.completed_at),
  };
  if (r.status === 'completed' && r.result !== null) {
    job.result = withStoredEvidence(json<AnalysisResult>(r.result), r.evidence);
  }
  if (r.status === 'failed' && r.error !== null) job.error = json<JobError>(r.error);
  if (r.trace !== null) job.trace = json<Trace>(r.trace);
  return Object.assign(job, headlineFields(r, job.result));
}

const UNFINISHED = `status IN ('queued', 'processing')`;

/** The ids of up to `limit` jobs in `status` whose `column` is before `cutoff`, oldest first. */
async function idsOlderThan(
  sql: SqlClient,
  status: 'processing' | 'queued',
  column: 'deadline_at' | 'created_at',
  cutoff: Date,
  limit: number,
): Promise<string[]> {
  const r = await sql.query<{ job_id: string }>(
    `SELECT job_id FROM jobs WHERE status = '${status}' AND ${column} < $1
     ORDER BY ${column} LIMIT $2`,
    [cutoff, limit],
  );
  return r.rows.map((x) => x.job_id);
}

export function createJobRepository(
  sql: SqlClient,
  opts: { insertBatch?: JobInsertBatchOptions } = {},
): JobRepository {
  const claim = createJobClaimBatcher(sql);
  return {
    // Group commit (ADR 005): creates of one event-loop turn share one INSERT statement.
    create: createJobInsertBatcher(sql, opts.insertBatch),
    // jobs analysed before they were stored (ADR 024): inserted finished, one statement a turn
    createFinished: createJobRecordBatcher(sql),

    async remove(jobId) {
      await sql.query('DELETE FROM jobs WHERE job_id = $1', [jobId]);
    },

    async get(jobId) {
      const r = await sql.query<JobRow>(`SELECT ${COLUMNS} FROM jobs WHERE job_id = $1`, [jobId]);
      return r.rows[0] ? toJob(r.rows[0]) : null;
    },

    async list(q): Promise<JobPage> {
      const limit = Math.max(1, Math.min(1000, Math.trunc(q.limit)));
      const f = q.filters ?? {};
      const status = q.status ?? f.status;
      const all = (f.terms ?? []).map(splitTerm);
      const terms = all.filter(([kind]) => !ROW_TERM_KINDS.has(kind));
      const params: unknown[] = [];
      const p = (v: unknown) => {
        params.push(v);
        return `$${params.length}`;
      };
      // With terms, the first one drives: its index is read newest first (kind, value, created_at,
      // job_id) and the others are point lookups on that key; without, the jobs' own indexes (those
      // of the row's kinds among them, migration 015).
      const first = terms[0];
      const t = first ? 't0' : 'j';
      const where: string[] = [];
      if (first) where.push(`t0.kind = ${p(first[0])}`, `t0.value = ${p(first[1])}`);
      // The row's kinds: on the jobs themselves when no term drives (their index is then read
      // newest first); behind a term, a probe of their index on the term's key, as a term's would
      // be (not a read of each candidate's row).
      const finished = new Set<string>();
      let x = 0;
      for (const [kind, raw] of all) {
        const row = ROW_TERMS[kind];
        if (!row) continue;
        const value = p(row.value ? row.value(raw) : raw);
        if (first) {
          x++;
          where.push(`EXISTS (SELECT 1 FROM jobs x${x} WHERE x${x}.${row.column} = ${value}
            AND x${x}.${row.finished} AND x${x}.created_at = t0.created_at
            AND x${x}.job_id = t0.job_id)`);
        } else {
          where.push(`j.${row.column} = ${value}`);
          finished.add(`j.${row.finished}`);
        }
      }
      where.push(...finished);
      terms.slice(1).forEach(([kind, value], i) => {
        where.push(`EXISTS (SELECT 1 FROM job_terms t${i + 1} WHERE t${i + 1}.kind = ${p(kind)}
          AND t${i + 1}.value = ${p(value)} AND t${i + 1}.created_at = ${t}.created_at
          AND t${i + 1}.job_id = ${t}.job_id)`);
      });
      if (status !== undefined) where.push(`j.status = ${p(status)}`);
      if (f.email_id !== undefined) where.push(`j.email_id = ${p(f.email_id)}`);
      if (f.no_feedback) {
        where.push(`NOT EXISTS (SELECT 1 FROM job_feedback fb WHERE fb.job_id = ${t}.job_id
          AND fb.source = 'analyst')`);
      }
      if (f.since !== undefined) where.push(`${t}.created_at >= ${p(f.since)}::timestamptz`);
      if (f.until !== undefined) where.push(`${t}.created_at < ${p(f.until)}::timestamptz`);
      if (q.cursor !== undefined) {
        const [ts, id] = decodeCursor(q.cursor, 2) as [string, string];
        if (Number.isNaN(Date.parse(ts)) || !/^[0-9a-f-]{36}$/i.test(id)) {
          throw badCursor();
        }
        where.push(`(${t}.created_at, ${t}.job_id) < (${p(ts)}::timestamptz, ${p(id)}::uuid)`);
      }
      const from = first ? 'job_terms t0 JOIN jobs j ON j.job_id = t0.job_id' : 'jobs j';
      const r = await sql.query<JobRow>(
        `SELECT ${LIST_COLUMNS} FROM ${from}
         ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
         ORDER BY ${t}.created_at DESC, ${t}.job_id DESC LIMIT ${p(limit + 1)}`,
        params,
      );
      const rows = r.rows.slice(0, limit);
      const last = rows[rows.length - 1];
      return {
        items: rows.map(toJob),
        next_cursor:
          r.rows.length > limit && last
            ? encodeCursor([last.cursor_ts as string, last.job_id])
            : null,
      };
    },

    async markProcessing(jobId, deadlineAt, configVersion) {
      const r = await sql.query(
        `UPDATE jobs SET status = 'processing', started_at = now(), deadline_at = $2,
           attempts = attempts + 1, config_version = COALESCE($3, config_version)
         WHERE job_id = $1 AND ${UNFINISHED} RETURNING job_id`,
        [jobId, deadlineAt, configVersion ?? null],
      );
      return r.rowCount === 1;
    },

    // Group commit (ADR 007): claims and finishes of one event-loop turn share one statement each.
    claim: (jobId, deadlineAt, configVersion) => claim({ jobId, deadlineAt, configVersion }),
    finish: createJobFinishBatcher(sql),

    async complete(jobId, result: AnalysisResult, trace: Trace) {
      const stored = splitEvidence(result);
      const r = await sql.query(
        `UPDATE jobs SET status = 'completed', result = $2::jsonb, evidence = $4, trace = $3::jsonb,
           error = NULL, completed_at = now(), started_at = COALESCE(started_at, now())
         WHERE job_id = $1 AND ${UNFINISHED} RETURNING job_id`,
        [jobId, stored.result, jsonParam(trace), stored.evidence],
      );
      return r.rowCount === 1;
    },

    async fail(jobId, error: JobError, trace?: Trace) {
      const r = await sql.query(
        `UPDATE jobs SET status = 'failed', error = $2::jsonb, trace = COALESCE($3::jsonb, trace),
           completed_at = now()
         WHERE job_id = $1 AND ${UNFINISHED} RETURNING job_id`,
        [jobId, jsonParam(error), jsonParam(trace)],
      );
      return r.rowCount === 1;
    },

    findStuck(now, graceMs, limit) {
      return idsOlderThan(
        sql,
        'processing',
        'deadline_at',
        new Date(now.getTime() - graceMs),
        limit,
      );
    },

    findUndispatched(now, maxQueuedMs, limit) {
      const cutoff = new Date(now.getTime() - maxQueuedMs);
      return idsOlderThan(sql, 'queued', 'created_at', cutoff, limit);
    },

    async countByStatus() {
      const r = await sql.query<{ status: JobStatus; n: number }>(
        'SELECT status, count(*)::int AS n FROM jobs GROUP BY status',
      );
      const out = Object.fromEntries(JOB_STATUSES.map((s) => [s, 0])) as Record<JobStatus, number>;
      for (const row of r.rows) out[row.status] = Number(row.n);
      return out;
    },
  };
}
